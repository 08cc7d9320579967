"""The one LaTeX writer (engine.latex): escaping, and every LaTeX export of the demo compiled by
pdflatex — Ekphrasis snapshots, EASEL boards, C² runs and the calibrated boards (annotation) — as a
paper would include it (article class, booktabs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engine.latex import latex_row, latex_table, tex_escape
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
                             document.name], cwd=table.parent, capture_output=True, encoding="utf-8", errors="replace",
                            timeout=120)  # pdflatex breaks its log lines inside a UTF-8 character
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


#: Names a researcher, an import or the API may give a model, a task set or a suite, each once a table's
#: body row and its caption: commands, catcode tricks, a row starting with "[" (read as the optional argument
#: of the previous row's \\), text pdflatex cannot typeset (emoji, CJK, controls, invisible characters).
HOSTILE_TEX_NAMES = [
    r"\input{/etc/passwd}", r"\immediate\write18{id}", "^^5cinput{/etc/passwd}", "}}{{ unbalanced", "100% #1 ~x &",
    "[1] first in brackets", "  [0pt] after spaces", "模型 通义千问", "model 😀", "a\x00b\x7fc\x1bd", "gpt\u200b-4o\u202e",
    "line\n\nbreak\x0cfeed", "p < 0.05 | x > y", "Modèle Ünïcode – C² × ½",
]


@pytest.mark.parametrize("name", HOSTILE_TEX_NAMES)
def test_a_hostile_name_in_a_row_and_a_caption_compiles_and_runs_nothing(tmp_path, name):
    require_service("pdflatex")
    table = tmp_path / "t.tex"
    body = [latex_row(["plain", "1"]), latex_row([tex_escape(name), "2"])]
    table.write_text("\n".join(latex_table(columns="lc", head=[latex_row(["Model", "Score"])], body=body,
                                           caption=tex_escape(name))), encoding="utf-8")
    assert pdflatex_errors(table) == ""
    log = table.with_suffix(".document.log").read_text(errors="replace")
    assert "/etc/passwd" not in log and "root:" not in log


@pytest.mark.parametrize(("text", "printed"), [
    ("通", r"\texttt{U+901A}"), ("a\u200bb", r"a\texttt{U+200B}b"), ("a\nb\tc", "a b c"), ("<|>", r"\textless{}\textbar{}\textgreater{}"),
    ("[x] y", "{[}x] y"), ("  [0pt] z", "  {[}0pt] z"), ("a [x]", "a [x]"), ("Modèle – C²", "Modèle – C²"),
])
def test_tex_escape_prints_what_pdflatex_cannot_typeset_as_its_code_point(text, printed):
    assert tex_escape(text) == printed
