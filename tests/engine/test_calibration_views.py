import math

from engine.calibration_views import HumanItem, JudgeVerdict, joined_inputs


def _inputs(labels, k=2):
    items = [HumanItem(1, "t1", "usefulness", False, 10, 20, 0, 1),
             HumanItem(2, "t1", "usefulness", False, 11, 21, 1, 0),
             HumanItem(3, "t1", "usefulness", True, 10, 20, 0, 1)]
    verdicts = {"usefulness": [JudgeVerdict("t1", 20, 10, 1, 0, "A"),  # the item's pair, shown swapped
                               JudgeVerdict("t2", 30, 31, 0, 1, "B")]}
    texts = {r: {"core_idea": "an idea", "visual_description": "a picture"} for r in (10, 20, 11, 21, 30, 31)}
    return joined_inputs(model_ids=[5, 6], names=["m5", "m6"], items=items, labels=labels, k=k, verdicts=verdicts,
                         texts=texts, n_labels=sum(map(len, labels.values())), style_fields={"usefulness": "core_idea"})


def test_a_judged_item_gets_the_judges_verdict_in_the_items_orientation():
    data = _inputs({1: [1.0, 0.0], 2: [1.0, 1.0], 3: [1.0, 1.0]}).per_dimension["usefulness"]
    assert list(data.human[2]) == [0.5, 1.0]  # the gold item is left out
    assert list(data.judged) == [True, False]
    assert data.judge_paired[0] == 0.0 and math.isnan(data.judge_paired[1])  # shown B was the item's A: A lost
    assert list(data.judge_unpaired[2]) == [0.0] and data.judge_all[2].size == 2


def test_an_item_without_all_k_labels_stays_out_of_the_people_data():
    data = _inputs({1: [1.0], 2: [1.0, 0.0]}).per_dimension["usefulness"]
    assert data.human_responses == [(11, 21)]


def test_a_model_the_judge_cannot_rank_is_no_rank_change():
    # the judge preferred model 0 in every comparison: its skill has no finite estimate on the judge's board
    # (unranked there, rank() puts it last). The rank changes read that as "0 is 3 by the judge", outside the
    # people's rank-set: the judge's bias, the page said, of a model the judge liked best
    import numpy as np

    from engine.calibration_views import dimension_views

    rng = np.random.default_rng(0)
    items, verdicts, labels = [], [], {}
    for t in range(40):
        for a, b in ((0, 1), (1, 2), (0, 2)):
            verdicts.append(JudgeVerdict(f"t{t}", 10 * t + a, 10 * t + b, a, b, "A" if a == 0 else rng.choice(["A", "B"])))
        a, b = [(0, 1), (1, 2), (0, 2)][t % 3]
        items.append(HumanItem(t, f"t{t}", "usefulness", False, 10 * t + a, 10 * t + b, a, b))
        labels[t] = [float(rng.random() < (0.85 if a == 0 else 0.5))]  # people like model 0 best too
    inputs = joined_inputs(model_ids=[0, 1, 2], names=["m0", "m1", "m2"], items=items, labels=labels, k=1,
                           verdicts={"usefulness": verdicts}, texts={}, n_labels=40, style_fields={})
    views = dimension_views(inputs, "usefulness", style=False)
    judge_row = next(r for r in views["judge_only"]["rows"] if r["model"] == "m0")
    assert judge_row["rank"] is None  # unranked by the judge
    assert all(c["model"] != "m0" for c in views["rank_changes"])
