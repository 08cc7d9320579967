"""The labelled simulated subject and rater: deterministic, and their replies go through the real graders."""

from __future__ import annotations

from engine.c2.grading import CodeTests, grade_code_sample, triviaqa_exact_match
from engine.c2.prompts import parse_confidence
from engine.c2.simulated import SIMULATED_LABEL, SimulatedRater, SimulatedSubject, SubjectProfile
from engine.c2.tasks import C2Item, C2TaskType

QA = C2Item(task_type=C2TaskType.QA, external_id="q1", prompt="Abbey Road band?", line=1, answers=("beatles", "fab four"))
CODE = C2Item(task_type=C2TaskType.CODE, external_id="c1", prompt="Add.", line=1,
              tests=CodeTests(inputs=("1 2\n", "3 4\n"), outputs=("3\n", "7\n")))
CALL = C2Item(task_type=C2TaskType.CODE, external_id="c2", prompt="Append.", line=1,
              tests=CodeTests(inputs=("[1]\n2",), outputs=("[1, 2]",), func_name="append"))
STORY = C2Item(task_type=C2TaskType.STORY, external_id="s1", prompt="A dragon bakes.", line=1)


def test_both_are_labelled_simulated() -> None:
    assert SimulatedSubject("m", SubjectProfile()).is_simulated and SimulatedRater().is_simulated
    assert SimulatedSubject.label == SimulatedRater.label == SIMULATED_LABEL == "simulated"


def test_subject_is_deterministic_per_model_item_index_and_seed() -> None:
    subject = SimulatedSubject("m", SubjectProfile(diversity=0.9))
    assert subject.sample(QA, 3) == SimulatedSubject("m", SubjectProfile(diversity=0.9)).sample(QA, 3)
    samples = {SimulatedSubject("m", SubjectProfile(), seed=seed).sample(STORY, 0).text for seed in range(5)}
    assert len(samples) > 1


def test_accuracy_one_is_always_correct_and_zero_never() -> None:
    right = SimulatedSubject("a", SubjectProfile(accuracy=1.0))
    wrong = SimulatedSubject("b", SubjectProfile(accuracy=0.0))
    assert all(triviaqa_exact_match(right.sample(QA, i).text, QA.answers) for i in range(10))
    assert not any(triviaqa_exact_match(wrong.sample(QA, i).text, QA.answers) for i in range(10))


def test_simulated_code_passes_the_real_sandboxed_grader_only_when_correct() -> None:
    right = SimulatedSubject("a", SubjectProfile(accuracy=1.0))
    wrong = SimulatedSubject("b", SubjectProfile(accuracy=0.0))
    assert grade_code_sample(right.sample(CODE, 0).text, CODE.tests).passed
    assert grade_code_sample(right.sample(CALL, 0).text, CALL.tests).passed
    assert not grade_code_sample(wrong.sample(CODE, 0).text, CODE.tests).passed


def test_convergent_samples_state_a_parseable_confidence() -> None:
    sample = SimulatedSubject("m", SubjectProfile(confidence=0.7)).sample(QA, 0)
    assert parse_confidence(sample.confidence_text) is not None
    assert SimulatedSubject("m", SubjectProfile()).sample(STORY, 0).confidence_text is None


def test_rater_is_deterministic_and_scores_richer_texts_higher() -> None:
    rater = SimulatedRater(skill=1.0)
    rich = SimulatedSubject("rich", SubjectProfile(quality=1.0))
    poor = SimulatedSubject("poor", SubjectProfile(quality=0.0))
    rich_total = sum(sum(rater.rate(STORY.prompt, rich.sample(STORY, i).text).as_tuple()) for i in range(10))
    poor_total = sum(sum(rater.rate(STORY.prompt, poor.sample(STORY, i).text).as_tuple()) for i in range(10))
    assert rich_total > poor_total
    text = rich.sample(STORY, 0).text
    assert rater.rate(STORY.prompt, text) == SimulatedRater(skill=1.0).rate(STORY.prompt, text)
