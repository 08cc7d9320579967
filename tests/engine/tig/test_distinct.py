import numpy as np

from engine.tig.distinct import distinct, distinct_counts, distinct_inverse, run_lengths, run_starts


def _arrays():
    rng = np.random.default_rng(11)
    for n in (0, 1, 2, 7, 64, 300):
        for high in (1, 3, 40, 10**9):
            yield rng.integers(0, high, n).astype(np.int64)
    yield np.array([3, -1, 3, 0, -1], dtype=np.int64)


def test_distinct_values_are_np_uniques():
    for x in _arrays():
        ours, theirs = distinct(x), np.unique(x)
        assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()


def test_distinct_values_with_inverse_are_np_uniques():
    for x in _arrays():
        (values, inverse), (u, i) = distinct_inverse(x), np.unique(x, return_inverse=True)
        assert values.tolist() == u.tolist()
        assert inverse.dtype == i.dtype and inverse.shape == i.shape and inverse.tolist() == i.tolist()



def test_distinct_values_with_counts_are_np_uniques():
    for x in _arrays():
        (values, counts), (u, c) = distinct_counts(x), np.unique(x, return_counts=True)
        assert values.tolist() == u.tolist()
        assert counts.dtype == c.dtype and counts.tolist() == c.tolist()


def test_run_lengths_are_np_diff_of_the_run_starts():
    for x in _arrays():
        first = run_starts(np.sort(x))
        theirs = np.diff(np.append(first.nonzero()[0], len(first)))
        ours = run_lengths(first)
        assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()
