"""Whether the gateway answers (`gateway/health.py`), Qt-free: the watch on a profile's client.

The transport under the watch is an `httpx.MockTransport` whose answers a test holds
back (an event it sets), so a request waits exactly as long as the test says; the
watch's verdicts are collected as its subscribers are told them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.health import Answering, GatewayHealth
from gwdesk.gateway.http import build_client
from gwdesk.gateway.service import GatewayService

AFTER = 0.2


class HeldGateway:
    """Answers `/quick` at once and `/held` only once `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def answer(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/held":
            await self.release.wait()
        if request.url.path == "/broken":
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, json={})


class Watched:
    def __init__(self) -> None:
        self.gateway = HeldGateway()
        self.health = GatewayHealth(after=AFTER)
        self.told: list[Answering] = []
        self.health.subscribe(self.told.append)
        self.client = build_client(
            "http://gw.example:8080",
            transport=httpx.MockTransport(self.gateway.answer),
            health=self.health,
        )


@pytest.fixture
async def watched() -> AsyncIterator[Watched]:
    made = Watched()
    yield made
    made.gateway.release.set()
    await made.client.aclose()


async def until(predicate: object, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():  # type: ignore[operator]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {predicate}")
        await asyncio.sleep(0.01)


async def test_a_request_without_an_answer_says_the_host_is_not_answering(
    watched: Watched,
) -> None:
    held = asyncio.ensure_future(watched.client.get("/held"))
    await until(lambda: watched.told)
    [said] = watched.told
    assert not said.answering
    assert said.host == "gw.example"
    assert said.waited(watched.health.clock()) >= AFTER
    watched.gateway.release.set()
    await held


async def test_an_answer_says_it_answers_again(watched: Watched) -> None:
    held = asyncio.ensure_future(watched.client.get("/held"))
    await until(lambda: watched.told)
    watched.gateway.release.set()
    await held
    assert [s.answering for s in watched.told] == [False, True]
    assert watched.health.state == Answering()


async def test_any_answer_of_the_host_counts_while_another_request_waits(
    watched: Watched,
) -> None:
    held = asyncio.ensure_future(watched.client.get("/held"))
    await until(lambda: watched.told)
    await watched.client.get("/quick")
    assert watched.health.state.answering
    watched.gateway.release.set()
    await held


async def test_a_request_still_waiting_after_the_hosts_last_answer_is_silence_again(
    watched: Watched,
) -> None:
    held = asyncio.ensure_future(watched.client.get("/held"))
    await until(lambda: watched.told)
    answered = watched.health.clock()
    await watched.client.get("/quick")
    await until(lambda: len(watched.told) == 3)
    assert [s.answering for s in watched.told] == [False, True, False]
    assert watched.told[2].since >= answered
    watched.gateway.release.set()
    await held


async def silence_after(watched: Watched) -> Answering:
    """The verdict a request held from now brings (the positive event a test waits for
    before it says what did not happen earlier); the request is then answered."""
    told = len(watched.told)
    started = watched.health.clock()
    held = asyncio.ensure_future(watched.client.get("/held"))
    await until(lambda: len(watched.told) > told)
    watched.gateway.release.set()
    await held
    said = watched.told[told]
    assert said.since >= started, "an earlier request's clock was still running"
    return said


async def test_answers_in_time_say_nothing(watched: Watched) -> None:
    for _ in range(3):
        await watched.client.get("/quick")
    await silence_after(watched)
    assert [s.answering for s in watched.told] == [False, True]


async def test_a_cancelled_request_stops_its_clock(watched: Watched) -> None:
    held = asyncio.ensure_future(watched.client.get("/held"))
    await until(lambda: watched.health.waiting == 1)
    held.cancel()
    with pytest.raises(asyncio.CancelledError):
        await held
    assert watched.health.waiting == 0
    await silence_after(watched)
    assert [s.answering for s in watched.told] == [False, True]


async def test_a_failed_request_stops_its_clock_and_proves_no_answer(watched: Watched) -> None:
    with pytest.raises(httpx.ConnectError):
        await watched.client.get("/broken")
    assert watched.health.waiting == 0
    assert watched.health.state.answering
    await silence_after(watched)
    assert [s.answering for s in watched.told] == [False, True]


async def test_an_unsubscribed_listener_is_not_told(watched: Watched) -> None:
    later: list[Answering] = []
    watched.health.subscribe(later.append)()
    held = asyncio.ensure_future(watched.client.get("/held"))
    await until(lambda: watched.told)
    assert later == []
    watched.gateway.release.set()
    await held


async def test_every_profile_service_watches_its_client() -> None:
    gateway = HeldGateway()
    profile = Profile(name="p", rest_url="https://gw.example:8443", username="u", auth="basic")
    service = GatewayService(profile, Secret("pw"), transport=httpx.MockTransport(gateway.answer))
    service.health.after = AFTER
    try:
        told: list[Answering] = []
        service.health.subscribe(told.append)
        held = asyncio.ensure_future(service.http.get("/held"))
        await until(lambda: told)
        assert told[0].host == "gw.example"
        gateway.release.set()
        await held
    finally:
        await service.aclose()
    assert service.health.state.answering
