"""What a team console says in its status bar about what happened at other desks: a team
setting changed (named by the server's name for whoever changed it, and followed: the
console sends and shows by the new rules), and replies this gwdesk could not read.

Every desk logs in as its own PostgreSQL role (`tests/team/logins.py`); the office's
receiver is a real `gwdesk listen --store` process, the sandbox the gateway."""

from __future__ import annotations

from dataclasses import replace

import psycopg

from gwdesk.app.optouts import check_rules, read_rules, save_rules
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.pg_roles import add_operator
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.team import SETTING_CHANGED
from gwdesk.ui.optouts.tab import OptOutsTab
from gwdesk.ui.plain_text import visible
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.reply_state import unreadable_text
from gwdesk.ui.status_bar import GatewayStatusBar
from gwdesk.ui.tasks import off_thread
from gwdesk.ui.widgets.notice_label import NoticeLabel
from tests.contract.listener_support import Starter
from tests.postgres_server import PostgresServer
from tests.team.logins import OfficeLogins, office_logins
from tests.ui.conftest import wait_until
from tests.ui.plain_text_support import tooltip_shows
from tests.ui.team.conftest import Console, Desks, receiver
from tests.ui.team.test_team_console import deliver

PUBLISHED = "The reply receiver published a new ReplyPath"
HOSTILE_NAME = "<b>Sam</b> \u202eevil <img src='/dev/zero'> & co"
"""A display name the server takes (it refuses control codes in one)."""


def notices(console: Console) -> NoticeLabel:
    status = console.window.status
    assert isinstance(status, GatewayStatusBar)
    return status.notice_label


def told(console: Console) -> list[str]:
    """The notices the console's status bar keeps, oldest first."""
    return [notice.text for notice in reversed(notices(console).notices)]


async def opt_outs_desk(
    desks: Desks, sandbox: SandboxThread, office: OfficeLogins, name: str
) -> Console:
    return await desks.open(
        sandbox, f"{name} desk", name, office.login(name), tabs=(RepliesTab, OptOutsTab)
    )


def opt_outs(console: Console) -> OptOutsTab:
    tab = console.window.tab(OptOutsTab)
    assert isinstance(tab, OptOutsTab)
    return tab


async def test_a_rules_change_at_one_desk_is_told_at_both_naming_who_and_both_follow_it(
    desks: Desks,
    sandbox: SandboxThread,
    receivers: Starter,
    postgres: PostgresServer,
    pg_url: str,
) -> None:
    office = office_logins(postgres, pg_url)
    alex = await opt_outs_desk(desks, sandbox, office, "Alex")
    sam = await opt_outs_desk(desks, sandbox, office, "Sam")
    receiver(receivers, office.login("Receiver"))  # it publishes its ReplyPath: a change
    for console in (alex, sam):
        await wait_until(lambda c=console: told(c) == [PUBLISHED], 30, "the ReplyPath told")
    rules = opt_outs(alex).rules
    await wait_until(lambda: rules.opt_out_edit.text().startswith("STOP"), 20, "rules shown")

    rules.opt_out_edit.setText("STOP, HALT")
    rules.marketing_box.setChecked(True)
    rules.save_button.click()

    keywords = "Alex changed the opt-out keywords: STOP, HALT"
    marketing = "Alex turned marketing on by default"
    for console in (alex, sam):
        await wait_until(
            lambda c=console: told(c) == [PUBLISHED, keywords, marketing], 30, "the rules told"
        )
        label = notices(console)
        assert label.isVisible()
        assert label.text().startswith(f"{marketing} (")
        assert label.textFormat().name == "PlainText"
        history = tooltip_shows(label.toolTip())
        assert history.index(marketing) < history.index(keywords) < history.index(PUBLISHED)
    # Sam's console follows the team's new rules: its sends, its keywords and its editor.
    session = sam.session
    await wait_until(
        lambda: session.sending is not None and session.sending.compliance.marketing_default,
        20,
        "Sam's sends marketing by default",
    )
    assert session.store is not None
    assert session.store.replies.optouts is not None
    assert session.store.replies.optouts.keywords.opt_out == ("STOP", "HALT")
    shown = opt_outs(sam).rules
    await wait_until(lambda: shown.opt_out_edit.text() == "STOP, HALT", 20, "Sam's editor")
    assert shown.marketing_box.isChecked()
    assert not shown.edited()


async def test_a_change_at_another_desk_keeps_the_rules_an_operator_is_editing(
    desks: Desks, sandbox: SandboxThread, postgres: PostgresServer, pg_url: str
) -> None:
    office = office_logins(postgres, pg_url)
    alex = await opt_outs_desk(desks, sandbox, office, "Alex")
    sam = await opt_outs_desk(desks, sandbox, office, "Sam")
    editing = opt_outs(sam).rules
    await wait_until(lambda: editing.opt_out_edit.text().startswith("STOP"), 20, "rules shown")
    editing.instruction_edit.setText("Text STOP to end")  # not saved yet
    store = alex.session.store
    assert store is not None

    # Alex's change through the app's own path, as a tab or a command makes it.
    rules = check_rules("STOP, QUIT", "START", False, "Reply STOP to opt out")
    await off_thread(lambda: save_rules(store.settings, rules))

    await wait_until(
        lambda: "Alex changed the opt-out keywords: STOP, QUIT" in told(sam), 30, "the change"
    )
    await wait_until(lambda: not editing.note.isHidden(), 20, "the editor's note")
    assert editing.note.text().startswith("The team's rules changed at another desk")
    assert editing.instruction_edit.text() == "Text STOP to end"
    assert sam.session.sending is not None
    await wait_until(
        lambda: (
            sam.session.store is not None
            and sam.session.store.replies.optouts is not None
            and sam.session.store.replies.optouts.keywords.opt_out == ("STOP", "QUIT")
        ),
        20,
        "Sam's console reads replies by the new keywords",
    )


async def test_an_operators_name_in_a_notice_is_plain_text(
    desks: Desks, sandbox: SandboxThread, postgres: PostgresServer, pg_url: str
) -> None:
    office = office_logins(postgres, pg_url)
    owner = PostgresDatabase(office.login("owner"), upgrade=False)
    try:
        add_operator(owner, office.roles["Sam"], HOSTILE_NAME)
    finally:
        owner.close()
    alex = await desks.open(sandbox, "Alex desk", "Alex", office.login("Alex"))
    sam = await desks.open(sandbox, "Sam desk", "Sam", office.login("Sam"))
    store = sam.session.store
    assert store is not None

    def marketing_by_default() -> None:
        save_rules(store.settings, replace(read_rules(store.settings), marketing_default=True))

    await off_thread(marketing_by_default)

    said = f"{visible(HOSTILE_NAME)} turned marketing on by default"
    for console in (alex, sam):
        await wait_until(lambda c=console: told(c) == [said], 30, "the change told")
        label = notices(console)
        assert label.textFormat().name == "PlainText"
        assert label.text().startswith(said)
        assert "\u202e" not in label.text()
        assert "<img" not in label.toolTip()
        assert said in tooltip_shows(label.toolTip())
    # Alex's console has no Opt-outs tab open: its sends follow the team's rules all the same.
    await wait_until(
        lambda: (
            alex.session.sending is not None and alex.session.sending.compliance.marketing_default
        ),
        20,
        "Alex's sends marketing by default",
    )

    # A control code in a name the server did not check (an older row, the owner's): shown.
    with psycopg.connect(office.url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "INSERT INTO audit(at, operator, console, action, subject, detail) "
            "VALUES (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"'), "
            "%s, '', %s, 'sending.marketing_default', 'false')",
            ("<b>Sam</b>\x1b[31m", SETTING_CHANGED),
        )
        conn.execute("SELECT pg_notify('gwdesk', 'settings')")
    escaped = "<b>Sam</b>␛[31m turned marketing off by default"
    await wait_until(lambda: told(alex)[-1:] == [escaped], 30, "the owner's row told")
    assert "\x1b" not in notices(alex).text()


def a_reply_no_console_can_read(office: OfficeLogins) -> None:
    """As the server's superuser, its check dropped: what an older or broken client might
    have left behind."""
    with psycopg.connect(office.url, autocommit=True) as conn:
        conn.execute("ALTER TABLE replies DROP CONSTRAINT replies_times_checked")
        conn.execute(
            "INSERT INTO replies(from_number, to_number, text, received_at, source, stored_at) "
            "VALUES ('61400000005', '614', 'garbled', 'not-a-time', 'webhook', 'not-a-time')"
        )


async def test_a_reply_no_desk_can_read_is_passed_over_said_and_the_next_one_shows(
    desks: Desks,
    sandbox: SandboxThread,
    receivers: Starter,
    postgres: PostgresServer,
    pg_url: str,
) -> None:
    office = office_logins(postgres, pg_url)
    template = receiver(receivers, office.login("Receiver"))
    alex = await desks.open(sandbox, "Alex desk", "Alex", office.login("Alex"))
    sam = await desks.open(sandbox, "Sam desk", "Sam", office.login("Sam"))
    await deliver(template, "before")
    for console in (alex, sam):
        await wait_until(lambda c=console: c.reply_texts() == ["before"], 30, "the first reply")

    a_reply_no_console_can_read(office)
    await deliver(template, "after")

    said = unreadable_text(1)
    assert said.startswith("1 reply could not be read (another desk's data")
    for console in (alex, sam):
        await wait_until(lambda c=console: c.reply_texts() == ["before", "after"], 30, "after")
        await wait_until(lambda c=console: said in told(c), 30, "the unreadable reply said")
        label = notices(console)
        assert label.text().startswith(said)
        assert label.property("role") == "warning"
        assert "gwdesk.log" in tooltip_shows(label.toolTip())
        assert console.session.replies.unreadable == 1

    await deliver(template, "later")  # counted once: the catch-up is past it
    for console in (alex, sam):
        await wait_until(lambda c=console: c.reply_texts()[-1:] == ["later"], 30, "later")
        assert told(console).count(said) == 1
        assert console.session.replies.unreadable == 1
