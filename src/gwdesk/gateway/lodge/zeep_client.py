"""Everything of the Lodge client that needs zeep, imported only when a WSDL is loaded.

zeep and what it pulls in (requests, urllib3, attrs) cost ~150 ms to import. The
console and the REST-only commands never need them, so `soap.SoapPorts`
imports this module on the worker thread that parses the WSDL, the first time a
SOAP port is used.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

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
from gwdesk.gateway.lodge.catalog import Operation
from gwdesk.gateway.lodge.soap_names import BINDINGS, SoapVersion
from gwdesk.gateway.lodge.xml import MAX_ANSWER_BYTES, looks_like_html, parse
from gwdesk.gateway.responses import error_for

log = logging.getLogger("gwdesk.gateway.lodge.client")
_XML_TYPES: Final = ("text/xml", "application/soap+xml", "application/xml")
Fault = zeep.exceptions.Fault

#: Set per call: becomes non-empty once the envelope is handed to the network, so a
#: failure can tell "never sent" from "sent, answer unreadable". Task-local by design.
SENT: ContextVar[list[bool] | None] = ContextVar("gwdesk_lodge_sent", default=None)


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
        sent = SENT.get()
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


def bind(
    body: bytes, transport: LodgeTransport, wsdl_url: str, lodge_url: str, namespace: str
) -> LoadedWsdl:
    """zeep's client and both SOAP bindings of a checked WSDL, bound to `lodge_url`."""
    settings = zeep_settings()
    try:
        # zeep annotates `transport` as a class where it takes an instance.
        document = Document(
            io.BytesIO(body),
            transport,  # type: ignore[arg-type]
            base=wsdl_url,
            settings=settings,
        )
        client = zeep.AsyncClient(  # type: ignore[no-untyped-call]
            wsdl=document, transport=transport, settings=settings
        )
        proxies: dict[SoapVersion, AsyncServiceProxy] = {}
        for version, name in BINDINGS.items():
            binding = document.bindings.get(f"{{{namespace}}}{name}")
            if binding is None:
                raise ProtocolError(f"The Lodge WSDL has no {name} binding.")
            proxies[version] = AsyncServiceProxy(  # type: ignore[no-untyped-call]
                client, binding, address=lodge_url
            )
    except GatewayError:
        raise
    except Exception as exc:  # zeep reports a broken WSDL in many ways
        raise ProtocolError(
            f"The Lodge WSDL could not be used ({type(exc).__name__}: {str(exc)[:160]})."
        ) from None
    return LoadedWsdl(client, proxies, namespace)
