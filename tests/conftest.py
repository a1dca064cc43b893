"""Shared test scaffolding: sandboxes on their own threads, offscreen Qt."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import keyring
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gwdesk.sandbox.config import SandboxConfig
from gwdesk.sandbox.server import SandboxThread
from tests.keyrings import MemoryKeyring

SandboxFactory = Callable[..., SandboxThread]


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
