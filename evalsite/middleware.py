"""Login is required everywhere except the login page, static files, health and the bundle-signing public
key; a crowd study's
participant reaches their study's pages only; an MTurk study's cookies reach MTurk's frame; a visit to
an address that takes only a form's submission gets the site's 405 page."""

import re
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.handlers.wsgi import get_bytes_from_wsgi
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.functional import SimpleLazyObject, empty

# /metrics guards itself (loopback or token: evalsite/metrics.py); health and metrics never read the session,
# so they answer while the database is away. Crowd studies' entry links (/annotate/p/): each of their pages
# admits only its own participant. The bundle-signing public key is for reviewers, who need no account.
PUBLIC_PREFIXES = ("/accounts/login/", "/static/", "/healthz", "/readyz", "/metrics", "/favicon.ico", "/annotate/p/",
                   "/bundles/signing-key.pem")
#: Besides the public ones, the only pages a participant's account opens (issue 25).
PARTICIPANT_PREFIXES = ("/accounts/logout/",)


class LoginRequiredEverywhere:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # The path first: reading request.user loads the session from the database.
        if request.path.startswith(PUBLIC_PREFIXES):
            return self.get_response(request)
        if not _user_itself(request).is_authenticated:
            if request.path.startswith("/api/v1/") and "HTTP_AUTHORIZATION" in request.META:
                return self.get_response(request)  # a token: DRF authenticates it (or refuses, 401)
            if request.path.startswith("/api/v1/"):
                return JsonResponse({"error": "not_authenticated", "message": "Log in or send an API token.",
                                     "details": {}}, status=401, headers={"WWW-Authenticate": 'Bearer realm="api"'})
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": "Authentication required."}, status=401)
            return redirect_to_login(login_next(request), settings.LOGIN_URL)
        if not request.path.startswith(PARTICIPANT_PREFIXES) and (study := _participant_study(request.user)):
            return _participant_refused(request, study)
        return self.get_response(request)


def _user_itself(request):
    """``request.user``, read (the session and its user loaded, as reading ``is_authenticated`` loads them), and
    put in place of ``AuthenticationMiddleware``'s lazy wrapper for the rest of the request: the later reads (the
    participant check, DRF's session authentication, the view) find the user itself, not a proxy whose every
    attribute read raised and swallowed an ``AttributeError`` first (issue 30). The same object either way."""
    user = request.user
    if type(user) is SimpleLazyObject:
        if user._wrapped is empty:
            user._setup()
        request.user = user = user._wrapped
    return user


#: What a path keeps as it is: ``django.utils.encoding.escape_uri_path``'s safe characters, and ``%`` where it
#: starts an escape (:func:`login_next`). A query arrives percent-encoded already: ``iri_to_uri``'s.
_PATH_SAFE = "/:@&+$,-_.!~*'()%"
_QUERY_SAFE = "/%[]=:;$&()+,!?*@'~"
_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def login_next(request) -> str:
    """The address the login sends an anonymous visitor back to: the one they asked for, percent-encoded
    once. Django decodes the path it is given, except the bytes that are not UTF-8, which it percent-encodes
    again (``GET /%ff%fe`` is ``request.path`` ``/%FF%FE``); ``request.get_full_path()`` then encoded their
    ``%`` a second time, and the login led to the 404 of ``/%25FF%25FE``, another address. Here a ``%`` that
    starts an escape stays one, so the login leads to the 404 of the address asked for; a ``%`` the visitor
    sent as ``%25`` and that two hex digits follow reads as that escape (Django's decoding left no way to
    tell them apart), an address of this site all the same. A path starting with two slashes has its second as ``%2F``
    (the same path to this site): the address never reads as another host's (``//host``), which the login
    would refuse to return to. The login checks the address itself too (``url_has_allowed_host_and_scheme``)."""
    address = quote(_LONE_PERCENT.sub("%25", request.path), safe=_PATH_SAFE)
    if address.startswith("//"):
        address = "/%2F" + address[2:]  # two characters more at most: the longest address still fits the redirect
    # The query as the server received it (Django leaves it so in META; its get_full_path read a byte past
    # ASCII as latin-1 text and sent it back as that text's UTF-8).
    query = get_bytes_from_wsgi(request.META, "QUERY_STRING", "")
    return address + ("?" + quote(query, safe=_QUERY_SAFE) if query else "")


def _participant_study(user):
    """The panel study of a participant's account, else None; whose account is a participant's is
    :func:`annotation.participant_accounts.account_participant`'s to say (no query for a password's)."""
    # Imported here: leaderboard's views import this module (form_page), and leaderboard sits below annotation.
    from annotation.participant_accounts import account_participant

    participant = account_participant(user)
    return None if participant is None else participant.study


def _participant_refused(request, study):
    """Every page outside the study (the site's pages, the API, the API-token page): refused, and said so."""
    message = "This account belongs to a study's participant: it opens that study's pages only."
    if request.path.startswith("/api/"):
        return JsonResponse({"error": "participant_only", "message": message, "details": {}}, status=403)
    return render(request, "annotation/panel/problem.html", {
        "study": study, "title": "Only your study's pages are open to you",
        "message": message, "back_to_study": True,
    }, status=403)


class FramedStudyCookies:
    """The cookies a framed study's page sets (a response marked ``framed_study_cookies``: an MTurk study's
    pages, shown in MTurk's frame) — the session and CSRF cookies, and the entry's browser key
    (``ATELIER_PANEL_KEY_COOKIE_NAME``) — are ``SameSite=None; Secure; Partitioned``, so the
    browser sends them back from inside a frame of another site (kept in that site's partition); every other
    response keeps the site's ``SameSite=Lax``. Placed above the session and CSRF middleware: it sees their cookies."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(response, "framed_study_cookies", False):
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME, settings.ATELIER_PANEL_KEY_COOKIE_NAME):
                if name in response.cookies:
                    cookie = response.cookies[name]
                    cookie["samesite"], cookie["secure"] = "None", True
                    # Partitioned (CHIPS): kept in MTurk's partition only, and accepted where the browser
                    # refuses other third-party cookies. Python's Morsel has no such attribute before 3.14:
                    # it rides on the path (written out as "Path=/; Partitioned").
                    if "partitioned" not in cookie["path"].lower():
                        cookie["path"] = f"{cookie['path'] or '/'}; Partitioned"
        return response


class MethodNotAllowedPage:
    """A view that takes only a form's POST (Start a run, resume, import …) answers a visit with Django's
    empty 405, which a browser shows as its own blank error ("HTTP ERROR 405"). A researcher meets it by
    logging in again after the session ran out mid-form: the login's ``next`` is the form's address. The
    405 keeps its status and ``Allow`` header and becomes the site's page (JSON on API paths), saying so,
    with a link to the page holding the form (:func:`form_page_url`) and to the page the visitor came from."""

    def __init__(self, get_response):
        self.get_response = get_response

    def process_view(self, request, view_func, view_args, view_kwargs):
        request.form_page_of_view = (view_func, view_kwargs)

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code != 405 or getattr(response, "streaming", False) or response.content:
            return response
        from evalsite.error_pages import error_response

        allowed = response.get("Allow", "")
        page = error_response(request, 405, (
            f"This address takes a form's submission ({allowed}), not a visit, so nothing was done. Go back to "
            "the page with the form and submit it again."),
            links={"form": form_page_url(request), "came_from": _came_from(request)})
        page["Allow"] = allowed
        return page


def form_page(url_name: str):
    """Declare the page (a URL name, reversed with the view's own URL arguments where it takes them) whose
    form posts to this POST-only view, when it is not the address one level up (``/runs/new/``'s form sits
    on the leaderboards page, not at ``/runs/``)."""

    def declare(view):
        view.form_page = url_name
        return view

    return declare


def form_page_url(request) -> str:
    """The page whose form posts to ``request.path``: the view's declared :func:`form_page`, else the nearest
    address above it that is a page (``/easel/runs/new/`` → ``/easel/``, ``/runs/5/resume`` → ``/runs/5/``)."""
    from django.urls import NoReverseMatch, Resolver404, resolve, reverse

    view, kwargs = getattr(request, "form_page_of_view", (None, {}))
    declared = getattr(view, "form_page", "")
    if declared:
        for arguments in (kwargs, {}):
            try:
                return reverse(declared, kwargs=arguments)
            except NoReverseMatch:
                continue
    parts = request.path.rstrip("/").split("/")
    while len(parts) > 1:
        parts.pop()
        candidate = "/".join(parts) + "/"
        try:
            match = resolve(candidate)
        except Resolver404:
            continue
        if not _takes_only_posts(match.func):
            return candidate
    return ""


def _takes_only_posts(view) -> bool:
    # require_POST / require_http_methods keep the allowed methods in their wrapper's closure
    while view is not None:
        code = getattr(view, "__code__", None)
        if code is not None and "request_method_list" in code.co_freevars:
            methods = view.__closure__[code.co_freevars.index("request_method_list")].cell_contents
            return "GET" not in methods
        view = getattr(view, "__wrapped__", None)
    return False


def _came_from(request) -> str:
    """The Referer when it is a page of this site other than this address (never another site's)."""
    from urllib.parse import urlsplit

    from django.utils.http import url_has_allowed_host_and_scheme

    referer = urlsplit(request.headers.get("Referer", ""))
    if not referer.path or referer.netloc != request.get_host() or referer.path == request.path:
        return ""
    back = referer.path + (f"?{referer.query}" if referer.query else "")
    # a path that begins "//" or "/\" is, as an href, another host's address (a protocol-relative URL)
    return back if url_has_allowed_host_and_scheme(back, allowed_hosts=None) else ""
