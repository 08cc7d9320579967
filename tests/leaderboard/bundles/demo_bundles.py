"""The demo's three boards exported as bundles, once per test session, entirely through the command line
in child processes with their own throwaway SQLite database: the test database stays empty, so that
importing a bundle into it is importing into a fresh site.

A fake API key is planted first where an exporter could leak it: as the value of a model's key
variable, in the Ekphrasis and C² run configurations (an ``api_key`` field and an ``Authorization``
header) and in the text of one C² sample; the site's ``SECRET_KEY`` is a fake one too; the secret-scan
test then searches every bundle byte for both.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FAKE_KEY_ENV = "ATELIER_TEST_FAKE_PROVIDER_KEY"
FAKE_KEY = "sk-fake-bundle-3f9a7c1e5d2b8a604c1f"
#: The site's own secret in the exporting process (never the development default, so a leak is visible).
FAKE_SECRET_KEY = "atelier-bundle-test-secret-key-5b0e9d47c2a18f36"
#: A database no process can reach: verify_bundle must not need one.
NOWHERE_DATABASE = "postgres://nobody@127.0.0.1:9/no_database"

PLANT = f"""
from leaderboard.c2.models import C2Run, C2Sample
from leaderboard.ekphrasis.models import JudgeRun
from leaderboard.models import SubjectModel
SubjectModel.objects.filter(is_demo=True, role="subject").update(api_key_env="{FAKE_KEY_ENV}")
for run in JudgeRun.objects.all():
    run.config = {{**run.config, "api_key": "{FAKE_KEY}"}}
    run.save(update_fields=["config"])
for run in C2Run.objects.all():
    run.config = {{**run.config, "headers": {{"Authorization": "Bearer {FAKE_KEY}"}}}}
    run.save(update_fields=["config"])
# a divergent sample (rated, not regraded from its text: the exporter's redaction leaves its numbers alone)
sample = C2Sample.objects.filter(run=C2Run.objects.order_by("pk").first(),
                                 task__family__in=["story", "idea", "visual_story"]).order_by("pk").first()
sample.text = sample.text + " (the key was {FAKE_KEY})"
sample.save(update_fields=["text"])
"""

CAMPAIGNS = """
from annotation.demo import demo_campaigns_load
from leaderboard.models import TaskSet
demo_campaigns_load(task_set=TaskSet.objects.get(name="ekphrasis-demo"))
"""


def child_env(database_url: str) -> dict[str, str]:
    return {**os.environ, "ATELIER_DEV": "true", "DATABASE_URL": database_url, FAKE_KEY_ENV: FAKE_KEY,
            "SECRET_KEY": FAKE_SECRET_KEY}


def manage(*args: str, database_url: str, check: bool = True, timeout: float = 1800) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=child_env(database_url),
                            capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"manage.py {' '.join(args)[:200]} exited {result.returncode}:\n{result.stderr[-3000:]}")
    return result


def demo_bundles_built(base: Path) -> dict[str, Path]:
    """{kind: bundle path} of the demo's boards (Ekphrasis and C² as directories, EASEL as a .tar.gz)."""
    out = {"ekphrasis": base / "ekphrasis-bundle", "easel": base / "easel-bundle.tar.gz", "c2": base / "c2-bundle"}
    base.mkdir(parents=True, exist_ok=True)
    if (base / "done").exists():
        return out
    database = f"sqlite:///{base / 'demo.sqlite3'}"
    # the demo's Ekphrasis campaigns (as load_demo_campaigns makes them first): the text-pairwise one's
    # simulated labels give the demo snapshot a human-calibrated view, which its bundle then carries
    for command in (["migrate", "-v0"], ["load_demo", "--no-accounts"], ["load_demo_easel"], ["load_demo_c2"],
                    ["shell", "-c", CAMPAIGNS], ["shell", "-c", PLANT]):
        manage(*command, database_url=database)
    ids = manage("shell", "-c", "from leaderboard.ekphrasis.models import LeaderboardSnapshot\nfrom leaderboard.models import TaskSet\n"
                 "from leaderboard.c2.models import C2Run\n"
                 "print('IDS', LeaderboardSnapshot.objects.order_by('pk').first().pk,"
                 " TaskSet.objects.get(benchmark__kind='easel').pk, C2Run.objects.order_by('pk').first().pk)",
                 database_url=database).stdout
    ids = next(line for line in ids.splitlines() if line.startswith("IDS ")).split()[1:]
    for (kind, path), ident in zip(out.items(), ids, strict=True):
        manage("export_bundle", kind, ident, "-o", str(path), database_url=database)
    (base / "done").write_text("ok")
    return out


_BUILT: dict[str, dict[str, Path]] = {}


def demo_bundles_once() -> dict[str, Path]:
    """:func:`demo_bundles_built` once per test process, in a directory of its own (not under pytest's
    basetemp, which other pytest runs on the machine may rotate away while this one runs); removed at exit."""
    if "bundles" not in _BUILT:
        base = Path(tempfile.mkdtemp(prefix="atelier-demo-bundles-"))
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        _BUILT["bundles"] = demo_bundles_built(base)
    return _BUILT["bundles"]


SITE = """
from django.contrib.auth import get_user_model
from annotation.demo import DEMO_ANNOTATORS
from annotation.demo_validation import validation_demo_load
from annotation.models import Campaign
from leaderboard.demo import DEMO_ACCOUNTS, demo_accounts_create
demo_accounts_create()
validation_demo_load()
users = get_user_model().objects.filter(username__in=[name for name, _ in DEMO_ACCOUNTS])
for user in users:
    user.set_password(PASSWORD)
    user.save()
for campaign in Campaign.objects.filter(is_demo=True):  # the bundles' demo made them before the accounts
    campaign.annotators.add(*users.filter(username__in=DEMO_ANNOTATORS))
"""


def demo_site_database_once() -> str:
    """The database URL of the whole demo as ``make demo`` leaves it — the bundles' demo database copied,
    with the EASEL/C² validation campaigns and the demo accounts (password ``tests.factories.PASSWORD``)
    added — once per test process. The bundles' own database is left as it was."""
    if "site" not in _BUILT:
        from tests.factories import PASSWORD

        base = demo_bundles_once()["ekphrasis"].parent
        shutil.copy(base / "demo.sqlite3", base / "site.sqlite3")
        url = f"sqlite:///{base / 'site.sqlite3'}"
        manage("shell", "-c", f"PASSWORD = {PASSWORD!r}\n" + SITE, database_url=url)
        _BUILT["site"] = {"url": url}
    return _BUILT["site"]["url"]
