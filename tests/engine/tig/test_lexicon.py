from engine.tig.lexicon import VERB_FORMS, is_adverb, is_ambiguous_noun, is_gerund, lemma, singular


def test_singular_handles_regular_irregular_and_invariant_nouns():
    assert [singular(w) for w in ("cities", "boxes", "kites", "leaves", "children", "glass", "bus")] == [
        "city",
        "box",
        "kite",
        "leaf",
        "child",
        "glass",
        "bus",
    ]


def test_verb_forms_map_inflections_to_their_lemma():
    assert lemma("melting") == lemma("melts") == lemma("melted") == "melt"
    assert lemma("cutting") == "cut" and lemma("became") == "become" and lemma("woven") == "weave"


def test_words_outside_the_lexicon_are_their_own_lemma():
    assert lemma("lighthouse") == "lighthouse"


def test_ing_nouns_are_not_read_as_verbs():
    assert "building" not in VERB_FORMS and not is_gerund("painting")
    assert is_gerund("drifting")


def test_ly_nouns_are_not_adverbs():
    assert is_adverb("slowly") and not is_adverb("butterfly")


def test_noun_verb_words_are_flagged_only_in_base_and_s_forms():
    assert is_ambiguous_noun("bridge") and is_ambiguous_noun("forms")
    assert not is_ambiguous_noun("forming") and not is_ambiguous_noun("melt")
