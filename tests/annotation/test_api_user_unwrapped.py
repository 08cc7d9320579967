"""The annotator endpoints hand their view the user itself, not the session middleware's lazy wrapper
(annotation/api.py: AnnotationAPIView.perform_authentication)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import path
from django.utils.functional import SimpleLazyObject
from rest_framework.response import Response

from annotation.api import AnnotationAPIView
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]
seen: dict = {}


class UserSeen(AnnotationAPIView):
    def post(self, request):
        seen.update(view=request.user, django=request._request.user)
        return Response({"pk": request.user.pk})


urlpatterns = [path("annotate/api/user-seen", UserSeen.as_view())]


def test_the_view_and_djangos_request_hold_the_user_itself():
    (ann,) = annotators(1, prefix="unwrapped")
    from django.test import Client

    client = Client()
    assert client.login(username=ann.username, password=PASSWORD)
    response = client.post("/annotate/api/user-seen", {}, content_type="application/json")
    assert response.status_code == 200 and response.json() == {"pk": ann.pk}
    assert type(seen["view"]) is get_user_model() and seen["view"] == ann
    assert seen["django"] is seen["view"]
    assert not isinstance(seen["view"], SimpleLazyObject)



def plain_page(request):
    from django.http import JsonResponse

    seen.update(page=request.user)
    return JsonResponse({"pk": request.user.pk})


urlpatterns.append(path("plain-page", plain_page))


def test_every_page_after_the_login_check_holds_the_user_itself():
    """evalsite/middleware.py: the login check reads the user and leaves the user itself on the request."""
    (ann,) = annotators(1, prefix="unwrapped-page")
    from django.test import Client

    client = Client()
    assert client.login(username=ann.username, password=PASSWORD)
    assert client.get("/plain-page").json() == {"pk": ann.pk}
    assert type(seen["page"]) is get_user_model() and seen["page"] == ann
