from django.core.management.base import CommandError
from tqdm import tqdm

from leaderboard.management.base import TaskSetCommand
from leaderboard.models import TaskSet
from leaderboard.selectors import task_set_get
from leaderboard.services.tig import tig_build


class Command(TaskSetCommand):
    help = "Extract and embed every response of a task set once for the Typed Idea Graphs (resumable: stored per response)."

    def add_arguments(self, parser):
        parser.add_argument("--task-set", required=True, dest="task_set")
        parser.add_argument("--version", dest="task_set_version", default=None)

    def handle(self, *args, **opts):
        try:
            task_set = task_set_get(name=opts["task_set"], version=opts["task_set_version"])
        except TaskSet.DoesNotExist as exc:
            raise CommandError(str(exc)) from exc
        with tqdm(total=task_set.tasks.count(), unit="task", desc="TIG populations") as bar:
            n = tig_build(task_set=task_set, progress=lambda done, total: bar.update(done - bar.n))
        self.stdout.write(f"{n} task population(s) extracted and embedded")
