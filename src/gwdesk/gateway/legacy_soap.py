"""The SOAP 1.1 and 1.2 ports through zeep's `AsyncClient`, without blocking the event loop.

zeep loads a WSDL with a blocking HTTP client. Here the WSDL is fetched with the
facade's async client instead, and the document is handed to zeep on a worker
thread (parsing a WSDL is CPU work), once per profile: concurrent first calls wait
for the same load, and a failed load is tried again by the next call. The
transport zeep gets refuses every further load (a WSDL that imports another
document is refused, never fetched with a blocking client) and posts envelopes
through the shared pool with the facade's size limit and error translation.

Operations are bound to the profile's Lodge URL rather than the address the WSDL
names: an ASP.NET WSDL names whatever host it was asked under, which behind a
proxy is often an internal one.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import Mapping
from concurrent.futures import Executor
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Literal

import httpx
import zeep
import zeep.exceptions
from lxml import etree
from zeep.proxy import AsyncServiceProxy
from zeep.transports import AsyncTransport
from zeep.wsdl import Document

from gwdesk.gateway.errors import (
    GatewayError,
    ProtocolError,
    TransientError,
    ValidationError,
)
from gwdesk.gateway.http import RawResponse, exchange
from gwdesk.gateway.legacy_catalog import Operation
from gwdesk.gateway.legacy_xml import (
    MAX_ANSWER_BYTES,
    MAX_WSDL_BYTES,
    local_name,
    looks_like_html,
    parse,
)
from gwdesk.gateway.responses import error_for
from gwdesk.gateway.retry import Retrier

log = logging.getLogger("gwdesk.gateway.legacy")
SoapVersion = Literal["soap11", "soap12"]
BINDINGS: Final[Mapping[SoapVersion, str]] = {"soap11": "LodgeSoap", "soap12": "LodgeSoap12"}
WSDL_NS: Final = "http://schemas.xmlsoap.org/wsdl/"
_XML_TYPES: Final = ("text/xml", "application/soap+xml", "application/xml")

#: Set per call: becomes non-empty once the envelope is handed to the network, so a
#: failure can tell "never sent" from "sent, answer unreadable". Task-local by design.
_SENT: ContextVar[list[bool] | None] = ContextVar("gwdesk_lodge_sent", default=None)


def zeep_settings() -> zeep.Settings:
    """zeep's hardening: no DTDs, no entities, no external documents, no huge trees."""
    return zeep.Settings(
        strict=True,
        xml_huge_tree=False,
        forbid_dtd=True,
        forbid_entities=True,
        forbid_external=True,
    )


@dataclass(frozen=True, slots=True)
class _Reply:
    """The parts of a `requests.Response` that zeep reads from an answer."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    encoding: str | None = "utf-8"


class LodgeTransport(AsyncTransport):
    """zeep's async transport over the facade's pooled client.

    `AsyncTransport.__init__` is deliberately not called: it would replace the shared
    client's headers and create a blocking client for WSDL loading, which is never used.
    `aclose` leaves the shared client to the facade that owns it.
    """

    def __init__(self, client: httpx.AsyncClient, *, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.client = client
        self.max_bytes = max_bytes
        self.cache = None
        self.wsdl_client = None
        self._close_session = False
        self.logger = log

    def load(self, url: str) -> bytes:
        raise ProtocolError(
            f"The Lodge WSDL refers to another document ({str(url)[:120]}); gwdesk loads "
            "only the service's own WSDL."
        )

    _load_remote_data = load

    async def post_xml(self, address: str, envelope: etree._Element, headers: Any) -> _Reply:
        message = etree.tostring(envelope, xml_declaration=True, encoding="utf-8")
        sent = _SENT.get()
        if sent is not None:
            sent.append(True)
        raw = await exchange(
            self.client,
            "POST",
            address,
            headers=dict(headers),
            content=message,
            max_bytes=self.max_bytes,
        )
        return _reply(raw)

    async def post(self, address: str, message: Any, headers: Any) -> Any:
        raise ProtocolError("The Lodge client sends SOAP envelopes only.")

    async def get(self, address: str, params: Any, headers: Any) -> Any:
        raise ProtocolError("The Lodge client sends SOAP envelopes only.")

    async def aclose(self) -> None:
        return None


def _reply(raw: RawResponse) -> _Reply:
    """Hand zeep only what can be a SOAP answer; the rest becomes the facade's errors.

    A 200 is an answer; a 500 in an XML content type is a SOAP Fault (zeep reads it);
    any other status, or a 500 in another type, is translated like a REST answer.
    """
    fault = raw.status == 500 and raw.content_type in _XML_TYPES
    if raw.status != 200 and not fault:
        raise error_for(raw)
    if looks_like_html(raw.body, raw.content_type):
        raise ProtocolError(
            "The Lodge service answered with a web page, not a SOAP envelope: probably a "
            "proxy or server error page.",
            status=raw.status,
            maybe_processed=True,
        )
    # Read here with the facade's own hardened reader, so a hostile answer is refused
    # before zeep sees it; zeep then parses it again with its own hardening.
    parse(raw.body, "The Lodge service's SOAP answer", status=raw.status)
    return _Reply(raw.status, raw.headers, raw.body)


@dataclass(frozen=True, slots=True)
class LoadedWsdl:
    client: zeep.AsyncClient
    proxies: Mapping[SoapVersion, AsyncServiceProxy]
    namespace: str


def _fault_code(exc: zeep.exceptions.Fault) -> str:
    code = exc.code
    text = code.localname if isinstance(code, etree.QName) else str(code or "")
    return text.rpartition(":")[2].strip().lower()


def fault_error(exc: zeep.exceptions.Fault, operation: Operation) -> GatewayError:
    """A SOAP Fault: the service refused the request (Client/Sender) or failed on it."""
    reason = " ".join(str(exc.message or "no reason given").split())[:300]
    code = _fault_code(exc)
    if code in ("client", "sender"):
        return ValidationError(
            f"The Lodge service refused the {operation.name} request: {reason}",
            field=None,
            status=500,
        )
    if code in ("mustunderstand", "versionmismatch", "dataencodingunknown"):
        return ProtocolError(
            f"The Lodge service could not understand the {operation.name} request ({code}): "
            f"{reason}",
            status=500,
        )
    return TransientError(
        f"The Lodge service failed while handling {operation.name}: {reason}",
        status=500,
        maybe_processed=True,
    )


class SoapPorts:
    """The WSDL of one profile, loaded once, and calls through its SOAP bindings."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        lodge_url: str,
        namespace: str,
        retrier: Retrier,
        *,
        executor: Executor | None = None,
    ) -> None:
        self.http = http
        self.lodge_url = lodge_url
        self.namespace = namespace
        self.retrier = retrier
        self.executor = executor
        self.transport = LodgeTransport(http)
        self._loaded: LoadedWsdl | None = None
        self._loading: asyncio.Future[LoadedWsdl] | None = None

    @property
    def wsdl_url(self) -> str:
        return f"{self.lodge_url}?WSDL"

    async def loaded(self) -> LoadedWsdl:
        """The loaded WSDL; concurrent first callers share one load."""
        if self._loaded is not None:
            return self._loaded
        if self._loading is None:
            self._loading = asyncio.ensure_future(
                self.retrier.idempotent(self._load, "loading the Lodge WSDL")
            )
            self._loading.add_done_callback(self._settle)
        # shield: one caller giving up must not cancel the load the others wait for.
        return await asyncio.shield(self._loading)

    async def aclose(self) -> None:
        """Stop a load nobody will use any more (the facade is closing)."""
        loading = self._loading
        if loading is not None and not loading.done():
            loading.cancel()
            with contextlib.suppress(asyncio.CancelledError, GatewayError):
                await loading

    def _settle(self, future: asyncio.Future[LoadedWsdl]) -> None:
        self._loading = None
        if future.cancelled():
            return
        if future.exception() is None:
            self._loaded = future.result()

    async def _load(self) -> LoadedWsdl:
        raw = await exchange(self.http, "GET", self.wsdl_url, max_bytes=MAX_WSDL_BYTES)
        if raw.status != 200:
            raise error_for(raw)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._build, raw.body)

    def _build(self, body: bytes) -> LoadedWsdl:
        """Runs on a worker thread: checks and parses the WSDL, then binds both SOAP ports."""
        root = parse(body, "The Lodge WSDL", maybe_processed=False)
        if local_name(root) != "definitions" or root.tag != f"{{{WSDL_NS}}}definitions":
            raise ProtocolError(
                f"{self.wsdl_url} is not a WSDL (its root element is <{local_name(root)[:60]}>)."
            )
        found = root.get("targetNamespace") or ""
        if found != self.namespace:
            raise ValidationError(
                f"The Lodge service at {self.lodge_url} uses the namespace {found!r}, but the "
                f"profile says {self.namespace!r}. Set the profile's SOAP namespace to {found!r}.",
                field="soap_namespace",
                status=None,
            )
        settings = zeep_settings()
        try:
            # zeep annotates `transport` as a class where it takes an instance.
            document = Document(
                io.BytesIO(body),
                self.transport,  # type: ignore[arg-type]
                base=self.wsdl_url,
                settings=settings,
            )
            client = zeep.AsyncClient(  # type: ignore[no-untyped-call]
                wsdl=document, transport=self.transport, settings=settings
            )
            proxies: dict[SoapVersion, AsyncServiceProxy] = {}
            for version, name in BINDINGS.items():
                binding = document.bindings.get(f"{{{found}}}{name}")
                if binding is None:
                    raise ProtocolError(f"The Lodge WSDL has no {name} binding.")
                proxies[version] = AsyncServiceProxy(  # type: ignore[no-untyped-call]
                    client, binding, address=self.lodge_url
                )
        except GatewayError:
            raise
        except Exception as exc:  # zeep reports a broken WSDL in many ways
            raise ProtocolError(
                f"The Lodge WSDL could not be used ({type(exc).__name__}: {str(exc)[:160]})."
            ) from None
        log.info("Lodge WSDL loaded from %s", self.wsdl_url)
        return LoadedWsdl(client, proxies, found)

    async def call(
        self, version: SoapVersion, operation: Operation, params: Mapping[str, object]
    ) -> object:
        """One call; the raw value zeep read (a string, or the result's XML element)."""
        loaded = await self.loaded()
        method = loaded.proxies[version][operation.name]
        kwargs = {
            name: {"_value_1": value} if name == operation.document else value
            for name, value in params.items()
            if value is not None
        }
        sent: list[bool] = []
        token = _SENT.set(sent)
        try:
            return await method(**kwargs)
        except GatewayError:
            raise
        except zeep.exceptions.Fault as exc:
            raise fault_error(exc, operation) from None
        except Exception as exc:  # zeep reports unreadable answers in many ways
            log.info("%s failed in zeep (%s)", operation.name, type(exc).__name__)
            if not sent:
                # Before sending: the values never reach the message (one could be the password).
                raise ProtocolError(
                    f"The {operation.name} request could not be formed ({type(exc).__name__})."
                ) from None
            raise ProtocolError(
                f"The answer of {operation.name} could not be read "
                f"({type(exc).__name__}: {str(exc)[:160]}).",
                status=200,
                maybe_processed=True,
            ) from None
        finally:
            _SENT.reset(token)
