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
