"""Two consoles of one team on a real PostgreSQL server, with the office's receiver
(`gwdesk listen --store`) as a real process and the sandbox as the gateway."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
from pytestqt.qtbot import QtBot

from gwdesk.app.team import Member, TeamLink, conversation_subject
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.paths import AppPaths
from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.replies import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.team import Presence
from gwdesk.ui.controller import AppController
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.plain_text import visible
from gwdesk.ui.replies.conversation import ROUTE_TEAM
from gwdesk.ui.reply_hub import NO_TEAM_ROUTE
from tests.contract.listener_support import Starter
from tests.postgres_server import PostgresServer, free_port
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.replies_support import CUSTOMER, post_reply
from tests.ui.send_support import messages
from tests.ui.team.conftest import Console, Desks, receiver, team_profile

HOSTILE_REPLY = "<b>Is it</b> still on?\x1b[31m \u202eevil <img src='/dev/zero'>"


async def deliver(template: ReplyTemplate, text: str, within: float = 30) -> int:
    """Post a reply as the gateway does: again after each 503, until it is taken; how
    many 503s there were."""
    refusals = 0
    deadline = asyncio.get_running_loop().time() + within
    while True:
        answer: httpx.Response = await post_reply(template, text=text)
        if answer.status_code != 503:
            assert answer.text == "OK", answer.text
            return refusals
        refusals += 1
        assert asyncio.get_running_loop().time() < deadline, "still refused"
        await asyncio.sleep(0.5)


async def open_conversation(console: Console, number: str = CUSTOMER) -> None:
    pane = console.replies.conversation
    pane.open(number)
    await wait_until(lambda: pane.number == number)


async def test_a_reply_stored_by_the_offices_receiver_shows_in_both_consoles(
    desks: Desks, sandbox: SandboxThread, receivers: Starter, pg_url: str
) -> None:
    template = receiver(receivers, pg_url)
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    sam = await desks.open(sandbox, "Sam desk", "Sam", pg_url)

    answer = await post_reply(template, text=HOSTILE_REPLY)

    assert answer.text == "OK"
    for console in (alex, sam):
        await wait_until(lambda c=console: c.reply_texts() == [HOSTILE_REPLY], 20)
        assert console.session.replies.latest_id > 0


async def test_a_team_consoles_own_listener_does_not_start_by_itself(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)

    await alex.session.replies.autostart()

    assert not alex.session.replies.listening
    assert alex.window.status.listener.label.text() == "Replies: office receiver"


async def test_a_stopped_server_is_said_in_both_status_bars_and_nothing_is_lost_after_it(
    desks: Desks, sandbox: SandboxThread, receivers: Starter, lone_postgres: PostgresServer
) -> None:
    url = lone_postgres.create_database("office")
    template = receiver(receivers, url)
    alex = await desks.open(sandbox, "Alex desk", "Alex", url)
    sam = await desks.open(sandbox, "Sam desk", "Sam", url)
    assert (await post_reply(template, text="before")).text == "OK"
    for console in (alex, sam):
        await wait_until(lambda c=console: c.reply_texts() == ["before"], 20)

    lone_postgres.stop()
    for console in (alex, sam):
        label = console.window.status.team_label
        await wait_until(lambda lb=label: lb.text().startswith("Team store disconnected"), 30)
        assert label.text().endswith(" · sends refused, drafts kept")
        assert label.property("role") == "warning"
    refused = await post_reply(template, text="while away")
    assert refused.status_code == 503  # the gateway keeps it and retries

    lone_postgres.start()
    await deliver(template, "while away")  # the gateway's retry
    for console in (alex, sam):
        await wait_until(lambda c=console: c.reply_texts() == ["before", "while away"], 30)
        label = console.window.status.team_label
        await wait_until(lambda lb=label: lb.text().startswith("Team store 127.0.0.1 · "), 30)
        assert label.property("role") == ""


async def test_a_console_alone_on_the_server_counts_itself(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    label = alex.window.status.team_label
    await wait_until(lambda: label.text() == "Team store 127.0.0.1 · 1 console", 20)


async def test_the_status_bar_counts_the_consoles_and_names_their_operators_as_plain_text(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    hostile = "Kim\x1b[31m \u202e<img src='/dev/zero'> & co"
    server = PostgresDatabase(pg_url, upgrade=False)
    try:
        Presence(server).arrive("third-desk", hostile, "desk\x1b[31m-3", "0.1")
        label = alex.window.status.team_label
        await wait_until(lambda: label.text() == "Team store 127.0.0.1 · 2 consoles", 20)
    finally:
        server.close()

    tip = label.toolTip()
    assert "Alex (" in tip
    # The server keeps no control character in a name; the console shows the host's.
    assert "Kim[31m \ufffd&lt;img src=&#x27;/dev/zero&#x27;&gt; &amp; co (desk␛[31m-3)" in tip
    assert "<img" not in tip


async def test_a_typing_note_shows_on_the_other_console_and_goes_when_released(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    hostile = "Sam <b>Lee</b>\u202e\x07"
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    sam = await desks.open(sandbox, "Sam desk", hostile, pg_url)
    await open_conversation(alex)
    await open_conversation(sam)
    seen = alex.replies.conversation.typing_label

    sam.replies.conversation.editor.set_text("We can do 11, ")

    await wait_until(seen.isVisible, 20)
    assert seen.text() == "Sam <b>Lee</b> is typing a reply…"
    assert seen.textFormat().name == "PlainText"
    sam.replies.conversation.editor.clear()
    await wait_until(lambda: not seen.isVisible(), 20)
    assert seen.text() == ""


async def test_a_typing_note_of_a_console_that_stopped_renewing_it_lapses(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    await open_conversation(alex)
    seen = alex.replies.conversation.typing_label
    server = PostgresDatabase(pg_url, upgrade=False)
    lee = TeamLink(server, Member("Lee"), on_change=lambda _t: None, connect=server.connect)
    try:
        lee.typing(conversation_subject(CUSTOMER), seconds=1.0)  # and never again
        await wait_until(lambda: seen.text() == "Lee is typing a reply…", 20)
        await wait_until(lambda: seen.text() == "", 20)
    finally:
        server.close()


async def test_two_typists_are_named_together(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    sam = await desks.open(sandbox, "Sam desk", "Sam", pg_url)
    lee = await desks.open(sandbox, "Lee desk", "Lee", pg_url)
    for console in (alex, sam, lee):
        await open_conversation(console)

    sam.replies.conversation.editor.set_text("On it")
    lee.replies.conversation.editor.set_text("I'll take it")

    seen = alex.replies.conversation.typing_label
    await wait_until(
        lambda: seen.text() in ("Sam and Lee are typing…", "Lee and Sam are typing…"), 20
    )


async def test_each_sent_message_names_its_operator_as_plain_text(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    hostile = "Sam <i>the</i> \u202eboss"
    server = PostgresDatabase(pg_url, upgrade=False)
    try:
        with server.session() as session:  # a send from another desk, as its history row
            session.execute(
                "INSERT INTO history(at, channel, recipients, text, ok, status, operator) "
                "VALUES (?, 'SMS (REST)', ?, 'See you at 11.', 1, 'DELIVERED', ?)",
                (datetime.now(UTC).isoformat(), CUSTOMER, hostile),
            )
    finally:
        server.close()

    await open_conversation(alex)
    pane = alex.replies.conversation
    await wait_until(lambda: len(pane.entries) == 1, 20)
    shown = pane.transcript.toPlainText()
    assert "See you at 11." in shown
    assert f"DELIVERED · {visible(hostile)}" in shown


async def test_a_send_from_another_desk_appears_in_an_open_conversation(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    await open_conversation(alex)
    pane = alex.replies.conversation
    server = PostgresDatabase(pg_url, upgrade=False)
    try:
        with server.session() as session:
            session.execute(
                "INSERT INTO history(at, channel, recipients, text, ok, status, operator) "
                "VALUES (?, 'SMS (REST)', ?, 'Booked for 11.', 1, 'DELIVERED', 'Sam')",
                (datetime.now(UTC).isoformat(), CUSTOMER),
            )
    finally:
        server.close()

    await wait_until(lambda: [e.text for e in pane.entries] == ["Booked for 11."], 20)


async def test_a_team_reply_without_a_published_replypath_is_refused_and_keeps_its_text(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    await open_conversation(alex)
    pane = alex.replies.conversation
    assert pane.route_box.text() == ROUTE_TEAM
    assert pane.route_box.isChecked()

    pane.editor.set_text("Yes, 11 works.")
    pane.send()

    assert pane.result_label.text() == f"Not sent: {NO_TEAM_ROUTE} Your text is kept."
    assert "gwdesk listen --store" in pane.result_label.text()
    assert pane.editor.text() == "Yes, 11 works."
    assert messages(sandbox) == []


async def test_a_team_reply_is_sent_two_way_to_the_receivers_replypath(
    desks: Desks, sandbox: SandboxThread, receivers: Starter, pg_url: str
) -> None:
    template = receiver(receivers, pg_url)
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    hub = alex.session.replies
    await wait_until(lambda: hub.template == template, 20)
    await open_conversation(alex)
    pane = alex.replies.conversation

    pane.editor.set_text("Yes, 11 works.")
    pane.send()
    await wait_until(lambda: not pane.sending(), 30)

    assert pane.result_label.text() == "Sent to +61 412 345 678."
    [sent] = messages(sandbox)
    assert sent["reply_path"] == template.render()


async def test_a_team_server_that_cannot_be_reached_is_said_and_nothing_stays_open(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [])
    qtbot.addWidget(window)
    controller = AppController(
        window,
        ui.session,
        ui.tasks,
        ProfileStore(),
        PasswordVault(),
        AppPaths.default(),
        ui.reporter,
    )
    url = f"postgresql://gwdesk_console@127.0.0.1:{free_port()}/office"
    profile: Profile = team_profile(sandbox, "Office", "Alex", url)

    opened = await controller.activate(profile, Secret("demo"), Secret("pw-Sw0rdfish"))

    assert not opened
    assert ui.session.store is None
    assert ui.session.service is None
    said = window.status.currentMessage()
    assert said.startswith("The profile 'Office' is not open: ")
    assert "127.0.0.1" in said
    assert "pw-Sw0rdfish" not in said
