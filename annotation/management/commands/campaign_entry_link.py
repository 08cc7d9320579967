"""``manage.py campaign_entry_link CAMPAIGN_ID --panel prolific|mturk|generic``: print the campaign's
entry link with the panel's placeholders (opening the campaign to that panel first if it is not yet)."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import CommandError
from django.urls import reverse

from annotation import participants
from annotation.annotator_reads import campaign_get
from annotation.errors import AnnotationError
from annotation.panel_models import Panel, PanelStudy
from annotation.panels import entry_query, entry_signing_required
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Print a campaign's entry link for a recruitment panel, with the panel's placeholders "
            "(e.g. {{%PROLIFIC_PID%}}). Opens the campaign to the panel first when it is not yet.")

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")
        parser.add_argument("--panel", required=True, choices=Panel.values, help="the recruitment panel")
        parser.add_argument("--base-url", default=None,
                            help="the site's address, e.g. https://atelier.example.org (default: ATELIER_SITE_URL "
                                 "or http://localhost:8000)")

    def handle(self, *args, **opts):
        base = (opts["base_url"] or getattr(settings, "ATELIER_SITE_URL", "") or "http://localhost:8000").rstrip("/")
        address = urlsplit(base)
        if address.scheme not in ("http", "https") or not address.netloc:
            raise CommandError(f"--base-url: {base!r} is not an http:// or https:// address "
                               "(e.g. https://atelier.example.org)")
        campaign = campaign_get(pk=opts["campaign_id"])
        if campaign is None:
            raise CommandError(f"no campaign with id {opts['campaign_id']}")
        study = PanelStudy.objects.filter(campaign=campaign).first()
        if study is None or study.panel != opts["panel"]:
            try:
                study = participants.panel_study_open(campaign=campaign, panel=opts["panel"])
            except AnnotationError as exc:
                raise CommandError(f"campaign {campaign.pk}: {exc.message}") from exc
        path = reverse("annotation:panel_entry", args=[study.entry_token])
        self.stdout.write(base + path + entry_query(panel=study.panel, id_param=study.id_param,
                                                    signed=entry_signing_required(study)))
        if study.panel == Panel.MTURK:
            self.stderr.write("MTurk appends workerId, assignmentId, hitId and turkSubmitTo itself.")
        if campaign.status != campaign.Status.OPEN:
            self.stderr.write(f"Note: campaign {campaign.pk} is {campaign.status}; participants can enter once it is open.")
        self.stderr.write(f"Completion code {study.completion_code}, screen-out code {study.screen_out_code}.")
