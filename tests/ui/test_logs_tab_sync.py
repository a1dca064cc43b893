"""The Logs tab's background sync: periodic, cancellable, and it says what it does."""

from __future__ import annotations

import httpx

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.logs.cache import LogCache
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.log_sync import LogSyncController
from gwdesk.ui.logs.tab import LogsTab
from tests.conftest import SandboxFactory
from tests.ui.conftest import UiBundle, wait_until


def lodge(sandbox: SandboxThread, text: str) -> None:
    response = httpx.post(
        f"{sandbox.rest_url}/v2/message/simple_send",
        json={"Message": text, "Recipient": "61412345678"},
        auth=("demo", "demo"),
    )
    assert response.status_code == 200, response.text


def held(ui: UiBundle) -> int:
    assert ui.session.store is not None
    return LogCache(ui.session.store).total()


async def test_the_sync_repeats_on_its_own_and_picks_up_new_records(
    ui: UiBundle, sandbox: SandboxThread
) -> None:
    await ui.connect(sandbox)
    lodge(sandbox, "First")
    controller = LogSyncController(ui.session, ui.tasks, interval_ms=150)
    outcomes: list[tuple[bool, str]] = []
    controller.finished.connect(lambda ok, text: outcomes.append((ok, text)))
    controller.start()
    await wait_until(lambda: held(ui) == 1, message="the first sync")
    lodge(sandbox, "Second")
    await wait_until(lambda: held(ui) == 2, message="the next periodic sync")
    await wait_until(lambda: len(outcomes) >= 2, message="both syncs reported")
    controller.stop()
    assert all(ok for ok, _text in outcomes)


async def test_a_sync_can_be_stopped_and_keeps_what_it_got(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: object
) -> None:
    sandbox = sandbox_factory(faults="logs:latency=2")
    lodge(sandbox, "Slow")
    await ui.connect(sandbox)
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    tab.show()
    await wait_until(lambda: tab.sync.running and tab.stop_button.isVisible())
    outcomes: list[tuple[bool, str]] = []
    tab.sync.finished.connect(lambda ok, text: outcomes.append((ok, text)))
    tab.stop_button.click()
    await wait_until(lambda: bool(outcomes), message="the sync to stop")
    assert outcomes == [(False, "Log sync cancelled.")]
    assert tab.error.isHidden()
    assert tab.sync_button.isEnabled()
    assert not tab.stop_button.isVisible()


async def test_sync_now_runs_one_sync_at_a_time(ui: UiBundle, sandbox: SandboxThread) -> None:
    await ui.connect(sandbox)
    lodge(sandbox, "Once")
    controller = LogSyncController(ui.session, ui.tasks)
    runs: list[bool] = []
    controller.running_changed.connect(lambda running: running and runs.append(running))
    controller.sync_now()
    controller.sync_now()
    await wait_until(lambda: bool(runs) and not controller.running)
    assert runs == [True]
    assert held(ui) == 1


async def test_without_a_profile_the_tab_says_how_to_connect(ui: UiBundle, qtbot: object) -> None:
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    tab.show()
    assert "choose a profile" in tab.empty.text()
    assert not tab.sync_button.isEnabled()
    assert tab.model is None


async def test_switching_profile_shows_the_other_accounts_logs(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: object
) -> None:
    first, second = sandbox_factory(), sandbox_factory()
    lodge(first, "Only in the first")
    for n in range(2):
        lodge(second, f"Second account {n}")
    await ui.connect(first)
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    await wait_until(lambda: tab.model is not None and tab.model.rowCount() == 1)
    tab.columns.set_shown("message_id", True)  # type: ignore[union-attr]
    profile = Profile(name="Second", rest_url=second.rest_url, username="demo")
    await ui.session.activate(profile, Secret("demo"))
    await wait_until(
        lambda: tab.model is not None and tab.model.rowCount() == 2 and not tab.sync.running
    )
    assert tab.detail.record is None
    assert tab.error.isHidden()


async def test_two_syncs_of_one_session_do_not_cancel_each_other(
    ui: UiBundle, sandbox: SandboxThread
) -> None:
    """Two Logs tabs' controllers share the console's task runner: each sync is its own
    controller's, so starting the second does not cancel the first."""
    await ui.connect(sandbox)
    lodge(sandbox, "Both")
    first = LogSyncController(ui.session, ui.tasks)
    second = LogSyncController(ui.session, ui.tasks)
    outcomes: list[tuple[str, bool, str]] = []
    first.finished.connect(lambda ok, text: outcomes.append(("first", ok, text)))
    second.finished.connect(lambda ok, text: outcomes.append(("second", ok, text)))
    first.sync_now()
    second.sync_now()
    assert first.running
    assert second.running
    await wait_until(lambda: len(outcomes) == 2, 20, "both syncs to end")
    assert all(ok for _name, ok, _text in outcomes), outcomes
    assert held(ui) == 1
