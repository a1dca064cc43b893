"""TLS to the sandbox over https: always verified; a refusal says what the operator can do.

The sandbox gets certificates from a private CA (`tests.pki`). Each refusal is tried
on both faces: a REST send, and a Lodge call through zeep (SOAP 1.2), whose WSDL and
envelopes travel over the same verifying client.

Plain http to another machine is refused when the profile is made: the REST URL's
case is `tests/unit/test_gateway_settings.py::test_profile_fields_are_checked`; the
Lodge URL and addresses that only look local are covered here.
"""

from __future__ import annotations

import datetime as dt
import re
import ssl
from pathlib import Path
from typing import Any, Literal

import pytest

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import GatewayError, TransientError
from gwdesk.gateway.http import HttpSettings
from gwdesk.gateway.lodge.zeep_client import LodgeTransport
from gwdesk.gateway.retry import RetryPolicy
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.rest_support import send_one, sending_with
from tests.pki import PrivateCa

Face = Literal["rest", "lodge"]
FACES: tuple[Face, ...] = ("rest", "lodge")
MOBILE = "0412345678"
#: One try each: a certificate refusal must not be retried anyway, and must be quick.
ONCE = RetryPolicy(attempts=1, send_attempts=1)
SRC = Path(__file__).resolve().parents[2] / "src" / "gwdesk"
#: Ways Python code switches certificate checking off.
UNVERIFIED = re.compile(
    r"verify\s*=\s*False|CERT_NONE|CERT_OPTIONAL|check_hostname\s*=\s*False"
    r"|_create_unverified_context"
)


@pytest.fixture
def ca(tmp_path: Path) -> PrivateCa:
    return PrivateCa(tmp_path)


def https_sandbox(sandbox_factory: SandboxFactory, certificate: tuple[Path, Path]) -> SandboxThread:
    cert, key = certificate
    return sandbox_factory(tls_cert=cert, tls_key=key)


def profile(sandbox: SandboxThread, ca_bundle: Path | None, **extra: Any) -> Profile:
    return Profile.model_validate(
        {
            "name": "tls",
            "rest_url": sandbox.rest_url,
            "lodge_url": sandbox.lodge_url,
            "soap_namespace": sandbox.config.namespace,
            "lodge_port": "soap12",
            "username": "demo",
            "timezone": sandbox.config.timezone,
            "ca_bundle": ca_bundle,
            **extra,
        }
    )


def service(sandbox: SandboxThread, ca_bundle: Path | None, **extra: Any) -> GatewayService:
    return GatewayService(
        profile(sandbox, ca_bundle, **extra),
        Secret("demo"),
        retry=ONCE,
        http=HttpSettings(connect=5, read=10),
    )


def lodged(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


async def refusal(gateway: GatewayService, face: Face, folder: Path) -> GatewayError:
    """The error a send on `face` ends in; fails the test if the send went through."""
    if face == "rest":
        async with sending_with(gateway, folder) as sending:
            outcome = await send_one(sending, "Over TLS", MOBILE)
        [sent] = outcome.failed
        assert sent.error is not None
        return sent.error
    with pytest.raises(GatewayError) as caught:
        await gateway.lodge.lodge_sms(MOBILE, "Over TLS")
    return caught.value


# ---- verified connections work -------------------------------------------------------------


def test_the_sandbox_serves_https_when_given_a_certificate(
    sandbox_factory: SandboxFactory, ca: PrivateCa
) -> None:
    sandbox = https_sandbox(sandbox_factory, ca.issue())
    assert sandbox.rest_url.startswith("https://127.0.0.1:")
    assert sandbox.lodge_url == f"{sandbox.rest_url}/dotnet/Lodge.asmx"


async def test_a_rest_send_over_https_works_with_the_profiles_ca_bundle(
    sandbox_factory: SandboxFactory, ca: PrivateCa, tmp_path: Path
) -> None:
    sandbox = https_sandbox(sandbox_factory, ca.issue())
    async with service(sandbox, ca.path) as gateway, sending_with(gateway, tmp_path) as sending:
        outcome = await send_one(sending, "Over TLS", MOBILE)
    assert outcome.ok
    assert lodged(sandbox) == 1


@pytest.mark.parametrize("port", ["soap11", "soap12"])
async def test_a_lodge_soap_call_over_https_works_with_the_profiles_ca_bundle(
    sandbox_factory: SandboxFactory, ca: PrivateCa, port: str
) -> None:
    sandbox = https_sandbox(sandbox_factory, ca.issue())
    async with service(sandbox, ca.path, lodge_port=port) as gateway:
        result = await gateway.lodge.lodge_sms(MOBILE, "Over TLS")
    assert result.text == "Message sent successfully."
    assert lodged(sandbox) == 1


# ---- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("face", FACES)
async def test_the_system_trust_store_refuses_a_private_ca_and_names_the_ca_bundle(
    sandbox_factory: SandboxFactory, ca: PrivateCa, face: Face, tmp_path: Path
) -> None:
    sandbox = https_sandbox(sandbox_factory, ca.issue())
    async with service(sandbox, None) as gateway:
        error = await refusal(gateway, face, tmp_path)
    assert type(error) is GatewayError  # not transient: retrying cannot help
    assert "certificate of 127.0.0.1:" in error.message
    assert "is not trusted" in error.message
    assert "set the profile's CA bundle" in error.message
    assert "_ssl.c" not in error.message
    assert lodged(sandbox) == 0


@pytest.mark.parametrize("face", FACES)
async def test_a_certificate_for_another_host_name_is_refused(
    sandbox_factory: SandboxFactory, ca: PrivateCa, face: Face, tmp_path: Path
) -> None:
    sandbox = https_sandbox(sandbox_factory, ca.issue("other", ["gateway.example.com"]))
    async with service(sandbox, ca.path) as gateway:
        error = await refusal(gateway, face, tmp_path)
    assert not isinstance(error, TransientError)
    assert "is not trusted: it was issued for another host name" in error.message
    assert "Check the address in the profile" in error.message
    assert lodged(sandbox) == 0


@pytest.mark.parametrize("face", FACES)
async def test_an_expired_certificate_is_refused(
    sandbox_factory: SandboxFactory, ca: PrivateCa, face: Face, tmp_path: Path
) -> None:
    expired = ca.issue(
        "expired", valid_from=dt.timedelta(days=-10), valid_until=dt.timedelta(days=-1)
    )
    sandbox = https_sandbox(sandbox_factory, expired)
    async with service(sandbox, ca.path) as gateway:
        error = await refusal(gateway, face, tmp_path)
    assert not isinstance(error, TransientError)
    assert "is not trusted: certificate has expired" in error.message
    assert lodged(sandbox) == 0


# ---- nothing turns verification off -----------------------------------------------------------


def _client_tls(gateway: GatewayService) -> ssl.SSLContext:
    # httpx keeps the context its transport verifies with on the connection pool (the
    # transport the profile's answer watch wraps, `gateway/health.py`).
    pool = gateway.http._transport.inner._pool  # type: ignore[attr-defined]
    context: ssl.SSLContext = pool._ssl_context
    return context


@pytest.mark.parametrize("with_bundle", [False, True], ids=["system store", "CA bundle"])
async def test_every_client_a_profile_gets_verifies_certificates_and_names(
    sandbox_factory: SandboxFactory, ca: PrivateCa, with_bundle: bool
) -> None:
    sandbox = https_sandbox(sandbox_factory, ca.issue())
    async with service(sandbox, ca.path if with_bundle else None) as gateway:
        context = _client_tls(gateway)
        assert context.verify_mode == ssl.CERT_REQUIRED
        assert context.check_hostname
        # zeep's transport has no HTTP client of its own: it sends on the verifying one.
        transport = gateway.lodge.soap.transport
        assert isinstance(transport, LodgeTransport)
        assert transport.client is gateway.http
        assert transport.wsdl_client is None


async def test_settings_that_would_turn_verification_off_are_ignored(
    sandbox_factory: SandboxFactory, ca: PrivateCa, tmp_path: Path
) -> None:
    sandbox = https_sandbox(sandbox_factory, ca.issue())
    switches = {"verify": False, "insecure": True, "verify_tls": False, "ssl_verify": False}
    async with service(sandbox, None, **switches) as gateway:
        error = await refusal(gateway, "rest", tmp_path)
    assert "is not trusted" in error.message
    assert lodged(sandbox) == 0


def test_no_product_code_switches_certificate_checks_off() -> None:
    found = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if UNVERIFIED.search(line)
    ]
    assert found == []


# ---- plain http only on this machine --------------------------------------------------------


@pytest.mark.parametrize("field", ["rest_url", "lodge_url"])
@pytest.mark.parametrize(
    "url",
    [
        "http://gateway.example.com/dotnet/Lodge.asmx",
        "http://10.1.2.3:8080",
        "http://localhost.example.com",
        "http://127.0.0.1.nip.io",
    ],
)
def test_plain_http_to_another_machine_is_refused(field: str, url: str) -> None:
    fields = {"name": "p", "rest_url": "https://gateway.example.com", "username": "u"}
    with pytest.raises(ValueError, match="must use https"):
        Profile.model_validate({**fields, field: url})
