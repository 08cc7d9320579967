from engine.adjectives import adjective_density


def test_density_is_the_share_of_listed_adjectives():
    assert adjective_density("a tall red lighthouse") == 0.5


def test_long_words_with_adjective_suffixes_count():
    assert adjective_density("luminous harbour") == 0.5


def test_an_empty_text_has_zero_density():
    assert adjective_density("  ") == 0.0
