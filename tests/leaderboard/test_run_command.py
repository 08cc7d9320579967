"""The project's commands share one vocabulary: every option has help, every default is stated,
--version is the task-set version, and a bad seed or count is refused by the parser."""

import argparse
import io

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class

from leaderboard.run_command import AtelierCommand, AtelierHelpFormatter, RunCommand, has_stated_default

PROJECT_PACKAGES = ("annotation", "leaderboard", "evalsite", "engine")
#: Django's own options on every command (their help is Django's).
DJANGO_BASE_OPTIONS = {"help", "verbosity", "settings", "pythonpath", "traceback", "no_color", "force_color",
                       "skip_checks"}


def project_commands():
    return sorted((name, app) for name, app in get_commands().items() if app.partition(".")[0] in PROJECT_PACKAGES)


def parser_of(name, app):
    return load_command_class(app, name).create_parser("manage.py", name)


def own_actions(parser):
    return [a for a in parser._actions if a.dest not in DJANGO_BASE_OPTIONS]


def test_there_are_project_commands_to_walk():
    names = {name for name, _ in project_commands()}
    assert {"run_judge", "run_easel", "run_c2", "build_task_set", "easel_suite", "load_demo", "serve_demo"} <= names


@pytest.mark.parametrize(("name", "app"), project_commands())
def test_every_project_command_is_an_atelier_command(name, app):
    assert isinstance(load_command_class(app, name), AtelierCommand)


@pytest.mark.parametrize(("name", "app"), project_commands())
def test_every_option_has_help_and_states_its_default(name, app):
    parser = parser_of(name, app)
    formatter = AtelierHelpFormatter(prog=name)
    for action in own_actions(parser):
        assert action.help and action.help is not argparse.SUPPRESS, f"{name} {action.option_strings or action.dest}"
        if (action.option_strings or action.nargs == "?") and has_stated_default(action) and not action.required:
            text = formatter._get_help_string(action) % {"default": action.default}
            assert "default" in text.lower(), f"{name} {action.option_strings}: {text}"


@pytest.mark.parametrize(("name", "app"), project_commands())
def test_version_is_never_djangos_version_flag(name, app):
    parser = parser_of(name, app)
    version = [a for a in parser._actions if "--version" in a.option_strings]
    assert not any(isinstance(a, argparse._VersionAction) for a in version), name
    for action in version:
        assert action.dest == "task_set_version" and "--task-set-version" in action.option_strings, name


@pytest.mark.parametrize(("name", "app"), project_commands())
def test_the_shared_options_mean_the_same_everywhere(name, app):
    actions = {a.dest: a for a in own_actions(parser_of(name, app))}
    if "task_set" in actions:
        assert actions["task_set"].option_strings == ["--task-set"]
    if "seed" in actions:
        assert actions["seed"].option_strings == ["--seed"] and actions["seed"].type.__name__ == "seed_value"
    if "output" in actions:
        assert set(actions["output"].option_strings) == {"-o", "--output"}
    if "resume" in actions:
        assert actions["resume"].metavar in ("RUN_ID", "BUILD_ID")


def test_the_run_family_shares_one_base():
    for name in ("run_judge", "run_easel", "run_c2"):
        assert isinstance(load_command_class(get_commands()[name], name), RunCommand)


def test_the_help_text_shows_defaults():
    out = io.StringIO()
    parser = parser_of("run_judge", get_commands()["run_judge"])
    parser.print_help(out)
    text = " ".join(out.getvalue().split())
    assert "(default: 42)" in text and "(default: simulated)" in text and "(default: 50)" in text


@pytest.mark.parametrize(("name", "app"), project_commands())
def test_no_option_shows_an_empty_choice_in_the_help(name, app):
    # argparse prints a choice of '' as nothing: run_judge's --tig-canonicaliser read {,embedding,llm}
    text = parser_of(name, app).format_help()
    assert "{," not in text and ",}" not in text and ",," not in text, name


def test_the_tig_canonicaliser_help_names_its_values_and_its_default():
    text = " ".join(parser_of("run_judge", get_commands()["run_judge"]).format_help().split())
    assert "--tig-canonicaliser {embedding,llm} synonym grouping: 'embedding' or 'llm' (the extractor model); " \
           "default (left out, or ''): the latest TIG build's" in text


@pytest.mark.parametrize("value", ["", "embedding", "llm"])
def test_the_tig_canonicaliser_accepts_what_it_accepted(value):
    parser = parser_of("run_judge", get_commands()["run_judge"])
    assert parser.parse_args(["--tig-canonicaliser", value]).tig_canonicaliser == value


def test_the_tig_canonicaliser_refuses_any_other_value():
    parser = parser_of("run_judge", get_commands()["run_judge"])
    with pytest.raises(CommandError, match="invalid choice: 'bogus'"):
        parser.parse_args(["--tig-canonicaliser", "bogus"])


def test_a_zero_default_is_stated_too():
    out = io.StringIO()
    parser_of("run_easel", get_commands()["run_easel"]).print_help(out)
    assert "an integer ≥ 0 (default: 0)" in " ".join(out.getvalue().split())


@pytest.mark.django_db
def test_a_run_command_without_a_task_set_says_what_is_required():
    with pytest.raises(CommandError, match=r"--task-set is required \(or --resume RUN_ID\)"):
        call_command("run_judge", stdout=io.StringIO())


@pytest.mark.django_db
def test_an_unknown_resume_id_is_refused():
    with pytest.raises(CommandError, match="no C² run 999"):
        call_command("run_c2", "--resume", "999", stdout=io.StringIO())


@pytest.mark.parametrize(("text", "message"), [("-1", "a seed is an integer ≥ 0"), ("x", "'x' is not an integer"),
                                               (str(2**40), "a seed is an integer in 0..")])
def test_a_seed_outside_what_the_api_takes_is_refused_by_the_parser(text, message):
    from leaderboard.run_command import seed_value

    with pytest.raises(argparse.ArgumentTypeError, match=message):
        seed_value(text)


@pytest.mark.django_db
def test_a_run_stopped_inline_by_a_provider_outage_is_failed_resumable_and_says_so_in_one_line(monkeypatch):
    from leaderboard.ekphrasis import judge_runs
    from leaderboard.ekphrasis.models import JudgeRun
    from leaderboard.runs.errors import ProviderStopped
    from tests.leaderboard.judging_factories import population

    task_set, _ = population(n_models=3, n_tasks=2, name="stopped")

    def outage(**_):
        raise ProviderStopped(who="judge 'j'", error="HTTP 503", still_needed=7)

    monkeypatch.setattr(judge_runs, "judge_run_task_execute", outage)
    with pytest.raises(CommandError) as stopped:
        call_command("run_judge", "--task-set", task_set.name, "--budget", "2", stdout=io.StringIO(), stderr=io.StringIO())
    run = JudgeRun.objects.get()
    assert (run.status, run.resumable) == (JudgeRun.Status.FAILED, True)
    assert "7 call(s) still needed" in str(stopped.value) and f"resume it with --resume {run.pk}" in str(stopped.value)


@pytest.mark.django_db
def test_an_unknown_task_set_or_version_is_refused_naming_what_exists():
    from tests.factories import TaskSetFactory

    TaskSetFactory(name="known", version="v1")
    with pytest.raises(CommandError, match="no task set named 'nope'; task sets: .*known"):
        call_command("run_judge", "--task-set", "nope", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no task set named 'known' at version 'v9'; versions of 'known': v1"):
        call_command("run_judge", "--task-set", "known", "--version", "v9", stdout=io.StringIO())


@pytest.mark.django_db
def test_build_tig_refuses_a_task_set_of_another_protocol_and_writes_nothing():
    from leaderboard.ekphrasis.models import TIGBuild
    from tests.factories import BenchmarkFactory, TaskSetFactory

    TaskSetFactory(name="paintings", benchmark=BenchmarkFactory(kind="easel"))
    with pytest.raises(CommandError, match="Ekphrasis runs take only Ekphrasis task sets"):
        call_command("build_tig", "--task-set", "paintings", stdout=io.StringIO(), stderr=io.StringIO())
    assert not TIGBuild.objects.exists()


@pytest.mark.django_db
def test_an_export_into_a_missing_folder_is_refused_in_one_line(tmp_path):
    from tests.factories import TaskSetFactory

    TaskSetFactory(name="exported")
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("export_tasks", "--task-set", "exported", "-o", str(tmp_path / "missing" / "x.jsonl"),
                     stdout=io.StringIO(), stderr=io.StringIO())


@pytest.mark.parametrize("text", ["huge", "10x", "0x0"])
def test_generate_renders_refuses_a_size_that_is_not_width_by_height(text):
    from leaderboard.management.commands.generate_renders import image_size

    with pytest.raises(argparse.ArgumentTypeError, match="is not WIDTHxHEIGHT"):
        image_size(text)
