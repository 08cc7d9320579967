"""engine/simulated_subject.py: the labelled simulated subject answers deterministically from the brief."""

from engine.simulated_subject import is_simulated_subject, simulated_answer

BRIEF = "Express the abstract idea of nostalgia through one everyday object in a single static image."


def test_the_same_model_task_and_sample_give_the_same_answer():
    first = simulated_answer(BRIEF, model="simulated-a", task_id="t1", sample=1)
    assert first == simulated_answer(BRIEF, model="simulated-a", task_id="t1", sample=1)


def test_models_and_samples_answer_differently():
    answers = {simulated_answer(BRIEF, model=m, task_id="t1", sample=s) for m in ("simulated-a", "simulated-b") for s in (1, 2)}
    assert len(answers) == 4


def test_an_answer_has_both_fields_and_draws_on_the_briefs_words():
    core, visual = simulated_answer(BRIEF, model="simulated-a", task_id="t1", sample=1)
    assert core and visual
    brief_words = {"abstract", "nostalgia", "everyday", "object", "through"}
    assert brief_words & set((core + " " + visual).lower().replace(".", " ").replace(";", " ").split())


def test_only_simulated_prefixed_names_select_the_simulated_subject():
    assert is_simulated_subject("simulated-a") and not is_simulated_subject("simulated-") and not is_simulated_subject("gpt")
