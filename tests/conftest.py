"""Shared test scaffolding: sandboxes on their own threads, offscreen Qt."""

from __future__ import annotations

import gc
import itertools
import os
from collections.abc import Callable, Iterator

import keyring
import pytest
from hypothesis import settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gwdesk.sandbox.config import SandboxConfig
from gwdesk.sandbox.server import SandboxThread
from tests.keyrings import MemoryKeyring
from tests.postgres_server import PostgresServer, postgres_server

SandboxFactory = Callable[..., SandboxThread]

# Properties check what a function does, never how fast: an example slowed by a loaded
# machine (the suite runs in eight workers on two cores) is no failure.
settings.register_profile("gwdesk", deadline=None)
settings.load_profile("gwdesk")


@pytest.fixture(scope="session", autouse=True)
def imports_kept_out_of_collections() -> Iterator[None]:
    """What collection imported lives all session: freeze it, so the full collection
    after each test (below) only walks what tests made (~50 ms a test otherwise)."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def garbage_collected_on_the_main_thread() -> Iterator[None]:
    """No automatic collection during a test, a full one after it, on the main thread.

    Once any test has made Qt objects, a collection that runs on a sandbox or worker
    thread (whichever thread allocates when the threshold is crossed) may destroy
    their leftovers there, and Qt later crashes in the main thread's event
    processing. The console does the same with `gwdesk.ui.gc_guard.GuiThreadCollector`.

    What survives the collection is frozen, so the next one walks only what the next
    test made: a worker keeps what its tests leave alive (about 1,000 objects a test),
    and walking all of it after each of ~900 tests cost each worker over a minute of
    CPU, growing with every test (measured: 147 tests, teardowns 4.3 s -> 0.8 s CPU).
    """
    gc.disable()
    yield
    gc.collect()
    gc.freeze()
    gc.enable()


@pytest.fixture
def sandbox_factory() -> Iterator[SandboxFactory]:
    """Start sandboxes with chosen settings; each runs on its own thread and loop."""
    started: list[SandboxThread] = []

    def start(**settings: object) -> SandboxThread:
        settings.setdefault("webhook_retry_base", 0.05)
        settings.setdefault("seed", 1234)
        running = SandboxThread(SandboxConfig(**settings)).start()  # type: ignore[arg-type]
        started.append(running)
        return running

    yield start
    for running in reversed(started):
        running.stop()


@pytest.fixture
def sandbox(sandbox_factory: SandboxFactory) -> SandboxThread:
    """A fresh in-memory sandbox with the demo account (demo/demo)."""
    return sandbox_factory()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL server for the session's team tests (a real server)."""
    with postgres_server() as server:
        yield server


@pytest.fixture
def pg_url(postgres: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database on the session's server, named after the test; dropped after it
    (hundreds of databases left to the end made the server's folder take minutes to
    remove)."""
    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50]
    name = f"{name}_{next(_databases)}"
    yield postgres.create_database(name)
    postgres.drop_database(name)


_databases = itertools.count(1)


@pytest.fixture(autouse=True)
def hermetic_settings(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[MemoryKeyring]:
    """Every test gets its own config and data dirs and an in-memory keyring."""
    base = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("GWDESK_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("GWDESK_DATA_DIR", str(base / "data"))
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
