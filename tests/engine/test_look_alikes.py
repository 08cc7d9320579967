"""The look-alike fold shared by the blinding and the catalogue's identity of model names."""

from __future__ import annotations

import pytest

from engine.look_alikes import look_alike, look_alike_any_case


@pytest.mark.parametrize("char,ascii_letter", [("\u0430", "a"), ("\u0422", "T"), ("\u03bf", "o")])
def test_a_letter_folds_to_the_ascii_letter_it_is_drawn_like_in_its_own_case(char, ascii_letter):
    assert look_alike(char) == ascii_letter


@pytest.mark.parametrize("small,capital", [("\u0442", "\u0422"), ("\u043a", "\u041a"), ("\u0432", "\u0412")])
def test_both_cases_of_a_letter_fold_alike_when_only_one_case_has_a_look_alike(small, capital):
    # Cyrillic te, ka, ve: the capitals are drawn like T, K, B; a case-blind name fold must fold the small ones too
    assert look_alike(small) == small
    assert look_alike_any_case(small).upper() == look_alike_any_case(capital)


def test_ascii_and_letters_imitating_nothing_are_kept():
    assert [look_alike_any_case(c) for c in "lI1\u6587\u0436"] == list("lI1\u6587\u0436")


def _case_split_letters() -> dict[str, frozenset[str]]:
    import sys
    import unicodedata

    from engine.look_alikes import case_blind_readings

    found = {}
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char) == "Lu" and len(char.lower()) == 1 and char.lower() != char:
            own, small = look_alike_any_case(char), look_alike_any_case(char.lower())
            if own.isascii() and small.isascii() and own.lower() != small.lower():
                found[char] = case_blind_readings(char)
                assert case_blind_readings(char.lower()) == found[char]
    return found


def test_each_letter_whose_capital_and_small_forms_imitate_different_characters_is_read_as_both():
    # Greek capital Nu is drawn like N and its small nu like v: a case-blind name reads either way
    assert _case_split_letters() == {
        "\u039d": {"n", "v"}, "\u03a5": {"y", "u"}, "\u01bc": {"5", "s"}, "\U000118a3": {"l", "i"},
        "\U000118a4": {"y", "z"}, "\U000118a6": {"e", "7"}, "\U000118b5": {"o", "6"}, "\U000118bc": {"t", "y"}}
