"""The dashboard's live side: a small JSON status a researcher's open dashboard polls, so the page says
when new labels arrived since it was computed (static/js/dashboard_live.js)."""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.views.decorators.http import require_safe

from annotation import annotator_reads
from leaderboard.roles import require_researcher


@require_safe
def campaign_live_status(request, pk: int):
    require_researcher(request.user)
    campaign = annotator_reads.campaign_get(pk=pk)
    if campaign is None:
        raise Http404("No such campaign.")
    return JsonResponse({"status": campaign.status, "labels": annotator_reads.campaign_label_count(campaign=campaign)})
