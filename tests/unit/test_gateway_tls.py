"""TLS always verifies: the system trust store by default, a profile's CA bundle when given."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import GatewayError, TransientError
from gwdesk.gateway.http import ssl_context
from gwdesk.gateway.service import GatewayService


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def make_pki(directory: Path) -> tuple[Path, Path, Path]:
    """A private CA and a certificate for 127.0.0.1 signed by it: (ca.pem, cert.pem, key.pem)."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("gwdesk test CA"))
        .issuer_name(_name("gwdesk test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = (directory / n for n in ("ca.pem", "cert.pem", "key.pem"))
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_path, cert_path, key_path


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
