from engine.task_construction.compose import TEMPLATE_VERSION, compose_candidate, stable_task_id


def test_an_abstraction_brief_uses_the_appendix_a_template():
    c = compose_candidate(family="abstraction", subtype="metaphysical", cell_id="x", source={"concept": "fate"})
    assert c.brief == "Design a visual concept that expresses the abstract concept \u201cfate\u201d."
    assert c.constraints["output"].startswith("Give exactly two labeled blocks")


def test_an_adaptation_candidate_carries_its_constraint_set():
    c = compose_candidate(family="adaptation", subtype="digital product", cell_id="x",
                          source={"situation": "launch a chess app", "audience": "club players", "medium": "app icon"})
    assert c.constraints["audience"] == "club players" and c.constraints["domain"] == "digital product"


def test_the_stable_id_depends_on_content_only():
    source = {"concept_a": "owl", "concept_b": "typewriter"}
    assert stable_task_id("combination", "CC-far", source) == stable_task_id("combination", "CC-far", dict(source))
    assert stable_task_id("combination", "CC-far", source) != stable_task_id("combination", "CC-near", source)
    assert stable_task_id("combination", "CC-far", source).startswith("com-")


def test_the_template_version_is_named():
    assert TEMPLATE_VERSION.startswith("ekphrasis-appA-")
