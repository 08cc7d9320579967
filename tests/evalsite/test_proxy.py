"""Behind the proxy, login throttling counts the client's address, not the proxy's (evalsite/proxy.py)."""

from django.test import RequestFactory

from evalsite.proxy import client_address


def test_the_address_is_the_one_the_proxy_appended():
    request = RequestFactory().get("/", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7", REMOTE_ADDR="10.0.0.1")
    assert client_address(request) == "203.0.113.7"  # 6.6.6.6 came from the client: forgeable


def test_without_the_header_the_connection_address_is_used():
    assert client_address(RequestFactory().get("/", REMOTE_ADDR="10.0.0.9")) == "10.0.0.9"
