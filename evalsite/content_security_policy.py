"""django-csp's middleware with the site's policy headers built once (issue 30).

django-csp builds both headers (the policy and the report-only one) from the settings on every
response: ~55 µs of each annotator request's CPU, for two strings that only change with the settings.
Here a response with nothing of its own (no per-view ``csp_update``/``csp_replace``/config decorators,
no nonce the page asked for, not a debug error page) gets the headers built the first time, kept until a
``CONTENT_SECURITY_POLICY*`` setting changes; any other response is django-csp's own path unchanged.
"""

from __future__ import annotations

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

#: report_only -> the header built from the settings alone ("" when that policy is not configured).
_built: dict[bool, str] = {}

_OWN_ATTRIBUTES = ("_csp_config", "_csp_update", "_csp_replace", "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro")


@receiver(setting_changed)
def _policies_rebuilt(*, setting: str, **kwargs) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _built.clear()


def _settings_policy(report_only: bool) -> str:
    header = _built.get(report_only)
    if header is None:
        header = _built[report_only] = build_policy(report_only=report_only)
    return header


class SitePolicyCSPMiddleware(CSPMiddleware):
    def process_response(self, request, response):
        if (getattr(request, "_csp_nonce", None) is not None or response.status_code in (404, 500) and settings.DEBUG
                or any(getattr(response, name, None) is not None for name in _OWN_ATTRIBUTES)):
            return super().process_response(request, response)
        for report_only, header, exempt, setting in ((False, HEADER, "_csp_exempt", "CONTENT_SECURITY_POLICY"),
                                                     (True, HEADER_REPORT_ONLY, "_csp_exempt_ro",
                                                      "CONTENT_SECURITY_POLICY_REPORT_ONLY")):
            policy = _settings_policy(report_only)
            if not policy or header in response or getattr(response, exempt, False) is not False:
                continue
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES", None) or ()
            if not request.path_info.startswith(tuple(prefixes)):
                response[header] = policy
        # As django-csp: a nonce asked for after the header was written is an error, not a silent miss.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
