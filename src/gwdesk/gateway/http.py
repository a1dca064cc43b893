"""The HTTP stack: one pooled client per profile, TLS that always verifies, bounded answers.

Everything that can go wrong on the wire is turned into a `GatewayError` here, with
`maybe_processed` saying whether the request may have reached the gateway: a
connection that was never made did not, a read that timed out may have.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import truststore

from gwdesk import __version__
from gwdesk.gateway.errors import GatewayError, ProtocolError, TransientError
from gwdesk.gateway.health import GatewayHealth, WatchedTransport

log = logging.getLogger("gwdesk.gateway.http")
USER_AGENT: Final = f"gwdesk/{__version__}"
#: A log page of 1,000 records is under 1 MB; anything far bigger is not an answer.
MAX_RESPONSE_BYTES: Final = 32 * 1024 * 1024
#: Bytes per second an exchange must average, after the time-outs' grace, to count as
#: progressing: an answer (or its headers) trickled slower than this is cut off, since
#: httpx's time-outs apply to each read and a byte now and then would restart them.
MIN_TRANSFER_RATE: Final = 8 * 1024
_SSL_LOCATION: Final = re.compile(r"\s*\(_ssl\.c:\d+\)")


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Time-outs (seconds), pool limits and the answer size cap of one profile's client."""

    connect: float = 5.0
    read: float = 30.0
    write: float = 30.0
    pool: float = 30.0
    max_connections: int = 32
    max_keepalive: int = 32
    keepalive_expiry: float = 30.0
    max_response_bytes: int = MAX_RESPONSE_BYTES
    proxy: str | None = None
    """An explicit proxy; proxies are not read from the environment."""

    @property
    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)


def ssl_context(ca_bundle: Path | None = None) -> ssl.SSLContext:
    """Verifying TLS: the system trust store, plus the profile's own CA bundle if it has one.

    With a bundle the system's CAs still count (OpenSSL's view of them, which is where
    the bundle can be added), so a profile can trust a private gateway CA and a
    public one at once.
    """
    if ca_bundle is not None:
        try:
            context = ssl.create_default_context()
            context.load_verify_locations(cafile=str(ca_bundle))
            return context
        except (OSError, ssl.SSLError) as exc:
            raise GatewayError(
                f"The CA bundle {str(ca_bundle)[:200]!r} cannot be read: {exc}."
            ) from None
    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def build_client(
    base_url: str,
    settings: HttpSettings | None = None,
    *,
    ca_bundle: Path | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    health: GatewayHealth | None = None,
) -> httpx.AsyncClient:
    """The one pooled, keep-alive client a profile's REST and Lodge calls share; with
    `health`, every request it makes (through `transport`, or the pool over the proxy
    if any) is watched for an answer."""
    settings = settings or HttpSettings()
    verify = ssl_context(ca_bundle)
    limits = httpx.Limits(
        max_connections=settings.max_connections,
        max_keepalive_connections=settings.max_keepalive,
        keepalive_expiry=settings.keepalive_expiry,
    )
    proxy = settings.proxy
    if health is not None:
        if transport is None:  # what the client would build, so the watch sees it all
            transport = httpx.AsyncHTTPTransport(
                verify=verify, limits=limits, proxy=proxy, trust_env=False
            )
        transport, proxy = WatchedTransport(transport, health), None
    return httpx.AsyncClient(
        base_url=base_url,
        verify=verify,
        timeout=settings.timeout,
        limits=limits,
        headers={"User-Agent": USER_AGENT},
        follow_redirects=False,
        trust_env=False,
        proxy=proxy,
        transport=transport,
    )


@dataclass(frozen=True, slots=True)
class RawResponse:
    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def content_type(self) -> str:
        value: str = self.headers.get("content-type", "")
        return value.split(";")[0].strip().lower()


def _where(request: httpx.Request) -> str:
    url = request.url
    return f"{url.host}:{url.port}" if url.port else url.host


def transport_error(
    exc: httpx.TransportError, timeout: httpx.Timeout | None = None
) -> GatewayError:
    """A plain-language error for a failed exchange, marked with whether it may have landed."""
    try:
        where = _where(exc.request)
    except RuntimeError:
        where = "the gateway"
    if isinstance(exc, httpx.ConnectTimeout):
        return TransientError(f"Could not connect to {where}: it did not answer in time.")
    if isinstance(exc, httpx.PoolTimeout):
        return TransientError("Too many requests are waiting for a connection; try again.")
    if isinstance(exc, httpx.ConnectError):
        reason = str(exc) or "connection failed"
        if "CERTIFICATE_VERIFY_FAILED" in reason or "certificate verify failed" in reason:
            # Not passing trouble: retrying cannot help, the profile's trust settings can.
            return certificate_error(where, reason)
        return TransientError(f"Could not connect to {where} ({reason[:160]}).")
    if isinstance(exc, httpx.ReadTimeout):
        limit = f" within {timeout.read:g} s" if timeout is not None and timeout.read else ""
        return TransientError(
            f"{where} did not answer{limit}; the request may or may not have been done.",
            maybe_processed=True,
        )
    if isinstance(exc, httpx.WriteTimeout | httpx.WriteError):
        return TransientError(
            f"The request to {where} could not be sent completely.", maybe_processed=True
        )
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return TransientError(
            f"The connection to {where} broke before its answer arrived; "
            "the request may or may not have been done.",
            maybe_processed=True,
        )
    if isinstance(exc, httpx.LocalProtocolError):
        return ProtocolError(f"The client could not form a valid request ({exc}).")
    return TransientError(
        f"Talking to {where} failed ({type(exc).__name__}).", maybe_processed=True
    )


def certificate_error(where: str, reason: str) -> GatewayError:
    """What to do about a certificate TLS verification refused, by why it was refused.

    Only an unknown issuer is helped by the profile's CA bundle; a wrong name or an
    expired certificate is refused whatever the profile trusts.
    """
    detail = _SSL_LOCATION.sub("", reason.split("certificate verify failed:")[-1]).strip()
    detail = detail.rstrip(".")[:160] or "verification failed"
    lowered = detail.lower()
    if "mismatch" in lowered:
        return GatewayError(
            f"The certificate of {where} is not trusted: it was issued for another host name "
            f"({detail}). Check the address in the profile; the CA bundle cannot change this."
        )
    if "expired" in lowered or "not yet valid" in lowered:
        return GatewayError(
            f"The certificate of {where} is not trusted: {detail}. The gateway's certificate "
            "must be renewed (or this computer's clock is wrong)."
        )
    hint = "If the gateway uses a private CA, set the profile's CA bundle to that CA's certificate."
    if "issuer" in lowered or "self-signed" in lowered or "self signed" in lowered:
        return GatewayError(
            f"The certificate of {where} is not trusted: no certificate authority this "
            f"computer trusts signed it ({detail}). {hint}"
        )
    return GatewayError(f"The certificate of {where} is not trusted ({detail}). {hint}")


async def exchange(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    json: Any = None,
    data: Mapping[str, str] | None = None,
    content: bytes | None = None,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> RawResponse:
    """One request and its whole answer, refusing answers larger than `max_bytes`."""
    request = client.build_request(
        method, url, headers=headers, params=params, json=json, data=data, content=content
    )
    started = time.monotonic()
    timeout = client.timeout
    loop = asyncio.get_running_loop()
    answered = False
    try:
        async with asyncio.timeout(_grace(timeout, request)) as deadline:
            try:
                response = await client.send(request, stream=True)
                answered = True
                try:
                    declared = response.headers.get("content-length")
                    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                        raise _too_big(response.status_code, max_bytes)
                    body = bytearray()
                    body_started = loop.time()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > max_bytes:
                            raise _too_big(response.status_code, max_bytes)
                        if timeout.read is not None:
                            # Twice the read time-out, so a plain stall is still httpx's
                            # clearer "did not answer" and only a trickle ends here.
                            deadline.reschedule(
                                body_started + 2 * timeout.read + len(body) / MIN_TRANSFER_RATE
                            )
                finally:
                    await response.aclose()
            except httpx.TransportError as exc:
                log.info("%s %s failed: %s", method, request.url.path, type(exc).__name__)
                raise transport_error(exc, timeout) from None
            except httpx.DecodingError:
                raise ProtocolError(
                    "The gateway's answer could not be decoded (broken compression).",
                    status=response.status_code,
                    maybe_processed=True,
                ) from None
    except TimeoutError:
        log.info("%s %s failed: too slow", method, request.url.path)
        took = time.monotonic() - started
        if answered:
            what = (
                f"{_where(request)} sent its answer too slowly (still arriving after {took:.1f} s)"
            )
        else:  # the upload, or the headers, crawled: it may be this side's connection
            what = (
                f"The exchange with {_where(request)} was too slow (no answer after {took:.1f} s;"
                " the network may be too slow, or the gateway stalled)"
            )
        raise TransientError(
            f"{what}; the request may or may not have been done.", maybe_processed=True
        ) from None
    log.debug(
        "%s %s -> %s in %.0f ms",
        method,
        request.url.path,
        response.status_code,
        (time.monotonic() - started) * 1000,
    )
    return RawResponse(response.status_code, response.headers, bytes(body))


def _grace(timeout: httpx.Timeout, request: httpx.Request) -> float | None:
    """Seconds a whole exchange may take before its answer's body starts (None: unbounded).

    Each of httpx's time-outs once, plus the request's upload at the slowest rate
    accepted; the body's own allowance then grows with the bytes that arrive.
    """
    parts = (timeout.pool, timeout.connect, timeout.write, timeout.read)
    if any(part is None for part in parts):
        return None
    declared = request.headers.get("content-length", "0")
    upload = int(declared) if declared.isdigit() else 0
    return sum(part for part in parts if part is not None) + upload / MIN_TRANSFER_RATE


def _too_big(status: int, limit: int) -> ProtocolError:
    return ProtocolError(
        f"The gateway's answer is larger than {_size(limit)}; it was not read.",
        status=status,
        maybe_processed=True,
    )


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):g} MB"
    if count >= 1024:
        return f"{count / 1024:g} KB"
    return f"{count} bytes"
