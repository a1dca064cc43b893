"""The console's reply listener: start/stop and address in the status bar, ports, backfill."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from gwdesk.app.profile_data import SANDBOX_STORE
from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.replies import ReplyStore
from gwdesk.ui.controller import AppController
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.replies.listener_settings import ALL_INTERFACES, ListenerSettingsDialog
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.reply_state import ListenerSettings, ListenerState
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.status_bar import GatewayStatusBar
from gwdesk.ui.widgets.reply_options import ReplyMode
from tests.conftest import SandboxFactory
from tests.sandbox.webhook_receiver import lodge, make_reply, wait_for_attempts
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.replies_support import post_reply, replies_tab, start_listener


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        yield int(squatter.getsockname()[1])


def refused(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
    except httpx.ConnectError:
        return True
    return False


def status_bar(ui: UiBundle, qtbot: QtBot) -> GatewayStatusBar:
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    return bar


@pytest.fixture
def quiet_gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    """A gateway that gives up on a webhook for a minute: a missed reply stays missed."""
    return sandbox_factory(webhook_retry_base=60)


async def test_the_status_bar_shows_where_the_listener_listens_and_starts_and_stops_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    bar = status_bar(ui, qtbot)
    widget = bar.listener
    assert widget.label.text() == "Replies: stopped"
    port = free_port()

    await ui.session.replies.start(port)
    assert widget.label.text() == f"Replies: 127.0.0.1:{port}"
    assert widget.label.property("role") == "ok"
    assert widget.copy_button.isEnabled()

    widget.toggle_button.click()
    await wait_until(lambda: ui.session.replies.status.state is ListenerState.STOPPED)
    assert widget.label.text() == "Replies: stopped"
    assert not widget.copy_button.isEnabled()
    assert refused(port)

    widget.toggle_button.click()  # started again on the port it remembers
    await wait_until(lambda: ui.session.replies.listening)
    assert widget.label.text() == f"Replies: 127.0.0.1:{port}"


async def test_copy_reply_path_puts_the_template_on_the_clipboard(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    bar = status_bar(ui, qtbot)
    template = await start_listener(ui)
    shown: list[str] = []
    bar.messageChanged.connect(shown.append)

    bar.listener.copy_button.click()

    assert QGuiApplication.clipboard().text() == template.render()
    assert "#FROM#" in QGuiApplication.clipboard().text()
    assert any("ReplyPath copied" in text for text in shown)


async def test_a_taken_port_is_reported_with_a_free_one_offered_and_one_click_uses_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, taken_port: int
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox, listen=False)
    bar = status_bar(ui, qtbot)

    status = await ui.session.replies.start(taken_port)

    assert status.state is ListenerState.ERROR
    assert status.suggestion is not None
    assert f"Port {taken_port} on 127.0.0.1 is already in use" in status.message
    offer = bar.listener.offer_button
    assert offer.isVisibleTo(bar)
    assert offer.text() == f"Use port {status.suggestion}"
    assert bar.listener.label.text() == "Replies: not listening"
    assert tab.listener_label.text() == status.message
    assert tab.offer_button.isVisibleTo(tab)

    offer.click()
    await wait_until(lambda: ui.session.replies.listening)
    template = ui.session.replies.template
    assert template is not None
    assert template.port == status.suggestion
    assert not offer.isVisibleTo(bar)
    assert (await post_reply(template, text="on the new port")).text == "OK"


async def test_use_this_consoles_listener_fills_the_reply_path(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    send = SendTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(send)
    button = send.form.replies.listener_button
    assert not button.isEnabled()
    assert "not running" in button.toolTip()

    template = await start_listener(ui)
    assert button.isEnabled()
    button.click()

    replies = send.form.replies
    assert replies.mode() is ReplyMode.TWO_WAY
    assert replies.reply() == ("HTTP", template.render())

    await ui.session.replies.stop()
    assert not button.isEnabled()


async def test_a_console_start_listens_again_and_fetches_the_replies_missed_while_down(
    ui: UiBundle, quiet_gateway: SandboxThread, qtbot: QtBot
) -> None:
    port = free_port()
    store = ReplyStore(ui.paths.profile_db(SANDBOX_STORE))
    store.remember_port(port)  # where this profile listened last time
    store.close()
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [RepliesTab])
    qtbot.addWidget(window)
    controller = AppController(
        window, ui.session, ui.tasks, ProfileStore(), PasswordVault(), ui.paths, ui.reporter
    )
    tab = window.tab(RepliesTab)
    assert isinstance(tab, RepliesTab)

    await ui.connect(quiet_gateway)  # the controller starts the listener on connect
    await wait_until(
        lambda: ui.session.replies.listening and not ui.tasks.running("reply-listener-start")
    )
    template = ui.session.replies.template
    assert template is not None
    assert template.port == port
    message_id = lodge(quiet_gateway, "HTTP", template.render())
    heard = make_reply(quiet_gateway, message_id=message_id, text="Heard live")
    assert wait_for_attempts(quiet_gateway, heard["ReplyId"], 1)[0]["Ok"]
    await wait_until(lambda: tab.model is not None and tab.model.total == 1)

    await ui.session.close()  # the console is closed
    assert refused(port)
    for text in ("Missed one", "Missed two"):
        missed = make_reply(quiet_gateway, message_id=message_id, text=text)
        assert not wait_for_attempts(quiet_gateway, missed["ReplyId"], 1)[0]["Ok"]

    await ui.connect(quiet_gateway)  # and started again
    await wait_until(lambda: not ui.tasks.running("reply-listener-start"), 20)
    assert ui.session.replies.listening
    await wait_until(
        lambda: tab.model is not None and tab.model.total == 3 and not tab.model.pending
    )
    rows = [tab.model.row(n) for n in range(3)]
    assert [r.text for r in rows if r is not None] == ["Heard live", "Missed one", "Missed two"]
    assert tab.result_label.text().startswith("Fetched 2 missed replies")
    await controller.shutdown()
    assert refused(port)


async def test_fetch_missed_replies_adds_nothing_twice(
    ui: UiBundle, quiet_gateway: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, quiet_gateway)
    template = ui.session.replies.template
    assert template is not None
    message_id = lodge(quiet_gateway, "HTTP", template.render())
    heard = make_reply(quiet_gateway, message_id=message_id, text="Heard live")
    assert wait_for_attempts(quiet_gateway, heard["ReplyId"], 1)[0]["Ok"]
    await wait_until(lambda: tab.model.total == 1)

    tab.backfill_button.click()
    await wait_until(
        lambda: tab.backfill_button.isEnabled() and "replies" in tab.result_label.text()
    )
    tab.backfill_button.click()
    await wait_until(lambda: tab.backfill_button.isEnabled() and not ui.session.replies.backfilling)

    assert tab.model.total == 1
    assert tab.result_label.text().startswith("No missed replies")
    assert tab.result_label.property("role") == "ok"


async def test_a_backfill_the_gateway_refuses_says_so_and_keeps_the_view(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    gateway = sandbox_factory(faults="replies:500=1")
    tab = await replies_tab(ui, qtbot, gateway)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Kept")
    await wait_until(lambda: tab.model.total == 1)

    tab.fetch_missed()
    await wait_until(
        lambda: not ui.session.replies.backfilling and tab.backfill_button.isEnabled(), 30
    )

    assert tab.result_label.text().startswith("Missed replies could not be fetched: ")
    assert tab.result_label.property("role") == "error"
    assert tab.model.total == 1


async def test_a_profile_switch_stops_the_listener_and_frees_its_port(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    port = free_port()
    await ui.session.replies.start(port)
    assert not refused(port)

    await ui.connect(sandbox)  # the same account again: a new session

    assert refused(port)
    assert ui.session.replies.status.state is ListenerState.STOPPED
    assert ui.session.replies.inbox is None


async def test_a_stopped_listener_stays_stopped_when_the_profile_is_connected_again(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    await ui.session.replies.start(free_port())
    await ui.session.replies.stop()  # the operator's choice

    await ui.connect(sandbox)
    await ui.session.replies.autostart()

    assert ui.session.replies.status.state is ListenerState.STOPPED


async def test_new_listener_settings_restart_it_where_asked(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    await ui.session.replies.start(free_port())
    port = free_port()

    await ui.session.replies.configure(
        ListenerSettings(port=port, public_host="replies.example.com")
    )

    assert ui.session.replies.listening
    template = ui.session.replies.template
    assert template is not None
    assert (template.host, template.port) == ("replies.example.com", port)
    assert not refused(port)


def test_choosing_another_interface_shows_a_warning_before_saving(qtbot: QtBot) -> None:
    dialog = ListenerSettingsDialog(ListenerSettings())
    qtbot.addWidget(dialog)
    assert dialog.warning.isHidden()

    dialog.host_combo.setCurrentIndex(dialog.host_combo.findData(ALL_INTERFACES))

    assert not dialog.warning.isHidden()
    assert "Other machines will be able to reach the listener" in dialog.warning.text()
    assert dialog.settings().host == ALL_INTERFACES


def test_a_listener_address_that_is_not_one_is_refused_at_the_field(qtbot: QtBot) -> None:
    dialog = ListenerSettingsDialog(ListenerSettings())
    qtbot.addWidget(dialog)
    dialog.host_combo.setEditText("http://evil/x")
    dialog.accept()
    assert dialog.result() != ListenerSettingsDialog.DialogCode.Accepted
    assert dialog.error.text() == "Type an address of this machine, e.g. 127.0.0.1."


@pytest.mark.parametrize(
    ("host", "public"),
    [("127.0.\t0.1", ""), ("\u202e1.0.0.721", ""), ("a" * 254, ""), ("127.0.0.1", "proxy\nhost")],
    ids=["tab", "bidi override", "too long", "newline in the ReplyPath address"],
)
def test_an_address_hiding_characters_is_refused_not_kept(
    qtbot: QtBot, host: str, public: str
) -> None:
    dialog = ListenerSettingsDialog(ListenerSettings())
    qtbot.addWidget(dialog)
    dialog.host_combo.setEditText(host)
    dialog.public_edit.setText(public)
    dialog.accept()
    assert dialog.result() != ListenerSettingsDialog.DialogCode.Accepted
    assert dialog.error.isVisibleTo(dialog)
    assert dialog.error.text()


async def test_a_start_cancelled_by_a_closing_session_leaves_nothing_running(
    ui: UiBundle, sandbox: SandboxThread, caplog: pytest.LogCaptureFixture
) -> None:
    loop = asyncio.get_running_loop()
    starts = ThreadPoolExecutor(4, thread_name_prefix="starts")  # where a start works
    loop.set_default_executor(starts)
    ports = []
    for delay in (0, 0.001, 0.002, 0.004, 0.006, 0.008, 0.012, 0.02):  # every stage of a start
        await ui.connect(sandbox)
        port = free_port()
        ports.append(port)
        starting = asyncio.ensure_future(ui.session.replies.start(port))
        await asyncio.sleep(delay)
        starting.cancel()
        await ui.session.close()  # the store closes right after
        assert ui.session.replies.inbox is None

    # Every start and every undo handed over has finished once the executor shuts down;
    # one handed over after that fails (and is logged) instead of running unseen.
    starts.shutdown(wait=True)
    landed = loop.create_future()
    loop.call_soon_threadsafe(landed.set_result, None)  # behind the finished work's callbacks
    await landed
    loop.set_default_executor(ThreadPoolExecutor(2))  # for the fixtures' teardown
    gc.collect()  # an unretrieved failure is logged now
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert all(refused(port) for port in ports)
