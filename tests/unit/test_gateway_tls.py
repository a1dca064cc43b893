"""TLS always verifies: the system trust store by default, a profile's CA bundle when given."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import GatewayError, TransientError
from gwdesk.gateway.http import ssl_context
from gwdesk.gateway.service import GatewayService
from tests.pki import PrivateCa, make_pki


async def balance(_request: web.Request) -> web.Response:
    return web.json_response(
        {"Data": {"Balance": 1.5, "Currency": "AUD"}, "Status": "Success", "StatusCode": 200}
    )


@pytest.fixture
async def https_gateway(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    """An https server on loopback with a certificate from a private CA; yields (url, ca.pem)."""
    ca_path, cert_path, key_path = make_pki(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert_path, key_path)
    app = web.Application()
    app.router.add_post("/v2/account/balance", balance)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_tls)
    await site.start()
    port = runner.addresses[0][1]
    yield (f"https://127.0.0.1:{port}", ca_path)
    await runner.cleanup()


def service(url: str, ca_bundle: Path | None) -> GatewayService:
    profile = Profile(name="tls", rest_url=url, username="u", auth="basic", ca_bundle=ca_bundle)
    return GatewayService(profile, Secret("p"))


async def test_a_profiles_ca_bundle_is_trusted(https_gateway: tuple[str, Path]) -> None:
    url, ca_path = https_gateway
    async with service(url, ca_path) as gateway:
        assert (await gateway.balance()).currency == "AUD"


async def test_a_certificate_the_system_does_not_trust_is_refused(
    https_gateway: tuple[str, Path],
) -> None:
    url, _ = https_gateway
    async with service(url, None) as gateway:
        with pytest.raises(GatewayError, match="is not trusted") as caught:
            await gateway.balance()
    assert not isinstance(caught.value, TransientError)  # retrying cannot help


def test_the_default_context_verifies_hostnames() -> None:
    context = ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname


def test_an_unreadable_ca_bundle_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GatewayError, match="cannot be read"):
        ssl_context(tmp_path / "missing.pem")


async def test_a_ca_bundle_adds_to_the_system_cas_instead_of_replacing_them(
    https_gateway: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, system_ca = https_gateway  # the gateway's CA plays a CA the system trusts
    monkeypatch.setenv("SSL_CERT_FILE", str(system_ca))  # OpenSSL's default CA file
    other = tmp_path / "other"
    other.mkdir()
    profile_ca = PrivateCa(other, name="another private CA")

    async with service(url, profile_ca.path) as gateway:
        assert (await gateway.balance()).currency == "AUD"
