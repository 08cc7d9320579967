from tqdm import tqdm

from leaderboard.management.base import TaskSetCommand
from leaderboard.services.tig import tig_build


class Command(TaskSetCommand):
    help = "Extract and embed every response of a task set once for the Typed Idea Graphs (resumable: stored per response)."

    def add_arguments(self, parser):
        parser.add_argument("--task-set", required=True, dest="task_set")
        parser.add_argument("--version", dest="task_set_version", default=None)

    def handle(self, *args, **opts):
        task_set = self.task_set_from(opts)
        with tqdm(total=task_set.tasks.count(), unit="task", desc="TIG populations") as bar:
            n = tig_build(task_set=task_set, progress=lambda done, total: bar.update(done - bar.n))
        self.stdout.write(f"{n} task population(s) extracted and embedded")
