from engine.bundle.c2 import confidence_checks, fact_checks, per_instance, regrade_checks
from engine.c2.grading import CODE_GRADER_VERSION

TASKS = [{"id": "q1", "task_type": "qa", "constraints": {"answers": ["Paris", "paris france"]}},
         {"id": "v1", "task_type": "vqa", "constraints": {"answers": ["red"] * 2 + ["blue"] * 8}}]


def _sample(key, task, task_type, text, verdict, usefulness, correct):
    return {"key": key, "model": "m", "task": task, "task_type": task_type, "sample_index": 0, "text": text,
            "verdict": verdict, "usefulness": usefulness, "correct": correct}


def test_a_qa_answer_graded_as_the_site_graded_it_regrades_identical():
    checks = regrade_checks(TASKS, [_sample(1, "q1", "qa", "Paris.", "correct", 1.0, True)], [])
    assert len(checks) == 3 and all(c.identical for c in checks)


def test_a_flipped_qa_verdict_is_named_at_its_sample():
    checks = regrade_checks(TASKS, [_sample(7, "q1", "qa", "Lyon", "correct", 1.0, True)], [])
    assert {c.path for c in checks if not c.identical} == {
        "records.sample 7 (m, q1 #0).verdict", "records.sample 7 (m, q1 #0).usefulness", "records.sample 7 (m, q1 #0).correct"}


def test_a_vqa_answer_two_annotators_gave_is_partial_with_its_soft_accuracy():
    (verdict, usefulness, correct) = regrade_checks(TASKS, [_sample(2, "v1", "vqa", "red", "partial", 0.6, True)], [])
    assert verdict.identical and correct.identical and usefulness.recomputed == 0.6


def test_code_verdicts_and_ungraded_samples_are_not_regraded_and_code_is_noted():
    notes = []
    samples = [_sample(3, "c1", "code", "print(1)", "passed", 1.0, True), _sample(4, "s1", "story", "Once.", "", None, None)]
    assert regrade_checks(TASKS, samples, notes) == []
    assert notes == ["1 code sample verdict(s) taken as recorded (regrading runs each program in the sandbox); "
                     f"code grader version 1: 1 (this code: version {CODE_GRADER_VERSION})"]


def test_the_note_names_the_code_grader_version_each_verdict_was_given_by():
    # a bundle exported before code grades recorded their version (version 1) verifies as one exported after
    old = _sample(3, "c1", "code", "print(1)", "passed", 1.0, True)
    new = {**_sample(5, "c1", "code", "print(1)", "wrong_answer", 0.0, False),
           "grade_detail": {"message": "Wrong Answer", "grader_version": CODE_GRADER_VERSION}}
    notes = []
    assert regrade_checks(TASKS, [old, new, new], notes) == []
    assert notes[0].endswith(f"code grader version 1: 1, version {CODE_GRADER_VERSION}: 2 "
                             f"(this code: version {CODE_GRADER_VERSION})")


def test_per_instance_rows_are_the_results_prompts_by_model_and_task():
    results = {"prompts": {"b": {"t2": {"u": 1.0}}, "a": {"t9": {"u": 0.5}, "t1": {"u": 0.0}}}}
    assert [(r["model"], r["task"], r["u"]) for r in per_instance(results)] == [("a", "t1", 0.0), ("a", "t9", 0.5),
                                                                                ("b", "t2", 1.0)]


def test_each_printed_fact_is_checked_against_the_scored_configuration():
    settings = {"template": "standard", "n_samples": 3, "rater": "r", "seed": 1, "surprise_policy": "zero", "tau": 0.9,
                "temperature": 1.0}
    assert all(c.identical for c in fact_checks({**settings, "run": 4, "code_version": "abc"}, settings))
    differing = [c.path for c in fact_checks({**settings, "tau": 0.5}, settings) if not c.identical]
    assert differing == ["board_facts.tau (printed by board/board.csv or board.tex)"]


def _confidence(key, raw, confidence, status):
    return {"key": key, "model": "m", "task": "q1", "sample_index": 1, "confidence_raw": raw, "confidence": confidence,
            "confidence_status": status}


def test_a_confidence_parsed_as_the_site_parsed_it_checks_identical_and_unasked_ones_are_skipped():
    samples = [_confidence(1, "Probability: 0.8", 0.8, "ok"), _confidence(2, "no idea", None, "unparseable"),
               _confidence(3, "", None, "missing"), _confidence(4, "", None, "not_asked")]
    checks = confidence_checks(samples)
    assert len(checks) == 4 and all(c.identical for c in checks)


def test_a_forged_confidence_or_status_is_named_at_its_sample():
    # Surprise is computed from the stored probability: a forged one moved every score consistently and verified
    checks = confidence_checks([_confidence(5, "0.8", 0.2, "ok"), _confidence(6, "80%", None, "unparseable")])
    assert {c.path for c in checks if not c.identical} == {
        "records.sample 5 (m, q1 #1).confidence", "records.sample 6 (m, q1 #1).confidence",
        "records.sample 6 (m, q1 #1).confidence_status"}
