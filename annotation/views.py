from django.shortcuts import render

from leaderboard.roles import require_annotator, require_researcher


def queue(request):
    require_annotator(request.user)
    return render(request, "annotation/queue.html", {"campaigns": []})


def campaign_list(request):
    require_researcher(request.user)
    return render(request, "annotation/campaign_list.html", {"campaigns": []})
