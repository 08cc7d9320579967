from engine.bundle.numbers import compare


def test_equal_boards_compare_identical_leaf_by_leaf():
    board = {"a": [0.1, 0.2], "b": {"c": None, "d": "x"}, "e": True}
    checks = compare(board, {"e": True, "b": {"d": "x", "c": None}, "a": (0.1, 0.2)})
    assert len(checks) == 5 and all(c.identical for c in checks)


def test_a_last_digit_difference_is_a_difference_with_its_relative_size():
    (check,) = [c for c in compare({"x": [0.1]}, {"x": [0.1 + 1e-16]}) if not c.identical]
    assert check.path == "x[0]" and check.relative < 1e-15


def test_a_leaf_on_one_side_only_differs_and_says_absent():
    checks = {c.path: c for c in compare({"x": 1}, {"x": 1, "y": 2})}
    assert not checks["y"].identical and "stored (absent)" in checks["y"].describe()


def test_a_description_can_name_the_other_side_and_cut_long_values():
    (check,) = compare({"x": "a" * 500}, {"x": "b"})
    assert check.describe(recomputed_as="rebuilt", max_chars=10) == 'x: stored "aaaaaaaaa…, rebuilt "b"'
    assert check.describe() == f'x: stored "{"a" * 500}", recomputed "b"'


def test_true_and_one_are_not_the_same_value():
    (check,) = compare({"x": True}, {"x": 1})
    assert not check.identical


def test_lists_indexed_by_model_are_labelled_with_the_model():
    def label(path, i):
        return ["alpha", "beta"][i] if path[-1] == "winrate" else str(i)

    paths = [c.path for c in compare({"U": {"winrate": [0.4, 0.6]}}, {"U": {"winrate": [0.4, 0.7]}}, label=label)]
    assert paths == ["U.winrate[alpha]", "U.winrate[beta]"]


def test_records_compared_row_by_row_are_named_by_their_key_fields():
    from engine.bundle.numbers import compare_rows

    stored = [{"task": "t1", "model": "a", "wins": 2}, {"task": "t2", "model": "a", "wins": 1}]
    recomputed = [{"task": "t2", "model": "a", "wins": 1}, {"task": "t1", "model": "a", "wins": 3}]
    differing = [c for c in compare_rows(stored, recomputed, ("task", "model"), prefix="records.x") if not c.identical]
    assert [c.describe() for c in differing] == ["records.x[t1 a].wins: stored 2, recomputed 3"]


def test_a_record_missing_from_the_recomputation_is_a_difference():
    from engine.bundle.numbers import compare_rows

    checks = {c.path: c for c in compare_rows([{"k": "x", "v": 1}, {"k": "y", "v": 2}], [{"k": "y", "v": 2}], ("k",),
                                              prefix="r")}
    assert not checks["r[x].v"].identical and "recomputed (absent)" in checks["r[x].v"].describe()
    assert checks["r[y].v"].identical


def test_a_record_stored_twice_is_a_difference_even_when_one_copy_matches():
    # keyed by their key fields, two stored copies collapsed into one: a forged copy beside the true one passed
    from engine.bundle.numbers import compare_rows

    stored = [{"k": "x", "v": 9}, {"k": "x", "v": 1}]
    differing = [c.describe() for c in compare_rows(stored, [{"k": "x", "v": 1}], ("k",), prefix="r") if not c.identical]
    assert differing == ["r[x].copies: stored 2, recomputed 1", "r[x].v: stored 9, recomputed 1"]
