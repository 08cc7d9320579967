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
    routes = {route.replace("<int:pk>", "{id}").replace("<assignment_token:token>", "{token}") for route in _api_routes()}
    assert routes == documented


def test_every_operation_documents_its_refusals_in_the_error_shape(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            for code in ("400", "401", "403", "429"):
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
