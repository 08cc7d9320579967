import random

import numpy as np

from engine.task_construction.pools import PoolRecord
from engine.task_construction.sampling import frequency_belt, stratify_pairs, wordfreq_zipf


def test_the_belt_is_the_p10_p90_interval_of_the_subtypes_frequencies():
    records = [PoolRecord(concept=f"w{k}", type="abstract", subtype="metaphysical") for k in range(11)]
    belt = frequency_belt("metaphysical", records, frequency=lambda w: float(w[1:]))
    assert (belt.low, belt.high) == (1.0, 9.0)
    assert not belt.inside("w0") and belt.inside("w5") and not belt.inside("w10")


def test_a_pool_norm_zipf_overrides_wordfreq():
    records = [PoolRecord(concept="grief", type="abstract", subtype="metaphysical", norms={"zipf": 1.25})]
    assert frequency_belt("metaphysical", records).frequencies["grief"] == 1.25


def test_wordfreq_frequencies_come_from_the_bundled_data():
    assert wordfreq_zipf("the") > wordfreq_zipf("grief") > wordfreq_zipf("qualia") > 0


def test_pairs_are_split_at_the_distance_percentiles():
    pairs = [(f"a{k}", f"b{k}") for k in range(8)]
    strata = stratify_pairs("AA", pairs, list(np.linspace(0.1, 0.8, 8)), (25.0, 75.0), ("near", "medium", "far"),
                            random.Random(0))
    assert strata.counts() == {"near": 2, "medium": 4, "far": 2}
    assert max(d for *_, d in strata.strata["near"]) < min(d for *_, d in strata.strata["far"])


def test_the_order_inside_a_stratum_depends_on_the_seed_only():
    pairs = [(f"a{k}", f"b{k}") for k in range(40)]
    distances = [k / 40 for k in range(40)]
    one = stratify_pairs("AA", pairs, distances, (25.0, 75.0), ("near", "medium", "far"), random.Random(1))
    again = stratify_pairs("AA", list(reversed(pairs)), list(reversed(distances)), (25.0, 75.0),
                           ("near", "medium", "far"), random.Random(1))
    other = stratify_pairs("AA", pairs, distances, (25.0, 75.0), ("near", "medium", "far"), random.Random(2))
    assert one.strata == again.strata
    assert one.strata["medium"] != other.strata["medium"]
