"""The OpenAPI schema of /api/v1/: every route is documented, with its refusals, in the one error shape."""

from __future__ import annotations

import pytest
from django.urls import get_resolver
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def _api_routes() -> set[str]:
    (api,) = [p for p in get_resolver().url_patterns if str(p.pattern) == "api/v1/"]
    return {str(p.pattern) for p in api.url_patterns} - {"schema/", "docs/", "redoc/"}


def test_every_api_route_is_an_operation_of_the_schema(schema):
    documented = {path.removeprefix("/api/v1/") for path in schema["paths"]}
    routes = {route.replace("<int:pk>", "{id}").replace("<assignment_token:token>", "{token}")
              .replace("<shown_slot:slot>", "{slot}") for route in _api_routes()}
    assert routes == documented


def test_every_operation_documents_its_refusals_in_the_error_shape(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            for code in ("400", "401", "403", "414", "429"):  # 414: an address past the site's limit, any operation
                content = operation["responses"][code]["content"]["application/json"]["schema"]
                assert content == {"$ref": "#/components/schemas/Error"}, (method, path, code)


def test_operations_taking_an_id_document_404(schema):
    for path, methods in schema["paths"].items():
        if "{id}" in path:
            assert all("404" in op["responses"] for op in methods.values()), path


def test_every_operation_accepts_a_token_or_the_session(schema):
    assert schema["components"]["securitySchemes"]["apiToken"] == {
        "type": "http", "scheme": "bearer", "description": "An API token from /account/api-tokens/."}
    for methods in schema["paths"].values():
        for operation in methods.values():
            assert {"apiToken": []} in operation["security"] and {"cookieAuth": []} in operation["security"]


# -- the schema and its docs need a valid session or token (issue 23: any Authorization header was enough)

SCHEMA_AND_DOCS = ["/api/v1/schema/", "/api/v1/docs/", "/api/v1/redoc/"]


@pytest.mark.parametrize("path", SCHEMA_AND_DOCS)
@pytest.mark.parametrize("header", [None, "Bearer x", "Bearer atl_not-a-real-token", "Token x", "Basic Zm9vOmJhcg==",
                                    "Bearer", "nonsense"])
def test_the_schema_and_docs_refuse_a_request_without_a_valid_session_or_token(client, path, header):
    extra = {"HTTP_AUTHORIZATION": header} if header is not None else {}
    response = client.get(path, **extra)
    assert response.status_code in (401, 403), (path, header, response.status_code)
    assert b"openapi" not in response.content.lower() and b"swagger" not in response.content.lower()


@pytest.mark.parametrize("path", SCHEMA_AND_DOCS)
def test_the_schema_and_docs_answer_a_valid_token(rita, path):
    from leaderboard.api_tokens.services import api_token_create

    _, secret = api_token_create(user=rita, name="docs")
    response = django_client().get(path, HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200


@pytest.mark.parametrize("path", SCHEMA_AND_DOCS)
def test_the_schema_and_docs_answer_a_session(client, alice, path):
    client.force_login(alice)
    assert client.get(path).status_code == 200


def test_a_bad_token_on_the_schema_is_refused_in_the_api_error_shape(client):
    response = client.get("/api/v1/schema/", HTTP_AUTHORIZATION="Bearer x")
    assert response.status_code == 401
    assert set(response.json()) == {"error", "message", "details"} and response.json()["error"] == "not_authenticated"


def django_client():
    from django.test import Client

    return Client()


def _concrete(route: str) -> str:
    """An address of ``route`` with a plausible value in each converter (an id, a token, a slot)."""
    import re

    values = {"int": "1", "assignment_token": "abcdefghijklmnop", "shown_slot": "A"}
    return "/api/v1/" + re.sub(r"<(\w+):\w+>", lambda m: values.get(m.group(1), "x"), route)


@pytest.mark.parametrize("header", ["Bearer x", "Bearer atl_not-a-real-token", "Basic Zm9vOmJhcg==", "nonsense"])
def test_no_api_address_answers_a_request_whose_only_credential_is_a_bogus_header(client, header):
    # the login middleware lets /api/v1/ requests that carry an Authorization header through for DRF to
    # authenticate: every view behind it must refuse them (before it looks anything up)
    answered = {}
    for route in sorted(_api_routes()):
        for method in ("get", "post"):
            response = getattr(client, method)(_concrete(route), HTTP_AUTHORIZATION=header)
            if response.status_code not in (401, 403):
                answered[f"{method.upper()} {route}"] = response.status_code
    assert answered == {}


def test_the_readme_names_the_schema_and_docs_where_they_are_served():
    """README's sentence on them named `/docs/` and `/redoc/`, which are 404s: they are under /api/v1/."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    sentence = re.search(r"The schema and its docs \(([^)]*)\)", readme).group(1)
    assert re.findall(r"`([^`]+)`", sentence) == SCHEMA_AND_DOCS
