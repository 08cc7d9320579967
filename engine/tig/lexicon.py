"""Word lists for the offline rule-based atom extractor and for normalised atom keys.

Small closed-class lists (determiners, prepositions, pronouns, auxiliaries), an open list of verbs common in
visual ideation with their inflections, audience nouns, and the lighting / colour / texture / composition
vocabulary that App. G.2 tells the extractor to leave out unless it is central. No tagger, no model: the
offline extractor is a labelled fallback, so these lists favour predictable behaviour over coverage.
"""

from __future__ import annotations

import re

__all__ = [
    "AUDIENCE_CUES",
    "AUDIENCE_NOUNS",
    "AUXILIARIES",
    "CONJUNCTIONS",
    "DETERMINERS",
    "FORMAT_NOUNS",
    "MEANING_CUES",
    "MECHANISM_PARTICLES",
    "PREPOSITIONS",
    "PRONOUNS",
    "PURPOSE_VERBS",
    "STYLE_MODIFIERS",
    "STYLE_NOUNS",
    "TRANSFORM_VERBS",
    "VERB_FORMS",
    "is_adverb",
    "is_ambiguous_noun",
    "is_gerund",
    "lemma",
    "singular",
]

DETERMINERS = frozenset(
    """a an the this that these those its their his her our your my each every some any no another such both
        either neither all many several few much more most other one two three four five six seven eight nine
        ten dozen half single""".split()
)
PREPOSITIONS = frozenset(
    """of in on at with from into onto over under through across between behind beneath below above around
        inside within along beside besides toward towards against like by for to without amid amidst among
        amongst upon via during after before beyond near past throughout underneath out off up down about per
        versus atop""".split()
)
CONJUNCTIONS = frozenset(
    """and or but nor yet so while whereas although though because since if unless until when where which who
        whom whose that than then whether as""".split()
)
PRONOUNS = frozenset(
    """it they them he she we you i itself themselves himself herself something everything someone everyone
        anything nothing what there here""".split()
)
AUXILIARIES = frozenset(
    """is are was were be been being am has have had do does did can could will would shall should may might
        must not never also just only even still almost nearly very quite rather too gently slowly softly
        quietly subtly""".split()
)
# Nouns that end in -ly or -ing and must not be read as adverbs or gerunds.
_LY_NOUNS = frozenset(
    """family butterfly jelly belly lily fly ally rally italy anomaly assembly melancholy""".split()
)
_ING_NOUNS = frozenset(
    """building painting ceiling morning evening string ring wing king thing spring clothing ending feeling
        meaning lightning drawing opening offering sibling pudding wedding darling swing sling ping awning
        railing stocking shilling seedling sapling duckling earring bedding stuffing icing frosting wiring
        plumbing scaffolding lettering engraving etching carving sewing""".split()
)

# Verbs whose surface form signals a transformation or implementation move (mechanism atoms).
TRANSFORM_VERBS = frozenset(
    """transform turn become morph merge blend fuse combine dissolve melt emerge unfold unravel weave fold
        stitch split divide fragment shatter crack break replace swap invert reverse stack layer build form
        shape compose assemble construct carve sculpt etch knit braid twist bend stretch peel crumble erode
        decay fade vanish grow sprout bloom blossom spill pour drip flow leak overflow burst explode erupt
        shrink expand inflate collapse fracture mutate evolve rise sink float orbit spiral wrap entangle
        tangle interlock intertwine cut slice tear rip mend repair stitch graft hybridize hybridise
        metamorphose liquefy freeze thaw crystallize crystallise pixelate glitch distort warp mirror reflect
        refract echo project cast trace map chart connect link join bridge hatch nest bury uproot rebuild
        recycle repurpose reassemble dismantle disassemble unzip unwrap unspool unroll unfurl open close""".split()
)
# Other verbs that head a clause; they end noun phrases but do not make mechanism atoms.
_PLAIN_VERBS = frozenset(
    """show depict feature represent portray illustrate display present use make create hold carry contain
        surround frame fill cover hang sit stand lie rest fly walk run reach glow shine light hide reveal
        embrace cradle protect guard shelter feed nourish water look seem appear serve act let allow help
        invite encourage promote celebrate honor honour express evoke convey suggest symbolize symbolise
        signify emphasize emphasise highlight remind capture embody stand mark lead give take keep bring draw
        paint place set put sit lay face meet touch watch see read write tell ask""".split()
)
# Verbs that open a purpose after "to" ("to guide lost commuters home"); also read as plain verbs.
PURPOSE_VERBS = frozenset(
    """guide inspire remind show celebrate evoke convey suggest express highlight emphasize emphasise invite
        encourage promote signal communicate attract reassure calm comfort energize energise motivate welcome
        warn educate teach inform engage capture honor honour mourn question challenge provoke depict
        represent illustrate symbolize symbolise reflect make help let give bring draw spark ignite awaken
        dramatize dramatise visualize visualise personify embody sell advertise announce launch market raise
        protest commemorate memorialize memorialise critique satirize satirise explain reveal""".split()
)
# Nouns that share a base form with a verb above; their base form and -s form are read as nouns unless the
# next word opens a noun phrase (determiner) or a path preposition, as in "steam forms a skyline".
_NOUN_VERB_AMBIGUOUS = frozenset(
    """form shape frame bridge map plant light water mirror echo layer stack spiral twist bloom sprout crack
        split fold cast trace chart link nest cut mark face watch set fly stand rest guard shelter turn break
        leak burst tear""".split()
)

_IRREGULAR = {
    "become": ("became", "becomes", "becoming"),
    "grow": ("grew", "grown", "grows", "growing"),
    "rise": ("rose", "risen", "rises", "rising"),
    "hold": ("held", "holds", "holding"),
    "break": ("broke", "broken", "breaks", "breaking"),
    "weave": ("wove", "woven", "weaves", "weaving"),
    "freeze": ("froze", "frozen", "freezes", "freezing"),
    "sink": ("sank", "sunk", "sinks", "sinking"),
    "burst": ("bursts", "bursting"),
    "cast": ("casts", "casting"),
    "cut": ("cuts", "cutting"),
    "split": ("splits", "splitting"),
    "set": ("sets", "setting"),
    "put": ("puts", "putting"),
    "shrink": ("shrank", "shrunk", "shrinks", "shrinking"),
    "tear": ("tore", "torn", "tears", "tearing"),
    "fly": ("flew", "flown", "flies", "flying"),
    "lie": ("lay", "lain", "lies", "lying"),
    "draw": ("drew", "drawn", "draws", "drawing"),
    "make": ("made", "makes", "making"),
    "take": ("took", "taken", "takes", "taking"),
    "give": ("gave", "given", "gives", "giving"),
    "bring": ("brought", "brings", "bringing"),
    "keep": ("kept", "keeps", "keeping"),
    "lead": ("led", "leads", "leading"),
    "see": ("saw", "seen", "sees", "seeing"),
    "run": ("ran", "runs", "running"),
    "sit": ("sat", "sits", "sitting"),
    "stand": ("stood", "stands", "standing"),
    "hang": ("hung", "hangs", "hanging"),
    "shine": ("shone", "shines", "shining"),
    "build": ("built", "builds", "building"),
    "bend": ("bent", "bends", "bending"),
    "spill": ("spilt", "spilled", "spills", "spilling"),
    "write": ("wrote", "written", "writes", "writing"),
    "meet": ("met", "meets", "meeting"),
    "tell": ("told", "tells", "telling"),
    "read": ("reads", "reading"),
    "light": ("lit", "lights", "lighting"),
}


def _inflections(base: str) -> set[str]:
    if base in _IRREGULAR:
        return set(_IRREGULAR[base])
    forms = set()
    if base.endswith("e") and not base.endswith("ee"):
        forms |= {base + "s", base[:-1] + "ing", base + "d"}
    elif base.endswith("y") and len(base) > 2 and base[-2] not in "aeiou":
        forms |= {base[:-1] + "ies", base + "ing", base[:-1] + "ied"}
    elif base.endswith(("s", "sh", "ch", "x", "z")):
        forms |= {base + "es", base + "ing", base + "ed"}
    else:
        forms |= {base + "s", base + "ing", base + "ed"}
        # doubled final consonant after a single short vowel (cut -> cutting, map -> mapped, knit -> knitted)
        if len(base) >= 3 and base[-1] in "bdgmnprt" and base[-2] in "aeiou" and base[-3] not in "aeiou":
            forms |= {base + base[-1] + "ing", base + base[-1] + "ed"}
    return forms


VERB_FORMS: dict[str, str] = {}
for _base in sorted(TRANSFORM_VERBS | _PLAIN_VERBS | PURPOSE_VERBS):
    VERB_FORMS.setdefault(_base, _base)
    for _form in _inflections(_base):
        VERB_FORMS.setdefault(_form, _base)
for _noun in _ING_NOUNS:
    VERB_FORMS.pop(_noun, None)

# Path particles that belong to a mechanism ("melt into", "emerge from", "made of").
MECHANISM_PARTICLES = frozenset(
    """into from of out through across around over under up down apart away like as with onto together
        between beneath along inside within behind""".split()
)

# Cue phrases whose complement is a purpose atom. Meaning cues take the noun phrase that follows
# ("symbolising renewal" -> "renewal"); action cues keep their verb ("to celebrate resilience").
MEANING_CUES: tuple[str, ...] = (
    "as a metaphor for",
    "as a symbol of",
    "as a reminder of",
    "as a reminder that",
    "a metaphor for",
    "a symbol of",
    "a reminder of",
    "a reminder that",
    "metaphor for",
    "symbol of",
    "standing for",
    "stands for",
    "symbolizing",
    "symbolising",
    "symbolizes",
    "symbolises",
    "symbolize",
    "symbolise",
    "representing",
    "represents",
    "signifying",
    "signifies",
    "evoking",
    "evokes",
    "evoke",
    "conveying",
    "conveys",
    "convey",
    "suggesting",
    "suggests",
    "expressing",
    "expresses",
    "capturing",
    "captures",
    "embodying",
    "embodies",
    "celebrating",
    "celebrates",
    "honoring",
    "honouring",
    "emphasizing",
    "emphasising",
    "highlighting",
    "highlights",
    "reminding viewers of",
    "reminding viewers that",
    "reminding us of",
    "reminding us that",
    "reminding",
    "so that",
    "in order to",
)
# "to" followed by a verb also opens a purpose ("to show that coffee fuels creativity").

# Explicit audience cues; the following noun phrase is an audience only if its head is an audience noun.
AUDIENCE_CUES: tuple[str, ...] = (
    "aimed at",
    "targeting",
    "targeted at",
    "targeted to",
    "designed for",
    "appealing to",
    "intended for",
    "tailored to",
    "tailored for",
    "made for",
    "for",
)
AUDIENCE_NOUNS = frozenset(
    """audience audiences child children kid kids teen teens teenager teenagers adult adults student students
        parent parents family families commuter commuters traveller travellers traveler travelers tourist
        tourists customer customers consumer consumers reader readers viewer viewers patient patients senior
        seniors elderly retiree retirees worker workers professional professionals gamer gamers fan fans
        visitor visitors shopper shoppers user users employee employees athlete athletes runner runners
        developer developers designer designers artist artists musician musicians resident residents citizen
        citizens voter voters investor investors beginner beginners newcomer newcomers learner learners
        toddler toddlers baby babies mother mothers father fathers couple couples women men girls boys
        millennials boomers collectors commuters subscribers members volunteers donors nurses doctors teachers
        farmers engineers scientists researchers children's""".split()
)

# App. G.2: leave out lighting, colour, texture and composition unless central. A noun phrase headed by one
# of these nouns is dropped (unless it is the only phrase); these modifiers are stripped from other phrases.
STYLE_NOUNS = frozenset(
    """light lights lighting glow glows shadow shadows hue hues tone tones tint tints palette palettes colour
        colours color colors colouring coloring texture textures composition compositions contrast saturation
        gradient gradients backdrop background backgrounds foreground layout framing bokeh grain sheen
        highlights lens perspective angle symmetry vignette atmosphere mood ambience ambiance""".split()
)
STYLE_MODIFIERS = frozenset(
    """soft warm cool cold muted glowing dim dimly bright brightly vibrant pastel matte glossy grainy
        saturated desaturated moody dramatic cinematic subtle gentle luminous radiant hazy misty shadowy
        textured smooth rough minimalist minimal centered centred symmetrical symmetric asymmetrical high-
        contrast low-key high-key golden-hour""".split()
)
# Nouns naming the deliverable rather than its content ("a poster of ...", "an illustration where ...").
FORMAT_NOUNS = frozenset(
    """poster posters image images scene scenes illustration illustrations design designs campaign campaigns
        logo logos ad ads advertisement advertisements billboard billboards mural murals series photograph
        photographs photo photos artwork artworks piece pieces visual visuals concept concepts idea ideas
        depiction depictions view views shot shots close-up closeup triptych diptych collage collages
        composition picture pictures graphic graphics print prints cover covers spread banner banners frame-
        filling vignette rendering render portrait portraits""".split()
)

_ING = re.compile(r"^[a-z]{3,}ing$")


def lemma(word: str) -> str:
    """Verb lemma for inflected forms in the lexicon; any other word is returned unchanged."""
    return VERB_FORMS.get(word, word)


def is_adverb(word: str) -> bool:
    """-ly words other than the listed -ly nouns."""
    return len(word) > 4 and word.endswith("ly") and word not in _LY_NOUNS


def is_gerund(word: str) -> bool:
    """-ing words other than the listed -ing nouns (read as verb forms)."""
    return bool(_ING.match(word)) and word not in _ING_NOUNS


def is_ambiguous_noun(word: str) -> bool:
    """A base or -s form that is both a noun and a verb ("form", "forms", "bridge")."""
    base = VERB_FORMS.get(word)
    return base in _NOUN_VERB_AMBIGUOUS and (word == base or word in {base + "s", base + "es"})


_IRREGULAR_PLURALS = {
    "leaves": "leaf",
    "wolves": "wolf",
    "knives": "knife",
    "lives": "life",
    "wives": "wife",
    "shelves": "shelf",
    "halves": "half",
    "loaves": "loaf",
    "thieves": "thief",
    "calves": "calf",
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "mice": "mouse",
    "geese": "goose",
    "feet": "foot",
    "teeth": "tooth",
    "cacti": "cactus",
    "fungi": "fungus",
    "data": "data",
    "media": "media",
    "series": "series",
    "species": "species",
    "news": "news",
}
_NO_SINGULAR_SUFFIXES = ("ss", "us", "is", "ous", "ics", "ness", "ing")


def singular(word: str) -> str:
    """A plain English singular for noun keys ("leaves" -> "leaf", "cities" -> "city", "glass" stays)."""
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if len(word) <= 3 or word.endswith(_NO_SINGULAR_SUFFIXES):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word
