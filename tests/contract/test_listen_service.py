"""`gwdesk listen` as a service: it tells systemd when it is ready, pings its watchdog and
says when it stops (`NOTIFY_SOCKET`, a datagram socket the test owns), answers
`/healthz`, and with `--metrics` and `--log-format json` can be watched; the ReplyPath's
secret is in none of it."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import socket
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from gwdesk.replies.template import ReplyTemplate
from tests.contract.listener_support import Listening, Starter, listen_processes, webhook_values
from tests.cut_proxy import cut_proxy


@pytest.fixture
def start() -> Iterator[Starter]:
    with listen_processes() as run:
        yield run


@pytest.fixture
def supervisor() -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket in the abstract namespace, as systemd hands one (`@name`)."""
    name = f"gwdesk-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    try:
        yield sock, f"@{name}"
    finally:
        sock.close()


def heard(sock: socket.socket, timeout: float = 15.0) -> list[str]:
    """The next datagram's lines."""
    sock.settimeout(timeout)
    return sock.recv(4096).decode().splitlines()


def until_heard(sock: socket.socket, line: str, timeout: float = 15.0) -> list[list[str]]:
    """Every datagram up to and including the one holding `line`."""
    seen = []
    ends = time.monotonic() + timeout
    while True:
        seen.append(heard(sock, max(ends - time.monotonic(), 0.01)))
        if line in seen[-1]:
            return seen


def datagrams_for(sock: socket.socket, seconds: float) -> list[str]:
    """Every line heard in the next `seconds`."""
    lines = []
    ends = time.monotonic() + seconds
    while (left := ends - time.monotonic()) > 0:
        try:
            lines += heard(sock, left)
        except TimeoutError:
            break
    return lines


def service_env(notify: str, **more: str) -> dict[str, str]:
    return {**os.environ, "NOTIFY_SOCKET": notify, **more}


def scrape(port: int) -> dict[str, float]:
    """The metrics page as {series: value}."""
    page = httpx.get(f"http://127.0.0.1:{port}/metrics")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/plain; version=")
    values = {}
    for line in page.text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            values[series] = float(value)
    return values


def metrics_port(listening: Listening) -> int:
    note = listening.note("metrics on http://127.0.0.1:")
    found = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", note)
    assert found is not None, note
    return int(found.group(1))


def test_ready_is_said_once_the_port_answers_and_the_store_is_open(
    start: Starter, supervisor: tuple[socket.socket, str]
) -> None:
    sock, name = supervisor
    listening = start("--port", "0", env=service_env(name))
    ready = heard(sock)
    assert ready[0] == "READY=1"
    template = ReplyTemplate.parse(listening.line(timeout=0.5))  # printed before READY
    health = httpx.get(f"http://127.0.0.1:{template.port}/healthz")
    assert (health.status_code, health.text) == (200, "ok\n")
    code, _ = listening.stop(signal.SIGTERM)
    assert code == 0


def test_the_watchdog_is_pinged_at_half_its_interval(
    start: Starter, supervisor: tuple[socket.socket, str]
) -> None:
    sock, name = supervisor
    listening = start("--port", "0", env=service_env(name, WATCHDOG_USEC="600000"))
    until_heard(sock, "READY=1")
    pings: list[float] = []
    while len(pings) < 5:
        if heard(sock) == ["WATCHDOG=1"]:
            pings.append(time.monotonic())
    gaps = [later - earlier for earlier, later in itertools.pairwise(pings)]
    assert all(0.15 < gap < 0.6 for gap in gaps), gaps  # every 0.3 s, well within 0.6 s
    code, _ = listening.stop(signal.SIGTERM)
    assert code == 0


def test_a_watchdog_meant_for_another_process_is_not_pinged(
    start: Starter, supervisor: tuple[socket.socket, str]
) -> None:
    sock, name = supervisor
    env = service_env(name, WATCHDOG_USEC="200000", WATCHDOG_PID="1")
    listening = start("--port", "0", env=env)
    until_heard(sock, "READY=1")
    assert "WATCHDOG=1" not in datagrams_for(sock, 0.6)
    code, _ = listening.stop(signal.SIGTERM)
    assert code == 0


def test_stopping_is_said_on_sigterm_before_it_ends(
    start: Starter, supervisor: tuple[socket.socket, str]
) -> None:
    sock, name = supervisor
    listening = start("--port", "0", env=service_env(name))
    until_heard(sock, "READY=1")
    listening.process.send_signal(signal.SIGTERM)
    assert "STOPPING=1" in heard(sock)
    listening.process.wait(timeout=5)
    code, errors = listening.stop(signal.SIGTERM)  # it has ended: this collects what it wrote
    assert code == 0
    assert errors.endswith("gwdesk: stopped\n")


def test_the_watchdog_waits_while_the_store_is_away_and_resumes_after(
    start: Starter, supervisor: tuple[socket.socket, str], pg_url: str
) -> None:
    sock, name = supervisor
    with cut_proxy(pg_url) as proxy:
        env = service_env(name, WATCHDOG_USEC="400000")
        listening = start("--port", "0", "--store", proxy.via(pg_url), env=env)
        until_heard(sock, "WATCHDOG=1")
        proxy.cut()
        until_heard(sock, "STATUS=failing: store")
        assert "WATCHDOG=1" not in datagrams_for(sock, 1.0)  # no ping while it fails
        proxy.join()
        until_heard(sock, "WATCHDOG=1", timeout=30)
        code, errors = listening.stop(signal.SIGTERM)
    assert code == 0
    assert "gwdesk: health: failing: store" in errors
    assert "gwdesk: health: ok" in errors


def test_healthz_says_ok_then_503_with_the_store_away_then_ok_again(
    start: Starter, pg_url: str
) -> None:
    with cut_proxy(pg_url) as proxy:
        listening = start("--port", "0", "--store", proxy.via(pg_url))
        port = ReplyTemplate.parse(listening.line()).port
        url = f"http://127.0.0.1:{port}/healthz"
        assert (httpx.get(url).status_code, httpx.get(url).text) == (200, "ok\n")
        proxy.cut()
        away = httpx.get(url, timeout=30)
        assert (away.status_code, away.text) == (503, "failing: store\n")
        proxy.join()
        deadline = time.monotonic() + 30
        while (back := httpx.get(url, timeout=30)).status_code != 200:
            assert time.monotonic() < deadline, back.text
        assert back.text == "ok\n"
        code, _ = listening.stop(signal.SIGTERM)
    assert code == 0


def test_metrics_count_exactly_the_replies_sent_and_never_show_the_secret(
    start: Starter,
) -> None:
    listening = start("--port", "0", "--metrics", "0", "--log-format", "json")
    template = ReplyTemplate.parse(listening.line())
    port = metrics_port(listening)
    before = scrape(port)
    with httpx.Client() as http:
        for n in range(3):
            assert http.get(template.fill(webhook_values(FROM=f"6141234567{n}"))).text == "OK"
        assert http.get(template.fill(webhook_values(FROM="61412345670"))).text == "OK"  # again
        assert http.get(f"http://127.0.0.1:{template.port}/replies/guess").status_code == 404
        assert http.put(template.fill(webhook_values())).status_code == 405
    after = scrape(port)
    moved = {k: after[k] - before.get(k, 0.0) for k in after if after[k] != before.get(k, 0.0)}
    assert moved == {
        "gwdesk_replies_stored_total": 3,
        "gwdesk_replies_duplicate_total": 1,
        "gwdesk_reply_commits_total": 4,
        'gwdesk_reply_calls_refused_total{reason="not_found"}': 1,
        'gwdesk_reply_calls_refused_total{reason="method"}': 1,
        "gwdesk_reply_commit_seconds_count": 4,
        "gwdesk_reply_commit_seconds_sum": moved["gwdesk_reply_commit_seconds_sum"],
        **{k: v for k, v in moved.items() if k.startswith("gwdesk_reply_commit_seconds_bucket")},
    }
    page = httpx.get(f"http://127.0.0.1:{port}/metrics").text
    code, errors = listening.stop(signal.SIGTERM)
    assert code == 0
    secret = template.secret
    assert secret not in page
    assert secret not in errors


def test_metrics_are_not_served_on_the_reply_port(start: Starter) -> None:
    listening = start("--port", "0", "--metrics", "0")
    template = ReplyTemplate.parse(listening.line())
    assert httpx.get(f"http://127.0.0.1:{template.port}/metrics").status_code == 404
    code, _ = listening.stop(signal.SIGTERM)
    assert code == 0


def test_metrics_are_off_by_default(start: Starter) -> None:
    listening = start("--port", "0")
    listening.line()
    code, errors = listening.stop(signal.SIGTERM)
    assert code == 0
    assert "metrics" not in errors


def test_the_json_log_is_one_object_a_line_and_holds_no_secret(start: Starter) -> None:
    listening = start("--port", "0", "--log-format", "json")
    template = ReplyTemplate.parse(listening.line())
    with httpx.Client() as http:
        assert http.get(template.fill(webhook_values(MSG='\x1b[2J{"level": "x"}'))).text == "OK"
        assert http.put(template.fill(webhook_values())).status_code == 405
    listening.line()
    code, errors = listening.stop(signal.SIGTERM)
    assert code == 0
    records = [json.loads(line) for line in errors.splitlines()]
    assert [r["event"] for r in records][:2] == ["note", "listening"]
    assert records[-1]["event"] == "stopped"
    assert all({"time", "level", "event", "message"} <= r.keys() for r in records)
    assert template.secret not in errors


def test_metrics_count_the_keyword_rules_runs(start: Starter) -> None:
    import subprocess
    import sys

    added = subprocess.run(
        [sys.executable, "-m", "gwdesk.cli", "rules", "add", "hours", "--whole", "HOURS",
         "--tag", "hours", "--base-url", "http://127.0.0.1:9/", "--username", "demo"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    listening = start("--port", "0", "--metrics", "0")
    template = ReplyTemplate.parse(listening.line())
    port = metrics_port(listening)
    assert httpx.get(template.fill(webhook_values(MSG="Hours?"))).text == "OK"
    listening.note("rule hours on reply")
    assert scrape(port)['gwdesk_rule_runs_total{answered="no"}'] == 1
    code, _ = listening.stop(signal.SIGTERM)
    assert code == 0
