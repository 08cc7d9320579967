"""manage.py: a refused environment is one line naming both fixes; `help` lists the project's commands."""

from tests.manage_command import run_manage


def test_run_easel_help_without_a_secret_key_is_one_line_naming_both_fixes():
    result = run_manage("run_easel", "--help")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "SECRET_KEY" in lines[0] and "export ATELIER_DEV=true" in lines[0]


def test_every_command_not_only_help_refuses_in_one_line_without_a_secret_key():
    for args in (("help",), ("migrate",), ("build_task_set", "--version", "v2"), ("no_such_command",)):
        result = run_manage(*args)
        assert result.returncode != 0, args
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, (args, result.stderr)


def test_help_lists_the_project_commands_under_atelier():
    result = run_manage("help", ATELIER_DEV="true")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    atelier = text.split("[atelier]", 1)[1].split("\n\n", 1)[0].split()
    for name in ("run_easel", "run_judge", "run_c2", "build_task_set", "easel_suite", "load_demo", "import_c2"):
        assert name in atelier
    assert "migrate" not in atelier and "Note that only Django core commands" not in text


def test_an_explicit_settings_module_is_still_honoured():
    result = run_manage("help", "--settings=evalsite.no_such_settings", ATELIER_DEV="true")
    assert result.returncode != 0 and "no_such_settings" in result.stderr
