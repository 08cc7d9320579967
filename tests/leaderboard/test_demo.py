"""The demo loader: labelled demo data, accounts with roles, idempotent."""

import io

import pytest
from django.contrib.auth import get_user_model

from leaderboard.demo import demo_accounts_create, demo_catalogue_load
from leaderboard.models import Response, SubjectModel
from leaderboard.roles import user_roles

pytestmark = pytest.mark.django_db


def test_demo_catalogue_has_eight_briefs_two_per_family_and_96_plans():
    demo = demo_catalogue_load()
    families = sorted(demo.task_set.tasks.values_list("family", flat=True))
    assert families == sorted(["abstraction", "combination", "transformation", "adaptation"] * 2)
    assert Response.objects.filter(task__task_set=demo.task_set).count() == 96
    assert Response.objects.filter(is_primary=True).count() == 32


def test_demo_data_is_labelled_as_demo_everywhere():
    demo = demo_catalogue_load()
    assert demo.task_set.is_demo and "DEMO" in demo.task_set.description
    assert all(SubjectModel.objects.values_list("is_demo", flat=True))


def test_demo_unsplittable_answers_wait_for_the_llm_splitter():
    demo_catalogue_load()
    assert Response.objects.filter(normalisation_method="pending").count() == 2
    assert Response.objects.filter(normalisation_method="parser").count() == 10


def test_demo_loader_is_idempotent():
    demo_catalogue_load()
    again = demo_catalogue_load()
    assert (again.tasks.created, again.responses.created, again.responses.unchanged) == (0, 0, 96)


def test_demo_accounts_get_their_roles_and_passwords_once():
    first = demo_accounts_create()
    second = demo_accounts_create()
    assert all(first.values()) and not any(second.values())
    users = {u.username: user_roles(u) for u in get_user_model().objects.all()}
    assert "admin" in users["admin"] and "researcher" in users["researcher"]
    assert users["annotator1"] == frozenset({"annotator"})


def test_load_demo_under_production_settings_refuses_and_writes_nothing(settings):
    from django.core.management import CommandError, call_command

    settings.ATELIER_DEV, settings.DEBUG = False, False
    with pytest.raises(CommandError, match="refuses to run under production settings.*--allow-production"):
        call_command("load_demo", "--no-judge", stdout=io.StringIO())
    assert not get_user_model().objects.exists() and not SubjectModel.objects.exists()


def test_load_demo_allowed_under_production_never_prints_a_password(settings, monkeypatch):
    from django.core.management import call_command

    settings.ATELIER_DEV, settings.DEBUG = False, False
    monkeypatch.setattr("leaderboard.demo.secrets.token_urlsafe", lambda n: "PASSWORD-NOT-TO-PRINT")
    out = io.StringIO()
    call_command("load_demo", "--no-judge", "--allow-production", stdout=out)
    assert get_user_model().objects.filter(username="admin", is_superuser=True).exists()
    assert "PASSWORD-NOT-TO-PRINT" not in out.getvalue() and "changepassword" in out.getvalue()


def test_load_demo_on_a_development_machine_prints_the_new_passwords(settings, monkeypatch):
    from django.core.management import call_command

    settings.ATELIER_DEV = True
    monkeypatch.setattr("leaderboard.demo.secrets.token_urlsafe", lambda n: "shown-on-the-demo")
    out = io.StringIO()
    call_command("load_demo", "--no-judge", stdout=out)
    assert out.getvalue().count("shown-on-the-demo") == 5


def test_an_annotator_account_made_for_the_demo_campaigns_gets_its_password_from_load_demo():
    from leaderboard.demo import demo_annotator_accounts_ensure

    made = demo_annotator_accounts_ensure()
    assert [u.username for u in made] == ["annotator1", "annotator2", "annotator3"]
    assert not any(u.has_usable_password() for u in made)
    assert all(user_roles(u) == {"annotator"} for u in made)
    passwords = demo_accounts_create()
    for user in made:
        user.refresh_from_db()
        assert passwords[user.username] and user.check_password(passwords[user.username])


def test_the_demo_summary_lists_every_account_with_its_password_and_where_to_start():
    from leaderboard.demo import DEMO_ACCOUNTS, demo_accounts_refresh
    from leaderboard.management.commands.serve_demo import summary_lines

    passwords = demo_accounts_refresh()
    text = "\n".join(summary_lines("http://127.0.0.1:8000/", passwords))
    for username, _ in DEMO_ACCOUNTS:
        assert f"{username} " in text and passwords[username] in text
        assert get_user_model().objects.get(username=username).check_password(passwords[username])
    for where in ("http://127.0.0.1:8000/annotate/", "http://127.0.0.1:8000/leaderboards/",
                  "http://127.0.0.1:8000/easel/", "http://127.0.0.1:8000/c2/", "Ctrl-C"):
        assert where in text


def test_the_demo_summary_says_how_to_start_afresh_in_the_var_folder_the_demo_uses(settings, tmp_path):
    from leaderboard.management.commands.serve_demo import summary_lines

    settings.VAR_DIR = settings.BASE_DIR / "var"
    assert "`rm -rf var && make demo` (the demo database is in var/)" in "\n".join(summary_lines("http://h:1/", {}))
    settings.VAR_DIR = tmp_path / "my var"
    text = "\n".join(summary_lines("http://h:1/", {}))
    assert f"`rm -rf '{tmp_path}/my var' && ATELIER_VAR_DIR='{tmp_path}/my var' make demo`" in text
    assert f"(the demo database is in {tmp_path}/my var/)" in text and "rm -rf var " not in text

def test_serve_demo_refuses_under_production_settings(settings):
    from django.core.management import CommandError, call_command

    settings.ATELIER_DEV, settings.DEBUG = False, False
    with pytest.raises(CommandError, match="development machine only"):
        call_command("serve_demo", stdout=io.StringIO())
    assert not get_user_model().objects.exists()


def test_serve_demo_refuses_a_port_in_use_or_out_of_range_before_it_sets_passwords_or_starts_a_server(settings, monkeypatch):
    import socket
    import subprocess

    from django.core.management import CommandError, call_command

    settings.ATELIER_DEV = True
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("a server was started"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError, match=f"127.0.0.1:{port} is already in use.*PORT="):
            call_command("serve_demo", f"127.0.0.1:{port}", stdout=io.StringIO())
    for addrport in ("127.0.0.1:99999", "127.0.0.1:0"):
        with pytest.raises(CommandError, match="a port is 1–65535"):
            call_command("serve_demo", addrport, stdout=io.StringIO())
    assert not get_user_model().objects.exists()  # no demo account was made or given a new password
