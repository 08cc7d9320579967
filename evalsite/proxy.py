"""The client's address behind the one reverse proxy ATELIER_BEHIND_PROXY says is in front."""

from __future__ import annotations

from django.http import HttpRequest


def client_address(request: HttpRequest) -> str | None:
    """The right-most X-Forwarded-For entry: the address our proxy appended. Entries to its left
    came from the client and can be forged; without the header, the connection's address."""
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    return hops[-1] if hops else request.META.get("REMOTE_ADDR")
