"""`gwdesk listen` stops on the first SIGTERM, every time, within 2 s and with status 0.

Issue 25's recipe, 200 times in a row, each run a process of its own (forked from one
that has imported gwdesk, `listen_forks.py`): started against the sandbox gateway (so
its backfill and scheduled-send threads run too), sent a `Stop.` and a `please don't
stop my order` through its ReplyPath, then SIGTERM. The first signal used to be lost
in about one run in 30 (see `gwdesk.cli.stop_signal`). The same with the team's
PostgreSQL store, and with that store cut away while the replies are in flight.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from gwdesk.app.profile_data import INLINE_NAME, store_path
from gwdesk.cli.listen import STOP_WITHIN
from gwdesk.replies.template import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import ReplyStore
from tests.contract.listen_forks import ForkedListen, Forks, forked_listens
from tests.contract.listener_support import listen_processes, webhook_values
from tests.cut_proxy import cut_proxy

RUNS = int(os.environ.get("GWDESK_STOP_RUNS", "200"))
WITHIN = 2.0
TEXTS = ("Stop.", "please don't stop my order")


@pytest.fixture
def forks() -> Iterator[Forks]:
    with forked_listens() as started:
        yield started


def gateway_args(sandbox: SandboxThread) -> list[str]:
    return ["--base-url", sandbox.rest_url, "--username", "demo", "--port", "0", "--quiet"]


def environment() -> dict[str, str]:
    return {**os.environ, "GWDESK_PASSWORD": "demo"}


def replies_of(run: int) -> list[dict[str, str]]:
    """The run's two replies, each from a number of its own (so each is stored anew)."""
    return [webhook_values(FROM=f"614{run:05d}{n}", MSG=text) for n, text in enumerate(TEXTS)]


def stops_in_time(
    forks: Forks,
    args: list[str],
    send: Callable[[ForkedListen, ReplyTemplate, int], None],
    before: Callable[[], None] = lambda: None,
    said: tuple[str, ...] = ("gwdesk: stopped",),
) -> list[float]:
    """`before()`, start, `send(listening, template, run)`, SIGTERM, RUNS times: how long each took to
    end (each with status 0, its last line one of `said`)."""
    took = []
    for run in range(RUNS):
        before()
        listening = forks.start(*args, env=environment())
        template = ReplyTemplate.parse(listening.line())
        send(listening, template, run)
        asked = time.monotonic()
        os.kill(listening.pid, signal.SIGTERM)
        ended = listening.ended(timeout=30)
        took.append(ended.at - asked)
        last = ended.errors.splitlines()[-1:]
        assert ended.status == 0, f"run {run}: {ended.errors}"
        assert last[0] in said, f"run {run}: {ended.errors}"
        assert took[-1] < WITHIN, f"run {run} took {took[-1]:.2f} s to stop: {ended.errors}"
    took.sort()
    print(f"{RUNS} stops: median {took[len(took) // 2]:.3f} s, slowest {took[-1]:.3f} s")
    return took


@pytest.mark.timeout(600)
def test_the_first_sigterm_stops_it_every_time(forks: Forks, sandbox: SandboxThread) -> None:
    with httpx.Client() as http:

        def send(_: ForkedListen, template: ReplyTemplate, run: int) -> None:
            for values in replies_of(run):
                assert http.get(template.fill(values)).text == "OK"

        stops_in_time(forks, gateway_args(sandbox), send)
    store = ReplyStore(store_path(INLINE_NAME))
    try:
        assert store.count() == 2 * RUNS  # every acknowledged reply stayed stored
    finally:
        store.close()


@pytest.mark.timeout(600)
def test_the_first_sigterm_stops_it_every_time_on_the_teams_server(
    forks: Forks, sandbox: SandboxThread, pg_url: str
) -> None:
    with httpx.Client() as http:

        def send(_: ForkedListen, template: ReplyTemplate, run: int) -> None:
            for values in replies_of(run):
                assert http.get(template.fill(values)).text == "OK"

        stops_in_time(forks, [*gateway_args(sandbox), "--store", pg_url], send)
    server = PostgresDatabase(pg_url, upgrade=False)
    try:
        with server.session() as session:
            stored = session.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
        assert stored == 2 * RUNS
    finally:
        server.close()


@pytest.mark.timeout(900)
def test_the_first_sigterm_stops_it_every_time_with_the_store_away(
    forks: Forks, sandbox: SandboxThread, pg_url: str
) -> None:
    """The store cut away under a running receiver (its backfill done) just before the
    replies come: they wait for it, and the stop does not wait for them past its bound."""
    answers: list[int] = []
    with cut_proxy(pg_url) as proxy, httpx.Client(timeout=30) as http:

        def ask(url: str) -> None:
            try:
                answers.append(http.get(url).status_code)
            except httpx.HTTPError:
                answers.append(0)  # dropped by the stop: not acknowledged, so retried

        def send(listening: ForkedListen, template: ReplyTemplate, run: int) -> None:
            listening.note("backfill since")  # running: then the store goes away
            proxy.cut()
            for values in replies_of(run):
                threading.Thread(target=ask, args=(template.fill(values),), daemon=True).start()

        args = [*gateway_args(sandbox), "--store", proxy.via(pg_url)]
        late = f"gwdesk: stopped after {STOP_WITHIN:g} s with work still waiting " + (
            "(the store did not answer); replies not acknowledged are left to the gateway's retries"
        )
        said = ("gwdesk: stopped", late)
        stops_in_time(forks, args, send, before=proxy.join, said=said)
    assert 200 not in answers  # nothing was acknowledged that was not stored


def test_a_sigterm_while_it_starts_against_a_silent_server_stops_it_in_time() -> None:
    """Starting: the store's server accepts the connection and never answers (psycopg
    would wait its 5 s connect time-out); the stop's bound holds from the signal on."""
    with socket.create_server(("127.0.0.1", 0)) as silent, listen_processes() as start:
        port = silent.getsockname()[1]
        listening = start("--port", "0", "--store", f"postgresql://gwdesk@127.0.0.1:{port}/office")
        listening.note("no gateway named")  # said just before the store opens
        connection, _ = silent.accept()  # and never answered
        with connection:
            asked = time.monotonic()
            listening.process.send_signal(signal.SIGTERM)
            listening.process.wait(timeout=10)
            took = time.monotonic() - asked
        code, errors = listening.stop()
    assert code == 0
    assert took < WITHIN, errors
    assert errors.splitlines()[-1].startswith(f"gwdesk: stopped after {STOP_WITHIN:g} s")
