"""Pages of the bundles: the download behind each result page's bundle button, and imported boards."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from leaderboard.bundles.export import KINDS, BundleExportError, BundleSigningUnavailable, bundle_export
from leaderboard.bundles.imports import viewer_problem
from leaderboard.bundles.models import ImportedBoard
from leaderboard.bundles.signing import site_public_key_pem
from leaderboard.roles import require_researcher

#: What a download is answered while the signing key cannot be read (503).
SIGNING_UNAVAILABLE = "Bundles cannot be signed just now, so none is exported; ask this site's administrator."


def bundle_archive_response(kind: str, pk: int) -> FileResponse | HttpResponse:
    """The board's bundle as a ``.tar.gz`` download, or a 503 page while bundles cannot be signed."""
    try:
        return bundle_archive_download(kind, pk)
    except BundleSigningUnavailable:
        return HttpResponse(SIGNING_UNAVAILABLE + "\n", status=503, content_type="text/plain; charset=utf-8")


def bundle_archive_download(kind: str, pk: int) -> FileResponse:
    """The board's bundle as a ``.tar.gz`` download (built in a temporary directory, removed once sent);
    :class:`BundleSigningUnavailable` while the signing key cannot be read."""
    if kind not in KINDS:
        raise Http404("No such kind of leaderboard.")
    scratch = tempfile.TemporaryDirectory(prefix="bundle-download-")
    name = f"atelier-{kind}-{pk}-bundle.tar.gz"
    try:
        result = bundle_export(kind, pk, Path(scratch.name) / name)
    except BundleSigningUnavailable:
        scratch.cleanup()
        raise
    except BundleExportError as exc:
        scratch.cleanup()
        raise Http404(str(exc)) from exc
    handle = result.path.open("rb")
    response = FileResponse(handle, as_attachment=True, filename=name, content_type="application/gzip")
    # the file is open, so the directory may go once the response has been read to the end
    response._resource_closers.append(scratch.cleanup)
    return response


@require_safe
def bundle_download(request, kind: str, pk: int):
    require_researcher(request.user)
    return bundle_archive_response(kind, pk)


@require_safe
def signing_key(request):
    """The public key this site signs bundles with (PEM), for ``verify_bundle --public-key``: public, since
    a reviewer who checks a bundle need not have an account here."""
    try:
        pem = site_public_key_pem()
    except (OSError, ValueError):
        return HttpResponse("This site's bundle-signing key cannot be read just now; ask its administrator.\n",
                            status=503, content_type="text/plain; charset=utf-8")
    return HttpResponse(pem, content_type="text/plain; charset=utf-8")


@require_safe
def imported_board_list(request):
    require_researcher(request.user)
    return render(request, "leaderboard/bundles/imported_list.html", {"boards": ImportedBoard.objects.all()})


@require_safe
def imported_board_detail(request, pk: int):
    require_researcher(request.user)
    board = get_object_or_404(ImportedBoard, pk=pk)
    # A board imported before such viewers were refused may hold tables no page can draw: its page says so
    # and shows the rest, where drawing them was a 500 on every visit.
    problem = viewer_problem(board.viewer)
    return render(request, "leaderboard/bundles/imported_detail.html", {
        "board": board, "viewer": {} if problem else board.viewer, "viewer_problem": problem, "manifest": board.manifest,
        "task_set": board.manifest.get("task_set", {}),
    })
