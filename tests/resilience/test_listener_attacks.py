"""The reply listener under attack: each hostile call is refused (or cut off after a time-out)
while the gateway's valid replies keep being stored and acknowledged."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from benchmarks.header_flood import Attack, attack, rss_mb

from gwdesk.replies import ListenerLimits
from gwdesk.replies.template import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.listener_support import (
    Running,
    Starter,
    listen_processes,
    running_listener,
    webhook_values,
)
from tests.sandbox.webhook_receiver import lodge, make_reply, wait_for_attempts

LIMITS = ListenerLimits(header_timeout=0.5, body_timeout=0.5, max_connections=20, linger=0.2)


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[Running]:
    with running_listener(tmp_path / "profile.sqlite3", limits=LIMITS) as running:
        yield running


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(webhook_retry_base=0.05)


class Valid:
    """Valid replies, sent while an attack goes on; each must be answered OK and stored."""

    def __init__(self, listening: Running) -> None:
        self.listening = listening
        self.sent = 0

    def send(self, within: float = 2.0) -> None:
        self.sent += 1
        started = time.monotonic()
        with httpx.Client(timeout=within) as client:
            response = client.get(self.listening.url(MSG=f"valid {self.sent}"))
        assert (response.status_code, response.text) == (200, "OK")
        assert time.monotonic() - started < within

    def all_stored(self) -> None:
        texts = {r.text for r in self.listening.store.latest()}
        assert texts == {f"valid {i}" for i in range(1, self.sent + 1)}


@pytest.fixture
def valid(listening: Running) -> Valid:
    return Valid(listening)


def exchange(running: Running, data: bytes, *, timeout: float = 5.0) -> tuple[int, bytes]:
    """Send raw bytes on a fresh connection; the status and body of the answer."""
    with socket.create_connection(("127.0.0.1", running.info.port), timeout=timeout) as sock:
        sock.sendall(data)
        return read_answer(sock)


def read_answer(sock: socket.socket) -> tuple[int, bytes]:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"closed without an answer after {received!r}")
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(head.split()[1]), body


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return True


def request(
    running: Running,
    method: str,
    headers: dict[str, str],
    body: bytes = b"",
    *,
    url: str | None = None,
) -> bytes:
    """A raw request to the secret path (or to `url`'s path and query)."""
    target = running.template.path
    if url is not None:
        parts = urlsplit(url)
        target = f"{parts.path}?{parts.query}"
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


# ---- the secret ----------------------------------------------------------------------------


def test_guessed_secrets_are_refused_while_the_gateway_gets_through(
    listening: Running, valid: Valid
) -> None:
    query = listening.url().partition("?")[2]
    guesses = [f"/replies/{'A' * n}?{query}" for n in range(1, 60)]
    guesses += [f"/replies/{listening.template.secret}/../x?{query}", f"/?{query}"]
    with httpx.Client(base_url=listening.info.address) as client:
        for index, guess in enumerate(guesses):
            assert client.get(guess).status_code == 404
            if index % 20 == 0:
                valid.send()
    valid.all_stored()


# ---- sizes and encodings -------------------------------------------------------------------


def test_a_body_declared_too_big_is_refused_before_it_is_sent(
    listening: Running, valid: Valid
) -> None:
    head = request(
        listening,
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded", "Content-Length": "1000000000"},
    )
    status, body = exchange(listening, head)
    assert status == 413
    assert b"at most 16384" in body
    valid.send()


def test_a_chunked_body_that_grows_too_big_is_refused(listening: Running, valid: Valid) -> None:
    chunk = b"a=" + b"x" * 4094
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(8)) + b"0\r\n\r\n"
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Transfer-Encoding": "chunked"}
    status, body = exchange(listening, request(listening, "POST", headers, chunks))
    assert status == 413
    assert b"over 16384 bytes" in body
    valid.send()


def test_non_utf8_is_refused_in_the_query_the_form_and_the_json(
    listening: Running, valid: Valid
) -> None:
    with httpx.Client() as client:
        query = client.get(listening.url(MSG="x").replace("msg=x", "msg=%C3%28"))
        form = client.post(
            listening.template.base_url,
            content=b"from=614&to=615&msg=caf\xe9&rcvd=05-Jan-2024%2014%3A04%3A07",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        keyword = client.post(
            listening.template.base_url,
            content=b'{"From": "614", "Message": "caf\xe9"}',
            headers={"Content-Type": "application/json"},
        )
    for response in (query, form, keyword):
        assert response.status_code == 400
        assert "not UTF-8" in response.text
    valid.send()
    valid.all_stored()


def test_absurd_parameter_counts_are_refused(listening: Running, valid: Valid) -> None:
    with httpx.Client() as client:
        in_query = client.get(listening.url() + "&a=1" * 1500)
        in_form = client.post(
            listening.template.base_url,
            content=b"&" * 16000,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    for response in (in_query, in_form):
        assert response.status_code == 400
        assert "at most 50 are accepted" in response.text
    valid.send()


def test_xml_where_form_or_json_is_expected_is_refused_unread(
    listening: Running, valid: Valid
) -> None:
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><r>&lol2;</r>'
    )
    with httpx.Client() as client:
        as_xml = client.post(
            listening.template.base_url, content=laughs, headers={"Content-Type": "text/xml"}
        )
        soap = client.post(
            listening.template.base_url,
            content=laughs,
            headers={"Content-Type": "application/soap+xml; charset=utf-8"},
        )
        disguised = client.post(
            listening.template.base_url,
            content=laughs,
            headers={"Content-Type": "application/json"},
        )
    assert as_xml.status_code == soap.status_code == 415
    assert "text/xml is not accepted" in as_xml.text
    assert (disguised.status_code, "not JSON" in disguised.text) == (400, True)
    valid.send()


def test_a_head_over_the_total_cap_gets_a_431_and_the_connection_is_closed(
    listening: Running, valid: Valid
) -> None:
    padding = {f"X-Pad-{i}": "p" * 1200 for i in range(60)}  # each header fine, 72 KB in all
    with socket.create_connection(("127.0.0.1", listening.info.port), timeout=5) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(request(listening, "GET", padding))
        status, body = read_answer(sock)
        assert closed_by_peer(sock, 5)
    assert (status, body) == (431, b"The request head is too large.\n")
    valid.send()


def test_each_request_on_a_kept_alive_connection_has_its_own_head_budget(
    listening: Running,
) -> None:
    padding = {f"X-Pad-{i}": "p" * 1000 for i in range(40)}  # 40 KB a head, 200 KB in all
    with socket.create_connection(("127.0.0.1", listening.info.port), timeout=5) as sock:
        for n in range(1, 6):
            sock.sendall(request(listening, "GET", padding, url=listening.url(MSG=f"kept {n}")))
            assert read_answer(sock) == (200, b"OK")
    assert {r.text for r in listening.store.latest()} == {f"kept {n}" for n in range(1, 6)}


def test_garbage_instead_of_http_is_refused_without_harm(listening: Running, valid: Valid) -> None:
    for garbage in (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(200), b"HELLO\r\n\r\n"):
        status, _ = exchange(listening, garbage)
        assert status == 400
    status, _ = exchange(listening, b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status in (400, 414)
    many_headers = "".join(f"X-H{i}: v\r\n" for i in range(40000)).encode()
    with socket.create_connection(("127.0.0.1", listening.info.port), timeout=5) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b"GET / HTTP/1.1\r\n" + many_headers + b"\r\n")  # may be cut off
        assert closed_by_peer(sock, 5)
    valid.send()
    valid.all_stored()


# ---- slow and hoarding clients -------------------------------------------------------------


def test_slowloris_headers_are_cut_off_while_valid_replies_are_served(
    listening: Running, valid: Valid
) -> None:
    slow = [
        socket.create_connection(("127.0.0.1", listening.info.port), timeout=5) for _ in range(30)
    ]
    stop = threading.Event()
    cut: list[socket.socket] = []

    def trickle() -> None:
        for sock in slow:
            sock.sendall(b"GET " + listening.template.path.encode() + b" HTTP/1.1\r\n")
        while not stop.is_set() and len(cut) < len(slow):
            for sock in slow:
                if sock in cut:
                    continue
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    cut.append(sock)
            time.sleep(0.05)

    attacker = threading.Thread(target=trickle)
    attacker.start()
    try:
        for _ in range(5):
            valid.send(within=1.0)
            time.sleep(0.1)
        deadline = time.monotonic() + 5
        for sock in slow:
            assert closed_by_peer(sock, max(deadline - time.monotonic(), 0.1))
    finally:
        stop.set()
        attacker.join()
        for sock in slow:
            sock.close()
    valid.all_stored()


def test_a_request_head_sent_too_slowly_is_cut_off_after_the_time_out(listening: Running) -> None:
    with socket.create_connection(("127.0.0.1", listening.info.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(b"GET " + listening.template.path.encode() + b" HTTP/1.1\r\n")
        with contextlib.suppress(OSError):
            while time.monotonic() - started < 3:
                sock.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.05)
        assert closed_by_peer(sock, 1)
        lasted = time.monotonic() - started
    assert LIMITS.header_timeout <= lasted < 2


def test_a_body_sent_too_slowly_gets_a_408(listening: Running, valid: Valid) -> None:
    head = request(
        listening,
        "POST",
        {"Content-Type": "application/x-www-form-urlencoded", "Content-Length": "200"},
    )
    with socket.create_connection(("127.0.0.1", listening.info.port), timeout=5) as sock:
        sock.sendall(head + b"from=614")
        started = time.monotonic()
        status, body = read_answer(sock)
        waited = time.monotonic() - started
    assert status == 408
    assert b"did not arrive within 0.5 s" in body
    assert waited < 3
    valid.send()


def test_hoarded_idle_connections_do_not_lock_the_gateway_out(
    listening: Running, valid: Valid
) -> None:
    hoard = [
        socket.create_connection(("127.0.0.1", listening.info.port), timeout=5)
        for _ in range(LIMITS.max_connections + 10)
    ]
    try:
        valid.send(within=1.0)
        assert closed_by_peer(hoard[0], 2)
    finally:
        for sock in hoard:
            sock.close()


def test_a_newcomer_is_turned_away_rather_than_a_request_in_progress_cut(
    tmp_path: Path,
) -> None:
    limits = ListenerLimits(body_timeout=1.0, max_connections=5)
    with running_listener(tmp_path / "p.sqlite3", limits=limits) as listening:
        head = request(
            listening,
            "POST",
            {"Content-Type": "application/x-www-form-urlencoded", "Content-Length": "100"},
        )
        busy = [
            socket.create_connection(("127.0.0.1", listening.info.port), timeout=5)
            for _ in range(limits.max_connections)
        ]
        try:
            for sock in busy:
                sock.sendall(head + b"from=")  # each now waits in the handler for its body
            deadline = time.monotonic() + 5
            while listening.listener.requests_in_progress < limits.max_connections:
                assert time.monotonic() < deadline, "the slow bodies never reached the handler"
                time.sleep(0.01)
            status, _ = exchange(listening, request(listening, "GET", {}))
            answers = [read_answer(sock)[0] for sock in busy]
        finally:
            for sock in busy:
                sock.close()
        assert status == 503
        assert answers == [408] * limits.max_connections
        Valid(listening).send()


def test_a_flood_of_refused_calls_leaves_replies_through_the_sandbox_working(
    gateway: SandboxThread, listening: Running
) -> None:
    stop = threading.Event()

    def pester() -> None:
        with httpx.Client(base_url=listening.info.address) as client:
            while not stop.is_set():
                client.get("/replies/guess?from=1")
                client.post(
                    listening.template.path, content=b"<x/>", headers={"Content-Type": "text/xml"}
                )

    attackers = [threading.Thread(target=pester) for _ in range(3)]
    for attacker in attackers:
        attacker.start()
    try:
        message_id = lodge(gateway, "HTTPPOST", listening.template.render())
        made = make_reply(gateway, message_id=message_id, text="Still here?")
        [attempt] = wait_for_attempts(gateway, made["ReplyId"], 1)
    finally:
        stop.set()
        for attacker in attackers:
            attacker.join()
    assert attempt["Ok"], attempt
    assert [r.text for r in listening.store.latest()] == ["Still here?"]


# ---- memory ----------------------------------------------------------------------------------


@dataclass
class Memory:
    """A process's resident set, sampled until `stop` is set."""

    pid: int
    peak_mb: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)

    def now(self) -> float:
        return rss_mb(self.pid)

    def sample(self) -> None:
        while not self.stop.wait(0.02):
            self.peak_mb = max(self.peak_mb, self.now())

    def open_connections(self) -> int:
        """Sockets the process holds (its listening socket included)."""
        count = 0
        for fd in Path(f"/proc/{self.pid}/fd").iterdir():
            try:
                count += fd.readlink().name.startswith("socket:")
            except FileNotFoundError:
                continue  # closed while the folder was read: not held any more
        return count


@pytest.fixture
def listen_process() -> Iterator[Starter]:
    with listen_processes() as start:
        yield start


def test_a_flood_of_huge_unfinished_heads_holds_little_memory_and_valid_replies_get_through(
    listen_process: Starter,
) -> None:
    listening = listen_process("--port", "0", "--json")  # the real listener, in its own process
    template = ReplyTemplate.parse(listening.line())
    with httpx.Client(timeout=5) as client:
        assert client.get(template.fill(webhook_values(MSG="warm up"))).text == "OK"
    assert json.loads(listening.line())["text"] == "warm up"
    memory = Memory(listening.process.pid)
    before, sockets_before = memory.now(), memory.open_connections()
    sampler = threading.Thread(target=memory.sample)
    sampler.start()
    flood: list[Attack] = []
    attacker = threading.Thread(
        target=lambda: flood.append(
            asyncio.run(attack("127.0.0.1", template.port, 250, 960 * 1024, seconds=4.0))
        )
    )
    attacker.start()
    try:
        for n in range(1, 6):  # ~250 MB of head bytes would be held without a cap
            time.sleep(0.4)
            started = time.monotonic()
            with httpx.Client(timeout=10) as client:
                answer = client.get(template.fill(webhook_values(MSG=f"valid {n}")))
            assert (answer.status_code, answer.text) == (200, "OK")
            assert json.loads(listening.line())["text"] == f"valid {n}"  # stored, then printed
            assert time.monotonic() - started < 2.0
    finally:
        attacker.join()
        memory.stop.set()
        sampler.join()
    [tally] = flood
    assert tally.cut_off > tally.opened / 2  # the listener closed the heads it would not hold
    assert memory.peak_mb - before < 150
    deadline = time.monotonic() + 10
    while memory.open_connections() > sockets_before:
        assert time.monotonic() < deadline, "the flood's connections were not all closed"
        time.sleep(0.1)
    assert memory.now() - before < 50
