"""The WSDL: loaded once per profile, off the event loop, and never by a blocking client."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

import pytest

from gwdesk.domain.profile import LodgePort
from gwdesk.gateway.errors import TransientError
from gwdesk.gateway.http import USER_AGENT
from gwdesk.gateway.lodge.client import LodgeClient
from gwdesk.sandbox.server import SandboxThread
from tests.contract.lodge_client_support import (
    MOBILE,
    Answer,
    HostileServer,
    hostile_service,
    lodge_service,
    messages,
    wsdl_text,
)
from tests.contract.rest_support import endpoint_requests, set_faults

T = TypeVar("T")
SOAP_RESULT = (
    b'<soap:Envelope xmlns:soap="%s"><soap:Body>'
    b'<LodgeSMSMessageResponse xmlns="http://sandbox.gwdesk.local/Lodge">'
    b"<LodgeSMSMessageResult>Message sent successfully.</LodgeSMSMessageResult>"
    b"</LodgeSMSMessageResponse></soap:Body></soap:Envelope>"
)


class CallerThreadExecutor(Executor):
    """Runs each job at once on the submitting thread: what "on the event loop" means."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


async def worst_loop_lag(work: Awaitable[object], tick: float = 0.005) -> tuple[float, float]:
    """(longest stall of the event loop, duration) while `work` runs."""
    worst = 0.0
    done = False

    async def watchdog() -> None:
        nonlocal worst
        while not done:
            before = time.perf_counter()
            await asyncio.sleep(tick)
            worst = max(worst, time.perf_counter() - before - tick)

    # Garbage collection pauses every thread; they are not what is measured here.
    gc.collect()
    gc.disable()
    dog = asyncio.create_task(watchdog())
    started = time.perf_counter()
    try:
        await work
    finally:
        done = True
        await dog
        gc.enable()
    return worst, time.perf_counter() - started


@pytest.fixture
def slow_wsdl() -> Iterator[HostileServer]:
    """A server whose WSDL takes zeep about half a second to load."""
    server = HostileServer(wsdl=Answer(wsdl_text("http://127.0.0.1:9/", padding=6000))).start()
    yield server
    server.stop()


async def test_concurrent_first_calls_share_one_wsdl_load(sandbox: SandboxThread) -> None:
    async with lodge_service(sandbox, "soap12") as service:
        lodge = service.lodge
        results = await asyncio.gather(*(lodge.lodge_sms(MOBILE, f"n{i}") for i in range(8)))
        other_version = await lodge.with_port("soap11").lodge_sms(MOBILE, "1.1")
    assert all(r.ok for r in results)
    assert other_version.ok
    assert len(messages(sandbox)) == 9
    assert endpoint_requests(sandbox, "wsdl") == 1


async def test_the_wsdl_is_loaded_without_stalling_the_event_loop(
    slow_wsdl: HostileServer,
) -> None:
    async with hostile_service(slow_wsdl, "soap12") as service:
        lag, took = await worst_loop_lag(service.lodge.soap.loaded())
    assert took > 0.2, "the WSDL should be slow enough to show a stall"
    assert lag < min(0.15, took / 3), f"the loop stalled {lag:.3f} s of a {took:.3f} s load"


async def test_the_watchdog_sees_a_wsdl_loaded_on_the_event_loop(
    slow_wsdl: HostileServer,
) -> None:
    """The control for the test above: the same load forced onto the loop's thread stalls it."""
    async with hostile_service(slow_wsdl, "soap12") as service:
        inline = LodgeClient(
            service.profile,
            service.credentials,
            service.http,
            retrier=service.retrier,
            executor=CallerThreadExecutor(),
        )
        lag, took = await worst_loop_lag(inline.soap.loaded())
    assert lag > 0.15
    assert lag > took / 2


async def test_zeep_leaves_the_shared_clients_headers_alone(sandbox: SandboxThread) -> None:
    async with lodge_service(sandbox, "soap11") as service:
        await service.lodge.lodge_sms(MOBILE, "x")
        assert service.http.headers["User-Agent"] == USER_AGENT
        assert not service.http.is_closed
        await service.lodge.aclose()
        assert not service.http.is_closed


async def test_a_failed_load_is_tried_again_by_the_next_call(sandbox: SandboxThread) -> None:
    set_faults(sandbox, "wsdl:503=1")
    async with lodge_service(sandbox, "soap12") as service:
        with pytest.raises(TransientError):
            await service.lodge.lodge_sms(MOBILE, "x")
        set_faults(sandbox, "")
        result = await service.lodge.lodge_sms(MOBILE, "y")
    assert result.ok
    assert [m["message"] for m in messages(sandbox)] == ["y"]


async def test_a_caller_that_gives_up_does_not_cancel_the_load_others_wait_for(
    slow_wsdl: HostileServer,
) -> None:
    async with hostile_service(slow_wsdl, "soap12") as service:
        impatient = asyncio.create_task(service.lodge.soap.loaded())
        patient = asyncio.create_task(service.lodge.soap.loaded())
        await asyncio.sleep(0.05)
        impatient.cancel()
        loaded = await patient
    assert loaded.namespace == "http://sandbox.gwdesk.local/Lodge"
    assert [r for r in slow_wsdl.requests if r[1].endswith("?WSDL")] == [
        ("GET", "/dotnet/Lodge.asmx?WSDL", "")
    ]


@pytest.mark.parametrize(
    ("port", "content_type"),
    [("soap11", "text/xml"), ("soap12", "application/soap+xml")],
)
async def test_each_soap_port_speaks_its_own_soap_version_to_the_profiles_address(
    port: LodgePort, content_type: str
) -> None:
    """The WSDL names port 9 (nothing listens there); the call still reaches the profile's URL."""
    envelope = {
        "soap11": b"http://schemas.xmlsoap.org/soap/envelope/",
        "soap12": b"http://www.w3.org/2003/05/soap-envelope",
    }[port]
    server = HostileServer(
        wsdl=Answer(wsdl_text("http://127.0.0.1:9/")),
        answer=Answer(SOAP_RESULT % envelope, content_type=f"{content_type}; charset=utf-8"),
    ).start()
    try:
        async with hostile_service(server, port) as service:
            result = await service.lodge.lodge_sms(MOBILE, "x")
    finally:
        server.stop()
    assert result.ok
    [(method, path, sent_type)] = server.operation_requests()
    assert (method, path) == ("POST", "/dotnet/Lodge.asmx")
    assert sent_type.split(";")[0] == content_type


async def test_closing_the_facade_stops_a_wsdl_load_under_way(slow_wsdl: HostileServer) -> None:
    service = hostile_service(slow_wsdl, "soap12")
    waiting = asyncio.create_task(service.lodge.soap.loaded())
    await asyncio.sleep(0.05)
    await service.aclose()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert service.http.is_closed
