"""The outbound address guard: what a user-given address may reach."""

import ipaddress

import pytest

from apps.core.outbound import OutboundRefused, address_kind, url_check


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "127.0.0.1, a loopback address"),
        ("http://localhost:8000/admin", "a loopback address"),
        ("http://[::1]/", "::1, a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "a loopback address"),
        ("http://10.1.2.3/", "10.1.2.3, a private address"),
        ("http://192.168.0.10/", "a private address"),
        ("http://172.16.5.4/", "a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254, a link-local address"),
        ("http://[fe80::1]/", "a link-local address"),
        ("http://0.0.0.0/", "an unspecified address"),
        ("http://100.64.0.1/", "a non-public address"),
        ("file:///etc/passwd", "only http and https addresses are fetched (scheme: file)"),
        ("gopher://example.com/", "(scheme: gopher)"),
        ("example.com/page", "(scheme: none)"),
        ("http://admin:pw@10.0.0.1/", "must not carry a user name or password"),
        ("http://example.com:99999/", "is not a valid address"),
    ],
)
def test_it_refuses_addresses_that_reach_what_only_the_server_can(url, reason):
    with pytest.raises(OutboundRefused) as refused:
        url_check(url)

    assert reason in str(refused.value)


def test_the_setting_opens_the_networks_it_names_and_no_other(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["10.0.0.0/8", "127.0.0.1"]

    assert url_check("http://10.1.2.3:8080/wiki?page=1").address == "10.1.2.3"
    assert url_check("http://127.0.0.1/").path == "/"
    with pytest.raises(OutboundRefused, match="127.0.0.2, a loopback address"):
        url_check("http://127.0.0.2/")
    with pytest.raises(OutboundRefused, match="a link-local address"):
        url_check("http://169.254.169.254/")


def test_public_addresses_are_allowed():
    target = url_check("https://93.184.215.14/page")

    assert (target.scheme, target.port, target.address) == ("https", 443, "93.184.215.14")
    assert address_kind(ipaddress.ip_address("8.8.8.8")) is None
