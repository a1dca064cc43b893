"""UI test scaffolding: one QApplication, a qasync loop per test, real services.

Async tests run on a qasync loop (so Qt events and asyncio tasks both progress);
waits are `await wait_until(...)`, never `qtbot.waitUntil`, which starves asyncio.
Every test gets a `ui` bundle whose error reporter shows no dialogs but fails the
test if anything unexpected was reported.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from gwdesk.domain.models import Secret
from gwdesk.paths import AppPaths
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import default_service_factory, sandbox_profile
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.sandbox_process import SandboxAddresses
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme


def qapp_instance() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication([])
    assert isinstance(app, QApplication)
    return app


class TestEventLoop(qasync.QEventLoop):
    """qasync's loop, still the running loop during its last pass over Qt events.

    `run_until_complete` processes Qt events once more after the loop has stopped, with
    no running loop set. A task still in flight when a test returns (a reply backfill
    reading its last page, say) is stepped there, and httpx/anyio then fail with "no
    running event loop". The console never ends like that (it drains its tasks before
    its main coroutine returns); tests do, so this pass runs as the loop it belongs to.
    """

    _finishing = False

    def run_forever(self) -> Any:
        try:
            return super().run_forever()
        finally:
            if self._finishing:
                asyncio.events._set_running_loop(self)

    def run_until_complete(self, future: Any) -> Any:
        self._finishing = True
        try:
            return super().run_until_complete(future)
        finally:
            self._finishing = False
            asyncio.events._set_running_loop(None)


def pytest_asyncio_loop_factories(config: Any, item: Any) -> Mapping[str, Callable[[], Any]]:
    return {"qasync": lambda: TestEventLoop(qapp_instance())}


async def wait_until(
    predicate: Callable[[], object], within: float = 10.0, message: str = ""
) -> None:
    """Poll `predicate` while the loop keeps running Qt and asyncio work."""
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting: {message or predicate}")
        await asyncio.sleep(0.01)


@dataclass
class UiBundle:
    app: QApplication
    theme: Theme
    reporter: ErrorReporter
    tasks: TaskRunner
    session: Session
    paths: AppPaths
    settings: QSettings
    loop: asyncio.AbstractEventLoop

    async def connect(self, sandbox: SandboxThread) -> None:
        """Activate the sandbox's demo account, as the console does on a fresh install."""
        profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
        await self.session.activate(profile, Secret("demo"), sandbox=True)


@pytest.fixture
async def ui(qapp: QApplication, qtbot: QtBot, tmp_path: Path) -> AsyncIterator[UiBundle]:
    """Theme, tasks, an error reporter without dialogs, and a session (not yet connected).

    It depends on `qtbot` so that it is torn down first: its tasks are drained on the
    qasync loop before pytest-qt closes the test's widgets outside that loop.
    """
    theme = Theme(qapp)
    reporter = ErrorReporter(show_dialogs=False)
    tasks = TaskRunner(reporter)
    paths = AppPaths.default()
    session = Session(paths, default_service_factory)
    settings = QSettings(str(tmp_path / "console.ini"), QSettings.Format.IniFormat)
    bundle = UiBundle(
        qapp, theme, reporter, tasks, session, paths, settings, asyncio.get_running_loop()
    )
    yield bundle
    await tasks.drain()
    await session.close()
    assert not reporter.errors, f"unexpected errors: {reporter.errors!r}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Stop a UI test's background tasks while its loop still runs them.

    pytest-qt processes Qt events before fixtures are torn down, outside any
    running asyncio loop; a task still in flight (a reply backfill the test did
    not wait for, say) would be stepped there and fail with "no running event
    loop". Cancelling them here, on the test's own loop, ends them properly.
    """
    try:
        return (yield)
    finally:
        bundle = getattr(item, "funcargs", {}).get("ui")
        if isinstance(bundle, UiBundle):
            loop = bundle.loop
            if not loop.is_closed() and not loop.is_running():
                loop.run_until_complete(settle(bundle))


async def settle(bundle: UiBundle) -> None:
    """End what the test started, on its own loop: its tasks, then its session, so no
    worker thread finishes a write and calls back once the loop has stopped (a
    conversation's history callback did, once in a while, under load)."""
    await bundle.tasks.drain()
    await bundle.session.close()
    await bundle.tasks.drain()


@pytest.fixture
def screenshots_dir() -> Path | None:
    """Where screenshot tests save their PNGs (`GWDESK_SCREENSHOTS`), if anywhere."""
    value = os.environ.get("GWDESK_SCREENSHOTS")
    return Path(value) if value else None
