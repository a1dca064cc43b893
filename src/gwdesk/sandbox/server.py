"""Assembles and runs one sandbox gateway: REST, Lodge, webhooks, control, background work."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import ssl
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from aiohttp import web

from gwdesk.sandbox import control, faults, lodge, rest, webhooks
from gwdesk.sandbox.auth import Authenticator
from gwdesk.sandbox.config import LODGE_PATH, SandboxConfig
from gwdesk.sandbox.db import ensure_account, open_database
from gwdesk.sandbox.engine import Engine
from gwdesk.sandbox.state import STATE, SandboxState

log = logging.getLogger("gwdesk.sandbox")
T = TypeVar("T")


def build_state(config: SandboxConfig) -> SandboxState:
    zone = ZoneInfo(config.timezone)
    rng = random.Random(config.seed)
    conn = open_database(config.db)
    ensure_account(conn, config.username, config.password, account_type=config.account_type)
    for username, password in config.extra_accounts:
        ensure_account(conn, username, password)
    engine = Engine(
        conn,
        zone,
        rng,
        simulate_delivery=config.simulate_delivery,
        delivery_delay=config.delivery_delay,
        delivery_failure_rate=config.delivery_failure_rate,
    )
    return SandboxState(
        config=config,
        conn=conn,
        zone=zone,
        rng=rng,
        engine=engine,
        auth=Authenticator(conn, config.token_ttl),
    )


def build_app(state: SandboxState) -> web.Application:
    # Bodies are bounded per face (REST and Lodge have different limits), so aiohttp's own
    # limit only has to stay above the largest of them.
    limit = max(state.config.rest_body_limit, state.config.lodge_body_limit) + 1
    app = web.Application(
        client_max_size=limit,
        middlewares=[faults.middleware, rest.rest_errors],
    )
    app[STATE] = state
    rest.register(app)
    lodge.register(app)
    control.register(app)
    webhooks.register(app)
    faults.register(app)
    app.on_startup.append(_start_background)
    app.on_cleanup.append(_stop_background)
    return app


async def _batch_loader(state: SandboxState) -> None:
    """Loads background batches a step at a time, round robin, so progress is visible."""
    config = state.config
    while True:
        await state.batch_wakeup.wait()
        state.batch_wakeup.clear()
        pending = state.engine.pending_batches()
        while pending:
            for code in list(pending):
                if state.engine.load_batch_step(code, config.batch_step):
                    pending.remove(code)
            await asyncio.sleep(config.batch_step_delay)
            if state.batch_wakeup.is_set():
                state.batch_wakeup.clear()
                pending = state.engine.pending_batches()


async def _delivery_settler(state: SandboxState) -> None:
    while True:
        await asyncio.sleep(0.25)
        state.engine.settle_deliveries()


async def _start_background(app: web.Application) -> None:
    state = app[STATE]
    state.spawn(_batch_loader(state), "batch-loader")
    if state.engine.pending_batches():
        state.batch_wakeup.set()
    if state.config.simulate_delivery:
        state.spawn(_delivery_settler(state), "delivery-settler")


async def _stop_background(app: web.Application) -> None:
    state = app[STATE]
    for task in list(state.tasks):
        task.cancel()
    await asyncio.gather(*state.tasks, return_exceptions=True)
    state.conn.close()


def _no_key_password() -> bytes:
    raise ValueError("the TLS key is encrypted; give an unencrypted one")


def tls_context(cert: Path | None, key: Path | None) -> ssl.SSLContext | None:
    """The server side of https, or None for plain http.

    Loaded before anything listens, so a missing or mismatched file is one clear
    `ValueError` rather than a handshake failure in every client.
    """
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ValueError("a TLS certificate and its key go together: give both or neither")
    for what, path in (("certificate", cert), ("key", key)):
        if not path.is_file():
            raise ValueError(f"the TLS {what} {str(path)[:200]!r} is not a file")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        # A password callback, so an encrypted key is refused instead of prompting a terminal.
        context.load_cert_chain(cert, key, password=_no_key_password)
    except ssl.SSLError:
        raise ValueError(
            f"{str(cert)[:200]!r} and {str(key)[:200]!r} are not a PEM certificate and its "
            "matching, unencrypted private key"
        ) from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValueError(f"the TLS certificate or key cannot be read: {reason}") from None
    return context


@dataclass
class RunningSandbox:
    """A listening sandbox: its addresses, its state, and how to stop it."""

    state: SandboxState
    runner: web.AppRunner
    rest_url: str
    lodge_url: str

    async def stop(self) -> None:
        await self.runner.cleanup()


async def start_sandbox(config: SandboxConfig) -> RunningSandbox:
    """Start listening on the running loop; a port of 0 picks a free one.

    With `tls_cert` and `tls_key` every face (REST, Lodge, control) is served over
    https only, and the addresses say so.
    """
    tls = tls_context(config.tls_cert, config.tls_key)
    state = build_state(config)
    runner = web.AppRunner(build_app(state), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port, reuse_address=True, ssl_context=tls)
    await site.start()
    host, port = runner.addresses[0][:2]
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if tls is not None else "http"
    state.rest_url = f"{scheme}://{shown}:{port}"
    state.lodge_url = f"{state.rest_url}{LODGE_PATH}"
    return RunningSandbox(state, runner, state.rest_url, state.lodge_url)


class SandboxThread:
    """A sandbox on its own thread and event loop: a real peer for blocking clients too.

    Tests use it so that a client's event loop (or a blocking zeep WSDL load) never
    shares a loop with the server it talks to.
    """

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="sandbox", daemon=True)
        self.sandbox: RunningSandbox | None = None

    def start(self) -> SandboxThread:
        self._thread.start()
        self.sandbox = self._submit(start_sandbox(self.config)).result(timeout=30)
        return self

    def stop(self) -> None:
        if self.sandbox is not None:
            self._submit(self.sandbox.stop()).result(timeout=30)
            self.sandbox = None
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        self._loop.close()

    def __enter__(self) -> SandboxThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def rest_url(self) -> str:
        assert self.sandbox is not None
        return self.sandbox.rest_url

    @property
    def lodge_url(self) -> str:
        assert self.sandbox is not None
        return self.sandbox.lodge_url

    @property
    def state(self) -> SandboxState:
        assert self.sandbox is not None
        return self.sandbox.state

    def call(self, fn: Callable[[SandboxState], T]) -> T:
        """Run `fn(state)` on the sandbox's loop thread and return its result."""

        async def run() -> T:
            return fn(self.state)

        result: T = self._submit(run()).result(timeout=30)
        return result

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of a read-only query against the sandbox's database, run on its thread."""
        return self.call(lambda s: [tuple(r) for r in s.conn.execute(sql, params).fetchall()])

    def _submit(self, coro: Any) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)


@contextlib.contextmanager
def sandbox_thread(config: SandboxConfig | None = None) -> Iterator[SandboxThread]:
    with SandboxThread(config) as running:
        yield running
