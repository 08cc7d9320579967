"""Catalogue imports under hostile conditions: the same file imported twice at the same instant (on
PostgreSQL), and names that differ from one another only in what a reader cannot see."""

from __future__ import annotations

import json

import pytest

from leaderboard.import_contract import ImportFailed
from leaderboard.models import Response, SubjectModel, TaskSet
from leaderboard.services.catalogue import (
    SubjectModelNameRefused,
    SubjectModelNameTaken,
    responses_import,
    subject_model_save,
    subject_models_ensure,
    tasks_import,
)
from tests.concurrency import raised, run_at_once
from tests.conftest import require_service


def jsonl(*rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


TASKS = jsonl(*({"id": f"t{i}", "family": "abstraction", "brief": f"Brief {i}."} for i in range(20)))
RESPONSES = jsonl(*(
    {"task_id": f"t{i}", "model": model, "sample": 1, "core_idea": f"Idea {i}.", "visual_description": f"Scene {i}."}
    for i in range(20) for model in ("new-model-a", "new-model-b")
))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(2))
def test_the_same_response_file_imported_twice_at_once_is_written_once(attempt):
    require_service("postgres")
    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="race", version="1")

    errors = raised(run_at_once([
        lambda: responses_import(name="responses.jsonl", raw=RESPONSES, task_set=task_set, create_models=True)
        for _ in range(2)
    ]))

    assert not errors, errors
    assert SubjectModel.objects.filter(display_name__startswith="new-model-").count() == 2
    assert Response.objects.filter(task__task_set=task_set).count() == 40
    assert Response.objects.filter(task__task_set=task_set, is_primary=True).count() == 40


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(2))
def test_imports_into_two_task_sets_at_once_create_their_new_models_once(attempt):
    require_service("postgres")
    task_sets = [tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name=f"race-{n}", version="1")[0] for n in (1, 2)]

    errors = raised(run_at_once([
        lambda task_set=task_set: responses_import(name="responses.jsonl", raw=RESPONSES, task_set=task_set,
                                                   create_models=True)
        for task_set in task_sets
    ]))

    assert not errors, errors
    assert SubjectModel.objects.filter(display_name__startswith="new-model-").count() == 2
    for task_set in task_sets:
        assert Response.objects.filter(task__task_set=task_set).count() == 40


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("attempt", range(2))
def test_two_look_alike_names_created_at_once_make_one_model(attempt):
    require_service("postgres")

    errors = raised(run_at_once([
        lambda name=name: subject_model_save(model=SubjectModel(display_name=name)) for name in ("GPT-4o", "GP\u0422-4o")
    ]))

    assert [type(e) for e in errors] == [SubjectModelNameTaken]
    assert SubjectModel.objects.count() == 1


def _response(model: str, task_id: str = "t0", sample: int = 1) -> dict:
    return {"task_id": task_id, "model": model, "sample": sample, "core_idea": "An idea.", "visual_description": "A scene."}


@pytest.mark.django_db
@pytest.mark.parametrize("look_alike", ["gpt-4o", "GPT\u20114o", "GPT\u20144o", "ＧＰＴ-4o", "GPT-４o"])
def test_a_new_model_named_like_an_existing_one_but_for_case_dashes_or_width_is_refused(look_alike):
    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="names", version="1")
    responses_import(name="first.jsonl", raw=jsonl(_response("GPT-4o")), task_set=task_set, create_models=True)
    responses_before = Response.objects.count()

    with pytest.raises(ImportFailed) as info:
        responses_import(name="second.jsonl", raw=jsonl(_response("Other", "t1"), _response(look_alike, "t1")),
                         task_set=task_set, create_models=True)

    (error,) = info.value.errors
    assert (error.file, error.line, error.field) == ("second.jsonl", 2, "model")
    assert "differs from the existing model 'GPT-4o' only in case" in error.message
    assert sorted(SubjectModel.objects.values_list("display_name", flat=True)) == ["GPT-4o"]
    assert Response.objects.count() == responses_before


@pytest.mark.django_db
def test_two_new_models_of_one_file_named_alike_but_for_case_and_spacing_are_refused():
    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="names", version="1")

    with pytest.raises(ImportFailed) as info:
        responses_import(name="r.jsonl", raw=jsonl(_response("Atlas  Pro"), _response("atlas pro", "t1")),
                         task_set=task_set, create_models=True)

    (error,) = info.value.errors
    assert (error.line, error.field) == (2, "model")
    assert "differs from the model 'Atlas  Pro' named on line 1" in error.message
    assert not SubjectModel.objects.exists()
    assert not Response.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("existing,look_alike", [
    ("GPT-4o", "GP\u0422-4o"),  # Cyrillic capital Te
    ("Claude", "Cl\u0430ude"),  # Cyrillic small a
    ("Claude", "\u0421LAUDE"),  # Cyrillic capital Es, and case
    ("o3", "\u03bf3"),  # Greek small omicron
    ("Gemini", "Gem\u0456n\u0456"),  # Ukrainian i
    ("\u0422\u0415\u0421\u0422", "\u0442\u0435\u0441\u0442"),  # a Cyrillic name in small letters: case alone, as before
])
def test_a_new_model_named_with_look_alike_letters_of_another_script_is_refused(existing, look_alike):
    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="names", version="1")
    responses_import(name="first.jsonl", raw=jsonl(_response(existing)), task_set=task_set, create_models=True)

    with pytest.raises(ImportFailed) as info:
        responses_import(name="second.jsonl", raw=jsonl(_response("Other", "t1"), _response(look_alike, "t1")),
                         task_set=task_set, create_models=True)

    (error,) = info.value.errors
    assert (error.file, error.line, error.field) == ("second.jsonl", 2, "model")
    assert f"differs from the existing model {existing!r}" in error.message
    assert "look-alike letters" in error.message
    assert list(SubjectModel.objects.values_list("display_name", flat=True)) == [existing]


@pytest.mark.django_db
def test_models_named_in_other_scripts_that_imitate_no_existing_name_are_created():
    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="names", version="1")
    names = ["GPT-4o", "\u6587\u5fc3\u4e00\u8a00", "\u901a\u4e49\u5343\u95ee", "\u0413\u0438\u0433\u0430\u0427\u0430\u0442",
             "\u03a3\u03bf\u03c6\u03af\u03b1", "\ud074\ub85c\ubc14"]
    responses_import(name="r.jsonl", raw=jsonl(*(_response(n, f"t{i}") for i, n in enumerate(names))),
                     task_set=task_set, create_models=True)
    assert sorted(SubjectModel.objects.values_list("display_name", flat=True)) == sorted(names)


@pytest.mark.django_db
def test_a_simulated_model_made_on_first_use_may_not_read_as_an_existing_one():
    SubjectModel.objects.create(display_name="simulated-Claude", is_simulated=True)

    with pytest.raises(SubjectModelNameTaken) as info:
        subject_models_ensure(defaults_by_name={"simulated-new": {}, "simulated-Cl\u0430ude": {}})

    assert info.value.twin == "simulated-Claude"
    assert list(SubjectModel.objects.values_list("display_name", flat=True)) == ["simulated-Claude"]


@pytest.mark.django_db
@pytest.mark.parametrize("name,fragment", [
    (" alpha", "must not begin or end with whitespace"),
    ("alpha\u00a0", "must not begin or end with whitespace"),
    ("simulated-a\u200b", "invisible character (U+200B"),
])
@pytest.mark.parametrize("write", ["save", "ensure"])
def test_a_name_that_is_no_identifier_is_refused_when_the_model_is_made_naming_it(name, fragment, write):
    # the API's field, the admin form and a response record refuse such a name; the catalogue's own writes
    # made it, and a model stored as " alpha" could be named by no C² run (its lists of names are trimmed)
    with pytest.raises(SubjectModelNameRefused) as info:
        if write == "save":
            subject_model_save(model=SubjectModel(display_name=name))
        else:
            subject_models_ensure(defaults_by_name={name: {"is_simulated": True}})
    assert str(info.value).startswith(f"display name {name!r} ") and fragment in str(info.value)
    assert not SubjectModel.objects.exists()


@pytest.mark.django_db
def test_a_model_renamed_to_a_name_with_a_leading_space_is_refused_and_keeps_its_name():
    model = subject_model_save(model=SubjectModel(display_name="alpha"))
    model.display_name = " alpha"
    with pytest.raises(SubjectModelNameRefused, match="must not begin or end with whitespace"):
        subject_model_save(model=model, update_fields=["display_name"])
    assert list(SubjectModel.objects.values_list("display_name", flat=True)) == ["alpha"]


@pytest.mark.django_db
def test_models_named_apart_by_more_than_case_or_spacing_are_created():
    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="names", version="1")
    names = ["GPT-4o", "GPT-4o-mini", "GPT 4o", "gpt-4"]
    responses_import(name="r.jsonl", raw=jsonl(*(_response(n, f"t{i}") for i, n in enumerate(names))),
                     task_set=task_set, create_models=True)
    assert sorted(SubjectModel.objects.values_list("display_name", flat=True)) == sorted(names)


@pytest.mark.django_db
@pytest.mark.parametrize("task_set_name,version,field,fragment", [
    ("two\nlines", "1", "task_set", "invisible character (U+000A"),
    ("vci\u200b", "1", "task_set", "invisible character (U+200B ZERO WIDTH SPACE)"),
    (" vci", "1", "task_set", "whitespace"),
    ("vci", "1\r2", "version", "invisible character (U+000D"),
])
def test_a_task_set_name_or_version_holding_an_invisible_character_is_refused(task_set_name, version, field, fragment):
    with pytest.raises(ImportFailed) as info:
        tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name=task_set_name, version=version)
    (error,) = info.value.errors
    assert (error.file, error.line, error.field) == ("tasks.jsonl", 0, field)
    assert fragment in error.message
    assert not TaskSet.objects.exists()


@pytest.mark.django_db
def test_a_task_a_run_judged_cannot_change_in_place_but_new_tasks_and_unchanged_ones_import():
    from leaderboard.ekphrasis import judge_runs

    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="judged", version="1")
    responses_import(name="responses.jsonl", raw=RESPONSES, task_set=task_set, create_models=True)
    edited = TASKS.replace(b'"Brief 3."', b'"A brief rewritten after the run."')
    judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="U", budget_per_task=2, seed=1)
    with pytest.raises(ImportFailed) as refused:
        tasks_import(name="tasks.jsonl", raw=edited, task_set_name="judged", version="1")
    (error,) = refused.value.errors
    assert (error.line, error.field) == (4, "id") and "Ekphrasis run" in error.message and "new version" in error.message
    assert task_set.tasks.get(external_id="t3").brief == "Brief 3."  # nothing half-written
    grown = TASKS + jsonl({"id": "t20", "family": "abstraction", "brief": "Brief 20."})
    _, summary = tasks_import(name="tasks.jsonl", raw=grown, task_set_name="judged", version="1")
    assert (summary.created, summary.unchanged, summary.updated) == (1, 20, 0)
    _, summary = tasks_import(name="tasks.jsonl", raw=edited, task_set_name="judged", version="2")
    assert summary.created == 20  # the edit belongs in a new version


@pytest.mark.django_db
def test_a_task_set_without_runs_still_takes_edits_in_place():
    tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="draft", version="1")
    edited = TASKS.replace(b'"Brief 3."', b'"Brief 3, revised."')
    _, summary = tasks_import(name="tasks.jsonl", raw=edited, task_set_name="draft", version="1")
    assert summary.updated == 1


#: Letters whose capital and small forms imitate different Latin letters or digits (confusables.txt):
#: (capital, small, what the capital imitates, what the small form imitates).
CASE_SPLIT_LETTERS = [
    ("\u039d", "\u03bd", "N", "v"),  # Greek Nu
    ("\u03a5", "\u03c5", "Y", "u"),  # Greek Upsilon
    ("\U000118a3", "\U000118c3", "L", "i"),  # Warang Citi Yu
    ("\U000118a4", "\U000118c4", "Y", "z"),  # Warang Citi Ya
    ("\U000118bc", "\U000118dc", "T", "y"),  # Warang Citi Har
    ("\u01bc", "\u01bd", "5", "s"),  # Latin tone five
    ("\U000118a6", "\U000118c6", "E", "7"),  # Warang Citi Ii
    ("\U000118b5", "\U000118d5", "O", "6"),  # Warang Citi At
]


@pytest.mark.django_db
@pytest.mark.parametrize("capital,small,capital_reads,small_reads", CASE_SPLIT_LETTERS)
def test_a_name_whose_other_case_reads_as_an_existing_model_is_refused(capital, small, capital_reads, small_reads):
    # "NovaGen" and "νovaGen": the second's capitals, "ΝOVAGEN", read as the first's, "NOVAGEN"; and "vega" and "ΝEGA",
    # whose small form "νega" reads as "vega". Names are one model whatever their case, so each pair is one name.
    for existing, new in ((f"{capital_reads}ovaGen", f"{small}ovaGen"), (f"{small_reads}ega", f"{capital}EGA")):
        SubjectModel.objects.all().delete()
        subject_model_save(model=SubjectModel(display_name=existing))
        with pytest.raises(SubjectModelNameTaken) as info:
            subject_model_save(model=SubjectModel(display_name=new))
        assert info.value.twin == existing and "look-alike letters" in str(info.value)
        assert list(SubjectModel.objects.values_list("display_name", flat=True)) == [existing]


@pytest.mark.django_db
@pytest.mark.parametrize("capital,small,capital_reads,small_reads", CASE_SPLIT_LETTERS)
def test_an_import_naming_a_model_whose_other_case_reads_as_an_existing_one_is_refused(
        capital, small, capital_reads, small_reads):
    task_set, _ = tasks_import(name="tasks.jsonl", raw=TASKS, task_set_name="names", version="1")
    responses_import(name="first.jsonl", raw=jsonl(_response(f"{capital_reads}ovaGen")), task_set=task_set,
                     create_models=True)
    with pytest.raises(ImportFailed) as info:
        responses_import(name="second.jsonl", raw=jsonl(_response("Other", "t1"), _response(f"{small}ovaGen", "t1")),
                         task_set=task_set, create_models=True)
    (error,) = info.value.errors
    assert (error.line, error.field) == (2, "model") and "look-alike letters" in error.message


@pytest.mark.django_db
def test_names_that_read_as_the_two_different_letters_of_a_case_split_letter_stay_two_models():
    # Greek Nu reads as N or v, but "NovaGen" and "vovaGen" are two names
    for name in ("NovaGen", "vovaGen"):
        subject_model_save(model=SubjectModel(display_name=name))
    assert SubjectModel.objects.count() == 2
