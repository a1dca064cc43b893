"""Shared test scaffolding: sandboxes on their own threads, offscreen Qt."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gwdesk.sandbox.config import SandboxConfig
from gwdesk.sandbox.server import SandboxThread

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
