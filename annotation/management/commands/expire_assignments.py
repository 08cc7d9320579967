from django.core.management.base import CommandError

from annotation import participants, services
from annotation.annotator_reads import campaign_get
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = (
        "Return overdue active assignments to the pool (what the periodic Celery task "
        "annotation.expire_assignments does). Idempotent: a second run expires nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", type=int, metavar="ID", help="only this campaign (id); default: every campaign")

    def handle(self, *args, **opts):
        campaign = None
        if opts["campaign"] is not None:
            campaign = campaign_get(pk=opts["campaign"])
            if campaign is None:
                raise CommandError(f"no campaign with id {opts['campaign']}")
        timed_out = participants.participants_time_out(campaign=campaign)
        if timed_out:
            self.stdout.write(f"{timed_out} crowd participant(s) past their time limit timed out.")
        ended = participants.participants_study_closed(campaign=campaign)
        if ended:
            self.stdout.write(f"{ended} crowd participant(s) of a closed campaign ended (closed before work or completed).")
        expired = services.assignments_expire(campaign=campaign)
        where = f"campaign {campaign.pk} ({campaign})" if campaign is not None else "all campaigns"
        self.stdout.write(f"{expired} overdue assignment(s) returned to the pool ({where}).")
