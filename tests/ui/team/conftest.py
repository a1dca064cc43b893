"""Team consoles in one test: sessions of their own (each its own profile file) on one
team server, and the office's receiver as a real `gwdesk listen --store` process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.replies import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import default_service_factory
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from tests.contract.listener_support import Starter, listen_processes
from tests.team.conftest import lone_postgres  # noqa: F401 - a server to stop and start
from tests.ui.conftest import UiBundle, wait_until


@dataclass
class Console:
    """One operator's console: its session and window (Replies tab and status bar)."""

    session: Session
    window: MainWindow

    @property
    def replies(self) -> RepliesTab:
        tab = self.window.tab(RepliesTab)
        assert isinstance(tab, RepliesTab)
        return tab

    def reply_texts(self) -> list[str]:
        """The texts of the replies the Replies table holds, in its order."""
        model = self.replies.model
        if model is None:
            return []
        rows = [model.row(number) for number in range(model.total)]
        return [row.text for row in rows if row is not None]


def team_profile(sandbox: SandboxThread, name: str, operator: str, store_url: str) -> Profile:
    """A profile of the sandbox's demo account whose shared data is on `store_url`."""
    return Profile(
        name=name,
        rest_url=sandbox.rest_url,
        username="demo",
        region="AU",
        store_url=store_url,
        operator=operator,
    )


@dataclass
class Desks:
    """Opens consoles (the first on the `ui` bundle's session); closes the others."""

    ui: UiBundle
    qtbot: QtBot
    folder: Path
    opened: list[Console] = field(default_factory=list)

    async def open(
        self,
        sandbox: SandboxThread,
        name: str,
        operator: str,
        store_url: str,
        *,
        connected: bool = True,
        tabs: Sequence[type[BaseTab]] = (RepliesTab,),
    ) -> Console:
        ui = self.ui
        session = ui.session if not self.opened else Session(ui.paths, default_service_factory)
        settings = QSettings(
            str(self.folder / f"{len(self.opened)}.ini"), QSettings.Format.IniFormat
        )
        window = MainWindow.build(session, ui.tasks, ui.theme, settings, list(tabs))
        self.qtbot.addWidget(window)
        window.show()
        console = Console(session, window)
        self.opened.append(console)
        await session.activate(team_profile(sandbox, name, operator, store_url), Secret("demo"))
        if connected:
            team = session.team
            await wait_until(
                lambda: team.connected is True and team.link is not None, 20, "the team link"
            )
        return console

    async def close(self) -> None:
        """Every console's session closed (their links stop: nothing more comes in)."""
        await self.ui.tasks.drain()
        for console in self.opened:
            await console.session.close()
        # A change notice that landed while the sessions closed may have started a read
        # (the Conversations list's): ended here, on the loop, not stepped after it.
        await self.ui.tasks.drain()


@pytest.fixture
async def desks(ui: UiBundle, qtbot: QtBot, tmp_path: Path) -> AsyncIterator[Desks]:
    opened = Desks(ui, qtbot, tmp_path)
    yield opened
    await opened.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Close the consoles while the test's loop still runs: their links report changes
    from threads of their own, which would otherwise start work after the test, when
    pytest-qt processes events outside any running loop."""
    try:
        return (yield)
    finally:
        desks = getattr(item, "funcargs", {}).get("desks")
        if isinstance(desks, Desks):
            loop = desks.ui.loop
            if not loop.is_closed() and not loop.is_running():
                loop.run_until_complete(desks.close())


@pytest.fixture
def receivers() -> Iterator[Starter]:
    """Starts `gwdesk listen` processes (the office's receiver); stops them at the end."""
    with listen_processes() as start:
        yield start


def receiver(start: Starter, store_url: str) -> ReplyTemplate:
    """The office's receiver on `store_url`, started; its ReplyPath."""
    listening = start("--store", store_url, "--port", "0", "--quiet")
    return ReplyTemplate.parse(listening.line(30))
