"""``manage.py campaign_entry_signing CAMPAIGN_ID --new-secret|--off``: require a generic panel study's entries to
be signed (a new entry-signing secret, printed once on stdout, replacing any earlier one) or stop requiring it."""

from django.core.management.base import CommandError

from annotation import participants
from annotation.annotator_reads import campaign_get
from annotation.errors import AnnotationError
from annotation.panel_models import PanelStudy
from annotation.panels import ENTRY_SIGNATURE_PARAM
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Require a generic panel study's entries to be signed: --new-secret prints a new entry-signing secret "
            "(stdout, shown once; links signed with an earlier one stop entering); --off stops requiring it.")

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--new-secret", action="store_true",
                            help="make a new entry-signing secret (turns signing on, or replaces the secret)")
        action.add_argument("--off", action="store_true", help="entries need no signature any more")

    def handle(self, *args, **opts):
        campaign = campaign_get(pk=opts["campaign_id"])
        if campaign is None:
            raise CommandError(f"no campaign with id {opts['campaign_id']}")
        study = PanelStudy.objects.filter(campaign=campaign).first()
        if study is None:
            raise CommandError(f"campaign {campaign.pk} is not open to a panel "
                               f"(manage.py campaign_entry_link {campaign.pk} --panel generic opens it)")
        try:
            secret = participants.panel_study_signing_set(study=study, required=opts["new_secret"])
        except AnnotationError as exc:
            raise CommandError(f"campaign {campaign.pk}: {exc.message}") from exc
        if not secret:
            self.stderr.write(f"Campaign {campaign.pk}: entries need no signature any more.")
            return
        self.stdout.write(secret)
        self.stderr.write(f"Campaign {campaign.pk}: every entry link must now carry {ENTRY_SIGNATURE_PARAM}, the hex "
                          f"HMAC-SHA256 of '{study.entry_token}:<id>' keyed with this secret (README, \"Signed entries "
                          "(generic panels)\"); links unsigned or signed with an earlier secret stop entering. "
                          f"manage.py campaign_entry_link {campaign.pk} --panel generic prints the link.")
