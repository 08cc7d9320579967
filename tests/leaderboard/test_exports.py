"""The one LaTeX writer (engine.latex): escaping, and every LaTeX export of the demo compiled by
pdflatex — Ekphrasis snapshots, EASEL boards, C² runs and the calibrated boards (annotation) — as a
paper would include it (article class, booktabs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engine.latex import tex_escape
from tests.conftest import require_service
from tests.leaderboard.bundles.demo_bundles import demo_site_database_once, manage

#: Every LaTeX export of every demo board, written as <kind>-<id>.tex (the views' own functions).
WRITE_EXPORTS = """
import pathlib, sys
from annotation import calibrated_columns, calibration
from leaderboard.c2 import exports as c2_exports
from leaderboard.c2.models import C2Run
from engine.easel import exports as easel_exports
from leaderboard.easel import selectors as easel_selectors
from leaderboard.ekphrasis import results as ekphrasis_results
from leaderboard.ekphrasis.models import LeaderboardSnapshot
from leaderboard.models import TaskSet
out = pathlib.Path(OUT)
for snapshot in LeaderboardSnapshot.objects.all():
    (out / f"ekphrasis-{snapshot.pk}.tex").write_text(ekphrasis_results.export_latex(snapshot))
    for campaign in calibration.text_campaigns_for(snapshot):
        record = calibration.calibration_record_ensure(snapshot=snapshot, campaign=campaign)
        (out / f"ekphrasis_calibrated-{snapshot.pk}-{campaign.pk}.tex").write_text(calibration.calibration_export_latex(record))
for task_set in TaskSet.objects.filter(benchmark__kind="easel"):
    payload = easel_selectors.easel_leaderboard(task_set=task_set)
    (out / f"easel-{task_set.pk}.tex").write_text(easel_exports.export_latex(payload))
for run in C2Run.objects.filter(status=C2Run.Status.DONE, results__isnull=False):
    (out / f"c2-{run.pk}.tex").write_text(c2_exports.export_latex(run))
    for campaign in calibrated_columns.uos_campaigns_for_run(run):
        view = calibrated_columns.c2_run_calibrated(run=run, campaign=campaign)
        (out / f"c2_calibrated-{run.pk}-{campaign.pk}.tex").write_text(calibrated_columns.c2_calibrated_latex(view))
"""

#: What a paper's preamble needs for the exports: booktabs rules (texlive-latex-recommended).
DOCUMENT = r"""\documentclass{article}
\usepackage{booktabs}
\begin{document}
%s
\end{document}
"""


@pytest.fixture(scope="module")
def demo_latex_exports(tmp_path_factory) -> dict[str, list[Path]]:
    out = tmp_path_factory.mktemp("latex")
    manage("shell", "-c", f"OUT = {str(out)!r}\n" + WRITE_EXPORTS, database_url=demo_site_database_once())
    kinds: dict[str, list[Path]] = {}
    for path in sorted(out.glob("*.tex")):
        kinds.setdefault(path.stem.split("-")[0], []).append(path)
    return kinds


def pdflatex_errors(table: Path) -> str:
    """pdflatex's error lines for ``table`` wrapped in a document ("" when it compiles to a PDF)."""
    document = table.with_suffix(".document.tex")
    document.write_text(DOCUMENT % table.read_text(), encoding="utf-8")
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                             document.name], cwd=table.parent, capture_output=True, text=True, timeout=120)
    if result.returncode == 0 and document.with_suffix(".pdf").exists():
        return ""
    return "\n".join(line for line in result.stdout.splitlines() if line.startswith(("!", "l."))) or result.stdout[-2000:]


@pytest.mark.parametrize("kind", ["ekphrasis", "ekphrasis_calibrated", "easel", "c2", "c2_calibrated"])
def test_every_latex_export_of_the_demo_compiles_with_pdflatex(demo_latex_exports, kind):
    require_service("pdflatex")
    tables = demo_latex_exports.get(kind, [])
    assert tables, f"the demo has no {kind} LaTeX export"
    errors = {table.name: pdflatex_errors(table) for table in tables}
    assert not any(errors.values()), errors


def test_the_easel_export_carries_edge_iou_and_its_escaped_at_50_header(demo_latex_exports):
    tex = demo_latex_exports["easel"][0].read_text()
    assert r"@50\%" in tex and "Edge IoU" in tex


def test_the_ekphrasis_export_carries_the_per_dimension_intervals(demo_latex_exports):
    tex = demo_latex_exports["ekphrasis"][0].read_text()
    first_row = next(line for line in tex.splitlines() if line.endswith(r"\\") and "[" in line and "Model" not in line)
    # Overall's interval and one per dimension
    assert first_row.count("[") >= 2


@pytest.mark.parametrize("char", list("\\&%$#_{}~^"))
def test_every_reserved_character_is_escaped_so_that_pdflatex_prints_it(tmp_path, char):
    require_service("pdflatex")
    table = tmp_path / "t.tex"
    table.write_text(r"\begin{tabular}{ll}" + tex_escape(f"a{char}b") + r" & c \\ d & e \\ \end{tabular}")
    assert pdflatex_errors(table) == ""
