"""The SOAP 1.1 and 1.2 ports through zeep's `AsyncClient`, without blocking the event loop.

zeep loads a WSDL with a blocking HTTP client. Here the WSDL is fetched with the
facade's async client instead, and the document is handed to zeep on a worker
thread (parsing a WSDL is CPU work), once per profile: concurrent first calls wait
for the same load, and a failed load is tried again by the next call. The
transport zeep gets refuses every further load (a WSDL that imports another
document is refused, never fetched with a blocking client) and posts envelopes
through the shared pool with the facade's size limit and error translation.

zeep itself is imported only then, on that worker thread (`zeep_client`), so the
console and REST-only commands never pay for it.

Operations are bound to the profile's Lodge URL rather than the address the WSDL
names: an ASP.NET WSDL names whatever host it was asked under, which behind a
proxy is often an internal one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Final

import httpx

from gwdesk.gateway.errors import GatewayError, ProtocolError, ValidationError
from gwdesk.gateway.http import exchange
from gwdesk.gateway.lodge.catalog import Operation
from gwdesk.gateway.lodge.soap_names import BINDINGS, SoapVersion
from gwdesk.gateway.lodge.xml import MAX_WSDL_BYTES, local_name, parse
from gwdesk.gateway.responses import error_for
from gwdesk.gateway.retry import Retrier

if TYPE_CHECKING:
    from gwdesk.gateway.lodge.zeep_client import LoadedWsdl, LodgeTransport

__all__ = ["BINDINGS", "SoapPorts", "SoapVersion"]

log = logging.getLogger("gwdesk.gateway.lodge.client")
WSDL_NS: Final = "http://schemas.xmlsoap.org/wsdl/"


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
        self._transport: LodgeTransport | None = None
        self._loaded: LoadedWsdl | None = None
        self._loading: asyncio.Future[LoadedWsdl] | None = None

    @property
    def transport(self) -> LodgeTransport:
        """zeep's transport over the shared client (made, and zeep imported, on first use:
        normally by the worker that parses the WSDL)."""
        if self._transport is None:
            from gwdesk.gateway.lodge.zeep_client import LodgeTransport

            self._transport = LodgeTransport(self.http)
        return self._transport

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
        from gwdesk.gateway.lodge import zeep_client  # here, on the worker: see the module

        loaded = zeep_client.bind(body, self.transport, self.wsdl_url, self.lodge_url, found)
        log.info("Lodge WSDL loaded from %s", self.wsdl_url)
        return loaded

    async def call(
        self, version: SoapVersion, operation: Operation, params: Mapping[str, object]
    ) -> object:
        """One call; the raw value zeep read (a string, or the result's XML element)."""
        loaded = await self.loaded()
        from gwdesk.gateway.lodge.zeep_client import SENT, Fault, fault_error  # loaded by now

        method = loaded.proxies[version][operation.name]
        kwargs = {
            name: {"_value_1": value} if name == operation.document else value
            for name, value in params.items()
            if value is not None
        }
        sent: list[bool] = []
        token = SENT.set(sent)
        try:
            return await method(**kwargs)
        except GatewayError:
            raise
        except Fault as exc:
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
            SENT.reset(token)
