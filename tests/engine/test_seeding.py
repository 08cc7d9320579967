from engine.seeding import derived_seed, unit_interval


def test_derived_seed_is_stable_for_the_same_parts():
    assert derived_seed(42, "t1", "U", (1, 2)) == derived_seed(42, "t1", "U", (1, 2))


def test_derived_seed_changes_with_any_part():
    assert derived_seed(42, "t1", "U") != derived_seed(42, "t1", "E")
    assert derived_seed(42, "t1", "U") != derived_seed(43, "t1", "U")


def test_unit_interval_is_roughly_uniform():
    values = [unit_interval("share", i) for i in range(4000)]
    assert all(0.0 <= v < 1.0 for v in values)
    assert abs(sum(v < 0.1 for v in values) / 4000 - 0.1) < 0.02
