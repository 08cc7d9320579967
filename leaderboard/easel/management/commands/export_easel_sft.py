"""manage.py export_easel_sft: next-action training samples (EASEL-Data, easel.txt §4) from a run's trajectories."""

import json
from pathlib import Path

from django.core.management.base import CommandError

from leaderboard.easel import selectors
from leaderboard.easel.models import EaselRun
from leaderboard.management.progress_bar import progress_bar
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Write next-action samples of a run's reconstruction trajectories (painter runs are the intended source): "
            "curricula C1 and C2, coordinates quantised to integers in [0, 1000]; DIR/c1.jsonl, DIR/c2.jsonl, "
            "DIR/references/<task>.png and DIR/canvases/<curriculum>/<task>-<step>.png.")

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, metavar="ID", help="the EASEL run whose trajectories to export")
        self.add_output_argument(parser, default=None, metavar="DIR", help="the folder to write (created if missing)")
        parser.add_argument("--curricula", default="C1,C2", help="comma-separated: C1, C2 (default both)")

    def handle(self, *args, **opts):
        try:
            run = EaselRun.objects.select_related("task_set").get(pk=opts["run"])
        except EaselRun.DoesNotExist as exc:
            raise CommandError(f"no EASEL run {opts['run']}") from exc
        curricula = [c.strip().upper() for c in opts["curricula"].split(",") if c.strip()]
        if not curricula or any(c not in ("C1", "C2") for c in curricula):
            raise CommandError(f"--curricula: expected C1 and/or C2, got {opts['curricula']!r}")
        episodes = selectors.sft_episodes(run=run)
        if not episodes:
            raise CommandError(f"run {run.pk} has no finished reconstruction episode with stored steps")
        out = Path(opts["output"])
        if out.exists() and not out.is_dir():
            raise CommandError(f"-o/--output: {out} is a file; give a folder (created if missing)")
        try:
            (out / "references").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"-o/--output: {out} cannot be created ({exc.strerror})") from exc
        counts = dict.fromkeys(curricula, 0)
        files = {c: (out / f"{c.lower()}.jsonl").open("w", encoding="utf-8") for c in curricula}
        try:
            for trajectory in progress_bar(iterable=episodes, unit="episode", desc=f"SFT samples of run {run.pk}"):
                (out / "references" / f"{trajectory.task.id}.png").write_bytes(trajectory.reference_png)
                for curriculum in curricula:
                    folder = out / "canvases" / curriculum.lower()
                    folder.mkdir(parents=True, exist_ok=True)
                    for record, png in selectors.sft_samples(trajectory, curriculum=curriculum, seed=run.seed):
                        name = f"{record['task_id']}-{record['step']:03d}.png"
                        (folder / name).write_bytes(png)
                        record = {**record, "run": run.pk, "agent": run.agent_name,
                                  "reference": f"references/{record['task_id']}.png",
                                  "canvas": f"canvases/{curriculum.lower()}/{name}"}
                        files[curriculum].write(json.dumps(record, sort_keys=True) + "\n")
                        counts[curriculum] += 1
        finally:
            for handle in files.values():
                handle.close()
        if run.agent_kind != EaselRun.AgentKind.PAINTER:
            self.stderr.write(f"note: run {run.pk} is a {run.agent_kind} run, not the painter (EASEL-Data uses painter trajectories)")
        summary = ", ".join(f"{c} {n} samples" for c, n in counts.items())
        self.stdout.write(f"run {run.pk} ({run.agent_name}): {len(episodes)} trajectories → {summary} in {out}")
