"""The folded skeleton the identity check reads (annotation/identity_text.py): what folds, what separates,
where a name may start, end and run across a separator."""

from __future__ import annotations

import pytest

from annotation.identity_text import displayed_variants, skeleton


@pytest.mark.parametrize(("text", "expected"), [
    ("ＧＰＴ", "gpt"),                    # fullwidth (NFKC)
    ("𝐆𝐏𝐓", "gpt"),                       # mathematical bold (NFKC)
    ("GРТ", "gpt"),                        # Cyrillic capitals Er and Te: no small look-alike, own glyph
    ("gеmіnі", "gemini"),                  # Cyrillic small ie and i
    ("GEMІNI", "gemini"),                  # Cyrillic capital I is "I", not the "l" its glyph also resembles
    ("GΕΜΙΝΙ", "gemini"),                  # Greek capital Nu is "N" though its small form looks like "v"
    ("ΥΙ", "yi"),                          # Greek capital Upsilon is "Y" though its small form looks like "u"
    ("ϲlaude", "claude"),                  # Greek lunate sigma: folded before NFKD makes it a final sigma
    ("ϹLAUDE", "claude"),                  # its capital, which NFKD makes a capital sigma
    ("Ζeus", "zeus"),                      # Greek capital zeta
    ("cafe\u0301", "cafe"),                # combining acute accent
    ("d\u200be\u200dm\u00ado\u2060", "demo"),  # zero-width space, joiner, soft hyphen, word joiner
    ("o\u0663", "o3"),                     # Arabic-Indic digit three
    ("ᴅᴇᴍᴏ", "demo"),                      # small capitals (by their Unicode names)
    ("ɗøł", "dol"),                        # letters with a hook, a stroke (by their Unicode names)
    ("🅳🅴🅼🅾", "demo"),                      # negative squared capitals (by their Unicode names)
    ("ɐǝ", "ɐǝ"),                          # turned letters are other letters
])
def test_look_alikes_invisible_characters_and_marks_fold_away(text, expected):
    assert skeleton(text).chars == expected


def test_ascii_letters_and_digits_are_never_folded_into_each_other():
    assert skeleton("o1 Il0").chars == "o1il0"


@pytest.mark.parametrize("separator", [" ", "-", "_", ".", "/", "\u2011", "\u2013", "\u2014", "\u00a0", " - "])
def test_every_separator_run_is_one_gap(separator):
    folded = skeleton(f"demo{separator}atlas")
    assert folded.chars == "demoatlas" and folded.gaps == (4,)


def test_a_name_is_found_across_a_separator_only_where_the_name_has_a_break():
    name = skeleton("demo-atlas")
    assert skeleton("the demo atlas").contains(name)
    assert skeleton("the demoatlas").contains(name)
    assert not skeleton("we demo at las vegas").contains(skeleton("demo-atlas"))
    assert not skeleton("at las vegas").contains(skeleton("Atlas"))


def test_punctuation_without_whitespace_may_split_a_name_anywhere():
    assert skeleton("At-las and Ge.mi_ni").contains(skeleton("Atlas"))
    assert skeleton("At-las and Ge.mi_ni").contains(skeleton("Gemini"))
    assert not skeleton("at las vegas").contains(skeleton("Atlas"))  # whitespace only where the name breaks
    assert not skeleton("at-lasting").contains(skeleton("Atlas"))  # still whole words


def test_a_name_spelled_out_letter_by_letter_is_found():
    assert skeleton("by a.t.l.a.s").contains(skeleton("Atlas"))
    assert skeleton("d e m o atlas").contains(skeleton("demo-atlas"))


@pytest.mark.parametrize("text", ["co3", "o30", "Al2O3", "atlases", "demonstrate at last", "prodemo-atlases"])
def test_a_name_inside_a_longer_word_is_not_found(text):
    assert not any(skeleton(text).contains(skeleton(name)) for name in ("o3", "Atlas", "demo-atlas"))


def test_a_name_may_start_at_a_case_change_or_script_change_inside_a_word():
    assert skeleton("useDemoAtlas").contains(skeleton("demo atlas"))
    assert skeleton("我用GPT4o写").contains(skeleton("gpt-4o"))
    assert skeleton("我用通义千问写").contains(skeleton("通义千问"))


@pytest.mark.parametrize(("text", "name"), [("I am GPT4", "GPT"), ("llama3 wrote this", "Llama"), ("Claude3Opus", "Claude"),
                                            ("ChatGPT4o", "GPT"), ("Сlaude2", "Claude")])
def test_a_name_may_end_where_the_text_s_letters_turn_to_digits(text, name):
    # a version number written onto a family's name
    assert skeleton(text).contains(skeleton(name))


def test_a_name_does_not_start_where_digits_turn_to_letters():
    assert not skeleton("Al2O3 and 3llama").contains(skeleton("o3"))
    assert not skeleton("3llama").contains(skeleton("llama"))


def test_the_name_s_letter_digit_changes_are_its_breaks():
    assert skeleton("GPT 4 o").contains(skeleton("gpt4o"))


def test_a_right_to_left_override_is_read_as_displayed_too():
    stored = "x \u202esalta-omed\u202c y"
    assert displayed_variants(stored) == [stored, "x demo-atlas y"]
    assert displayed_variants("no override") == ["no override"]


def test_embeddings_inside_an_override_do_not_end_it_early():
    assert displayed_variants("\u202eab\u202bcd\u202cef")[1] == "fedcba"


def test_markup_is_read_as_rendered_too():
    assert displayed_variants("&#100;emo <b>at</b>las") == ["&#100;emo <b>at</b>las", "demo atlas"]
    assert displayed_variants("&#x202e;salta omed") == ["&#x202e;salta omed", "\u202esalta omed", "demo atlas"]
    assert displayed_variants("plain text") == ["plain text"]


def test_url_escapes_are_read_decoded_too():
    assert displayed_variants("see https://x.org/?m=%64emo%2Datlas") == ["see https://x.org/?m=%64emo%2Datlas",
                                                                     "see https://x.org/?m=demo-atlas"]
    assert displayed_variants("&#37;64emo") == ["&#37;64emo", "%64emo", "demo"]
    assert displayed_variants("100% sure, 50%off") == ["100% sure, 50%off"]


@pytest.mark.parametrize("text", ["Clau\nde", "Clau-\nde", "Gem\r\nini", "At\u2010\nlas"])
def test_a_name_split_across_a_line_break_is_found(text):
    # a line break inside a word (with or without the hyphen that marks a word carried to the next line)
    # reads as the one word on screen
    assert any(skeleton(f"As {text}, I propose").contains(skeleton(name)) for name in ("Claude", "Gemini", "Atlas"))


def test_a_line_break_between_whole_words_still_needs_the_name_s_break_or_a_spelling_out():
    assert not skeleton("a pale at\n las vegas").contains(skeleton("Atlas"))  # the next line is indented: two words
    assert not skeleton("at -\nlas").contains(skeleton("Atlas"))


@pytest.mark.parametrize(("text", "name"), [
    ("Cl4ude", "Claude"), ("C1aude", "Claude"), ("CIaude", "Claude"),  # digit or capital I for a letter
    ("СІаudе", "Claude"),                                              # Cyrillic: С І а е fold to "CIaude"
    ("G3m1n1", "Gemini"), ("L1ama 3", "Llama 3"), ("GPT-40", "GPT-4o"), ("6PT-4o", "GPT-4o"),
    ("dem0-at1as", "demo-atlas"), ("M1STR4L", "Mistral"),
])
def test_a_name_in_leetspeak_or_with_capital_i_for_l_is_found(text, name):
    # what reads as the name on screen: digits and a capital I standing in for letters, at most half of them
    assert skeleton(f"As {text}, I propose").contains(skeleton(name))


@pytest.mark.parametrize(("text", "name"), [
    ("01", "o1"), ("03", "o3"), ("Al2O3", "o3"),          # short names: no stand-ins at all
    ("4tl45", "Atlas"),                                   # more than half the letters stood in for
    ("Ciaude", "Claude"),                                 # a small i does not look like an l
    ("GPT-41", "GPT-4o"), ("GPT-A0", "GPT-4o"),           # the name's own digits are never stood in for
    ("Cl4udes", "Claude"),                                # still whole words only
])
def test_stand_ins_stay_within_bounds(text, name):
    assert not skeleton(f"As {text}, I propose").contains(skeleton(name))


def test_the_stand_in_search_finds_exactly_where_the_stand_in_pattern_matches():
    # the one-character-per-letter prefilter (str.find) must not miss a place the exact pattern matches
    import random
    import re

    from annotation.identity_text import _LOOSE, STAND_INS, _stand_in_pattern

    rng = random.Random(7)
    for name in ("Claude", "Gemini", "Atlas", "gpt-4o", "Llama", "Sonnet"):
        folded = skeleton(name)
        pattern = _stand_in_pattern(folded.chars)
        for _ in range(300):
            letters = [rng.choice(STAND_INS.get(c.lower(), "") + c + c.upper()) if c.isalpha() else c
                       for c in folded.chars]
            text = skeleton(f"x{rng.choice(['', 'i', '1', 'I'])}{''.join(letters)} word")
            want = [m.start() for m in re.finditer(f"(?=({pattern.pattern}))", text.cased)]
            loose_name = folded.chars.translate(_LOOSE)
            got = [p for p in range(len(text.loose))
                   if text.loose.startswith(loose_name, p) and pattern.match(text.cased, p)]
            assert got == want, (name, text.cased)
