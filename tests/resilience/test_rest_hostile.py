"""Hostile REST answers from a real loopback server: each a `GatewayError`, quickly, never a hang.

What `tests/contract/test_rest_errors.py` already proves against the sandbox's fault
injection is not repeated here: an HTML error page with a 5xx status, a body cut in
half, an answer over a lowered size cap, a slow answer before any byte. This file
adds what the sandbox cannot do, from a raw asyncio server that writes exactly the
bytes a test scripts: 50 MB bodies, HTML and garbage with status 200, JSON of the
wrong shape, bodies that stall or trickle, headers that trickle, compression bombs.

The REST client decodes no base64 (neither does the Lodge client: base64 only goes
out, in file parameters), so there is no invalid-base64 case to test.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pytest

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import AuthMode, Profile
from gwdesk.gateway.errors import AmbiguousSendError, GatewayError, ProtocolError, TransientError
from gwdesk.gateway.http import MAX_RESPONSE_BYTES, HttpSettings
from gwdesk.gateway.retry import RetryPolicy
from gwdesk.gateway.service import GatewayService
from tests.contract.rest_support import send_one, sending_with

MB: Final = 1024 * 1024
HUGE: Final = 50 * MB
#: One try per call, so each case meets its hostile answer once.
ONCE: Final = RetryPolicy(attempts=1, send_attempts=1)
#: Small time-outs: a stall must end in about a second, not in the default 30 s.
QUICK: Final = HttpSettings(connect=0.5, read=0.5, write=0.5, pool=0.5)
#: Far above anything a case needs: hitting it means the client hung.
NEVER: Final = 20.0
HTML: Final = b"<!DOCTYPE html><html><head><title>OK</title></head><body>Welcome</body></html>"
BALANCE: Final = (
    b'{"Data": {"Balance": 12.5, "Currency": "AUD"}, "Status": "Success", "StatusCode": 200}'
)

Writer = Callable[[asyncio.StreamWriter, "Hostile"], Coroutine[Any, Any, None]]


def head(
    length: int | None,
    content_type: str = "application/json",
    status: str = "200 OK",
    extra: str = "",
) -> bytes:
    """A response head; without a length the body is chunked."""
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{framing}\r\n{extra}"
        "Connection: close\r\n\r\n"
    ).encode()


def canned(body: bytes, content_type: str = "application/json", extra: str = "") -> Writer:
    async def write(writer: asyncio.StreamWriter, server: Hostile) -> None:
        writer.write(head(len(body), content_type, extra=extra) + body)
        await writer.drain()

    return write


def streamed(total: int, *, declare_length: bool) -> Writer:
    """`total` bytes of JSON-looking filler, 64 KB at a time, counted as they are sent."""
    block = b"[" + b"0," * (32 * 1024 - 1) + b"0"

    async def write(writer: asyncio.StreamWriter, server: Hostile) -> None:
        writer.write(head(total if declare_length else None))
        while server.streamed < total:
            piece = block[: total - server.streamed]
            framed = piece if declare_length else b"%x\r\n%s\r\n" % (len(piece), piece)
            writer.write(framed)
            await writer.drain()
            server.streamed += len(piece)
        if not declare_length:
            writer.write(b"0\r\n\r\n")
        await writer.drain()
        server.finished = True

    return write


def stalling(sent: bytes, declared: int) -> Writer:
    """Part of a body, then nothing more (until the test ends)."""

    async def write(writer: asyncio.StreamWriter, server: Hostile) -> None:
        writer.write(head(declared) + sent)
        await writer.drain()
        await server.hold()

    return write


def trickling(prefix: bytes, drip: bytes, every: float) -> Writer:
    """`prefix`, then `drip` every `every` seconds until the client hangs up."""

    async def write(writer: asyncio.StreamWriter, server: Hostile) -> None:
        writer.write(prefix)
        while True:
            await writer.drain()
            await asyncio.sleep(every)
            writer.write(drip)

    return write


def short_of_its_length(body: bytes, declared: int) -> Writer:
    async def write(writer: asyncio.StreamWriter, server: Hostile) -> None:
        writer.write(head(declared) + body)
        await writer.drain()

    return write


def gzip_bomb(expanded: int) -> bytes:
    """A gzip stream of `expanded` zero bytes: some KB that inflate to many MB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(MB)
    parts = [packer.compress(zeros) for _ in range(expanded // MB)]
    return b"".join(parts) + packer.flush()


@dataclass
class Hostile:
    """A loopback HTTP/1.1 server that answers each path with a scripted writer."""

    default: Writer = field(default_factory=lambda: canned(BALANCE))
    by_path: dict[str, Writer] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    streamed: int = 0
    finished: bool = False
    url: str = ""
    hung_up: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a client hangs up on the server while it reads or writes."""
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    async def hold(self) -> None:
        await self._released.wait()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_head = await reader.readuntil(b"\r\n\r\n")
            lines = request_head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1].split("?")[0]
            length = next(
                (
                    int(line.split(":", 1)[1])
                    for line in lines
                    if line.lower().startswith("content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            self.paths.append(path)
            await self.by_path.get(path, self.default)(writer, self)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.hung_up.set()  # the client hung up: what the hostile cases expect
        finally:
            writer.close()

    def requests(self, path: str) -> int:
        return self.paths.count(path)


@pytest.fixture
async def hostile() -> AsyncIterator[Hostile]:
    server = Hostile()
    handlers: set[asyncio.Task[None]] = set()

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(server.serve(reader, writer))
        handlers.add(task)
        task.add_done_callback(handlers.discard)

    listener = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    server.url = f"http://127.0.0.1:{port}"
    yield server
    server._released.set()
    listener.close()
    for task in list(handlers):
        task.cancel()
    await asyncio.gather(*handlers, return_exceptions=True)
    await listener.wait_closed()


def service(
    server: Hostile,
    *,
    auth: AuthMode = "basic",
    http: HttpSettings = QUICK,
    retry: RetryPolicy = ONCE,
) -> GatewayService:
    profile = Profile(name="hostile", rest_url=server.url, username="ops", auth=auth)
    return GatewayService(profile, Secret("pw"), http=http, retry=retry)


async def failure(call: Awaitable[object]) -> GatewayError:
    """The `GatewayError` a call ends in, within `NEVER` seconds; anything else fails the test."""
    with pytest.raises(GatewayError) as caught:
        async with asyncio.timeout(NEVER):
            await call
    error = caught.value
    assert error.message
    assert "Traceback" not in error.message
    assert len(error.message) < 400
    return error


# ---- garbage where JSON belongs --------------------------------------------------------------

GARBAGE = {
    "an HTML page with status 200": (canned(HTML, "text/html"), "web page (HTTP 200)"),
    "an HTML page labelled as JSON": (canned(HTML), "web page (HTTP 200)"),
    "truncated JSON": (canned(b'{"Data": {"Balance": 12.5, "Curr'), "not valid JSON"),
    "plain text": (canned(b"OK", "text/plain"), "not valid JSON"),
    "bytes that are not UTF-8": (
        canned(b'{"Data": {"Balance": 1, "Currency": "\xff\xfe"}}'),
        "not valid JSON",
    ),
    "JSON nested 100,000 deep": (canned(b"[" * 100_000 + b"]" * 100_000), "not valid JSON"),
    "a number of 5,000 digits": (
        canned(b'{"Data": {"Balance": ' + b"9" * 5000 + b"}}"),
        "not valid JSON",
    ),
    "an empty body": (canned(b""), "empty answer"),
    "broken gzip": (
        # A gzip header, then a deflate block of the reserved type 3.
        canned(
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff", extra="Content-Encoding: gzip\r\n"
        ),
        "could not be decoded",
    ),
}


@pytest.mark.parametrize("case", GARBAGE)
async def test_garbage_instead_of_json_is_a_protocol_error(hostile: Hostile, case: str) -> None:
    hostile.default, expected = GARBAGE[case]
    async with service(hostile) as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, ProtocolError)
    assert expected in error.message
    assert error.status == 200


# ---- JSON of the wrong shape -----------------------------------------------------------------


def _queries() -> dict[str, Callable[[GatewayService], Awaitable[object]]]:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    return {
        "balance": lambda g: g.balance(),
        "account_info": lambda g: g.rest.account_info(),
        "status": lambda g: g.status(external_system_id="ORDER-1"),
        "logs": lambda g: g.logs(),
        "replies": lambda g: g.rest.replies_page(start, None, 1, 100),
    }


QUERIES = _queries()
WRONG_SHAPES = {
    "null": b"null",
    "a string": b'"all good"',
    "an object of other fields": b'{"Result": "OK", "Count": 3}',
    "a list of other objects": b'[{"Result": "OK"}]',
}
WRONG_FIELDS = {
    "balance": b'{"Data": {"Balance": "plenty"}, "Status": "Success", "StatusCode": 200}',
    "account_info": b'{"AccountType": "Prepaid", "MessageCredits": "plenty"}',
    "status": b'[{"message_id": 5, "status": null}]',
    "logs": b'{"totalRecords": "many", "messages": []}',
    "replies": b'{"Items": "none", "PageNumber": 1}',
}


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("shape", WRONG_SHAPES)
async def test_json_of_the_wrong_shape_is_a_protocol_error(
    hostile: Hostile, query: str, shape: str
) -> None:
    hostile.default = canned(WRONG_SHAPES[shape])
    async with service(hostile) as gateway:
        error = await failure(QUERIES[query](gateway))
    assert isinstance(error, ProtocolError)
    assert "unexpected shape" in error.message


@pytest.mark.parametrize("query", QUERIES)
async def test_a_field_of_the_wrong_type_is_a_protocol_error_naming_it(
    hostile: Hostile, query: str
) -> None:
    hostile.default = canned(WRONG_FIELDS[query])
    async with service(hostile) as gateway:
        error = await failure(QUERIES[query](gateway))
    assert isinstance(error, ProtocolError)
    assert "unexpected shape" in error.message


@pytest.mark.parametrize(
    "token",
    [b'{"token_type": "bearer"}', b'{"access_token": "t", "expires_in": "soon"}', b"[]"],
)
async def test_a_token_answer_of_the_wrong_shape_is_a_protocol_error(
    hostile: Hostile, token: bytes
) -> None:
    hostile.by_path["/v2/oauth/access_token"] = canned(token)
    async with service(hostile, auth="oauth") as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, ProtocolError)
    assert hostile.requests("/v2/account/balance") == 0


async def test_a_bare_balance_object_is_read_as_the_real_services_account_resources_answer(
    hostile: Hostile,
) -> None:
    hostile.default = canned(b'{"Balance": 12.5, "Currency": "AUD", "MessageCredits": 7}')
    async with service(hostile) as gateway:
        balance = await gateway.balance()
    assert (balance.balance, balance.currency, balance.message_credits) == (12.5, "AUD", 7)


async def test_a_token_lifetime_too_large_for_a_clock_still_works(hostile: Hostile) -> None:
    hostile.by_path["/v2/oauth/access_token"] = canned(
        b'{"access_token": "t", "token_type": "bearer", "expires_in": ' + b"9" * 400 + b"}"
    )
    async with service(hostile, auth="oauth") as gateway:
        async with asyncio.timeout(NEVER):
            assert (await gateway.balance()).currency == "AUD"


# ---- too big ---------------------------------------------------------------------------------


@pytest.mark.parametrize("declare_length", [True, False], ids=["with its length", "chunked"])
async def test_a_50_mb_answer_is_cut_off_unread(hostile: Hostile, declare_length: bool) -> None:
    hostile.default = streamed(HUGE, declare_length=declare_length)
    async with service(hostile, http=HttpSettings(read=5)) as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, ProtocolError)
    assert f"larger than {MAX_RESPONSE_BYTES // MB:g} MB; it was not read" in error.message
    await asyncio.wait_for(hostile.hung_up.wait(), 10)  # the server saw the hang-up
    assert not hostile.finished
    assert hostile.streamed < HUGE


async def test_a_gzip_bomb_is_cut_off_at_the_size_cap(hostile: Hostile) -> None:
    hostile.default = canned(gzip_bomb(64 * MB), extra="Content-Encoding: gzip\r\n")
    async with service(hostile, http=HttpSettings(read=5)) as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, ProtocolError)
    assert "larger than 32 MB" in error.message


# ---- stalls and trickles ---------------------------------------------------------------------


async def test_an_answer_that_stalls_mid_body_times_out(hostile: Hostile) -> None:
    hostile.default = stalling(BALANCE[:20], declared=len(BALANCE))
    started = time.monotonic()
    async with service(hostile) as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, TransientError)
    assert "did not answer within 0.5 s" in error.message
    assert error.maybe_processed
    assert time.monotonic() - started < 5


async def test_a_body_that_trickles_forever_is_cut_off(hostile: Hostile) -> None:
    # A byte every 0.2 s restarts httpx's 0.5 s read time-out every time.
    hostile.default = trickling(head(None) + b"1\r\n[\r\n", b"1\r\n \r\n", every=0.2)
    started = time.monotonic()
    async with service(hostile) as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, TransientError)
    assert "sent its answer too slowly" in error.message
    assert error.maybe_processed
    assert time.monotonic() - started < 5


async def test_headers_that_trickle_forever_are_cut_off(hostile: Hostile) -> None:
    hostile.default = trickling(b"HTTP/1.1 200 OK\r\nX-Filler: ", b"a", every=0.2)
    started = time.monotonic()
    async with service(hostile) as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, TransientError)
    # No answer yet: it could be this side's network as well, so the gateway is not blamed.
    assert "was too slow (no answer after" in error.message
    assert "may or may not have been done" in error.message
    assert time.monotonic() - started < 6


async def test_a_body_shorter_than_its_length_is_a_broken_connection(hostile: Hostile) -> None:
    hostile.default = short_of_its_length(BALANCE[:20], declared=len(BALANCE))
    async with service(hostile) as gateway:
        error = await failure(gateway.balance())
    assert isinstance(error, TransientError)
    assert "broke before its answer arrived" in error.message


# ---- sends are never doubled by a hostile answer -------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [canned(HTML, "text/html"), canned(b'{"Data": '), canned(b'{"Result": "OK"}')],
    ids=["HTML page", "truncated JSON", "wrong shape"],
)
async def test_a_send_answered_with_garbage_is_ambiguous_and_sent_once(
    hostile: Hostile, answer: Writer, tmp_path: Path
) -> None:
    hostile.by_path["/v2/message/send"] = answer
    hostile.by_path["/v2/message/status"] = canned(HTML, "text/html")
    retry = RetryPolicy(
        attempts=1,
        send_attempts=3,
        resolve_window=0.3,
        resolve_first_delay=0.02,
        resolve_max_delay=0.05,
    )
    async with service(hostile, retry=retry) as gateway, sending_with(gateway, tmp_path) as sending:
        async with asyncio.timeout(NEVER):
            outcome = await send_one(sending, "Hello", "0412345678")
    [sent] = outcome.failed
    assert isinstance(sent.error, AmbiguousSendError)
    assert sent.entry.external_system_id is not None
    assert sent.entry.external_system_id in sent.error.message
    assert hostile.requests("/v2/message/send") == 1
