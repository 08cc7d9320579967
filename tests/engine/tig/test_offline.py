from engine.tig.atoms import ATOM_TYPES, MAX_ATOMS, RELATION_TYPES, IdeaRecord
from engine.tig.offline import OFFLINE_EXTRACTOR_NAME, OfflineExtractor


def extract(text):
    return OfflineExtractor().extract(IdeaRecord("m1", 1, text, task="t1"))


def typed(text):
    return {(a.type, a.label) for a in extract(text).atoms}


def test_records_are_labelled_as_the_offline_fallback():
    ext = extract("A kite dissolving into a flock of swallows.")
    assert ext.extractor == OFFLINE_EXTRACTOR_NAME == "offline-rules"
    assert (ext.response_id, ext.model, ext.task, ext.sample) == ("t1:m1:1", "m1", "t1", 1)


def test_subject_mechanism_object_and_purpose_are_typed():
    atoms = typed("A subway map whose stations collapse into missed deadlines, symbolising burnout.")
    assert ("concept", "subway map") in atoms
    assert ("mechanism", "collapse into missed deadlines") in atoms
    assert ("motif", "missed deadlines") in atoms
    assert ("purpose", "burnout") in atoms


def test_x_as_y_is_the_concept():
    atoms = typed("The city as a living organism, its streets pulsing like veins.")
    assert ("concept", "city as living organism") in atoms


def test_a_format_noun_is_not_the_concept():
    atoms = typed("A poster of a coffee cup whose steam forms a city skyline.")
    assert ("concept", "coffee cup") in atoms
    assert not any("poster" in label for _, label in atoms)


def test_to_verb_opens_a_purpose():
    atoms = typed("A lighthouse beam cutting through fog to guide lost sailors home.")
    assert ("purpose", "guide lost sailors home") in atoms


def test_audience_needs_an_explicit_cue_and_an_audience_noun():
    assert ("audience", "busy commuters") in typed(
        "A coffee cup melting into a train, aimed at busy commuters."
    )
    assert not any(t == "audience" for t, _ in typed("Plants and leaves for calmness."))
    assert not any(t == "audience" for t, _ in typed("A poster showing commuters on a train."))


def test_lighting_and_colour_phrases_are_left_out_unless_alone():
    atoms = typed("A clock melting into sand under warm golden light with a muted palette.")
    assert not any(label in ("light", "golden light", "palette") for _, label in atoms)
    assert typed("Warm golden light.") == {("concept", "golden light")}


def test_style_modifiers_are_stripped_from_phrases():
    assert ("concept", "green leaves") in typed("Soft green leaves sprouting from an old typewriter.")


def test_never_more_than_seven_atoms():
    text = (
        "A kite, a violin, a teacup, a beehive, a compass, a windmill, a harp, a quilt and a key "
        "melting into a river, symbolising memory, to celebrate patience."
    )
    atoms = extract(text).atoms
    assert len(atoms) == MAX_ATOMS
    assert {a.type for a in atoms} >= {"concept", "mechanism", "purpose", "motif"}


def test_empty_core_idea_has_no_atoms():
    assert extract("").atoms == []


def test_non_ascii_text_is_extracted():
    atoms = typed("Un café crème dissolving into a château, symbolising nostalgie.")
    assert ("concept", "un café crème") in atoms
    assert ("purpose", "nostalgie") in atoms


def test_relations_join_atoms_of_the_right_types():
    ext = extract(
        "A subway map whose stations collapse into missed deadlines, symbolising burnout, for commuters."
    )
    types = [a.type for a in ext.atoms]
    allowed = {
        "supports": ("motif", "purpose"),
        "realises": ("mechanism", "concept"),
        "composes": ("motif", "concept"),
        "transforms": ("mechanism", "motif"),
        "addresses": (None, "audience"),
    }
    assert ext.relations
    for rel in ext.relations:
        assert rel.relation in RELATION_TYPES
        src, dst = allowed[rel.relation]
        assert src in (None, types[rel.source]) and types[rel.target] == dst
    assert any(r.relation == "realises" for r in ext.relations)
    assert any(r.relation == "addresses" for r in ext.relations)


def test_every_atom_type_is_from_the_schema():
    ext = extract("A violin folding into a barn owl, symbolising devotion, designed for young readers.")
    assert {a.type for a in ext.atoms} <= set(ATOM_TYPES)


def test_atoms_are_unique_per_type_within_a_response():
    ext = extract("A kite and kites and the kite.")
    assert len(ext.atoms) == 1
