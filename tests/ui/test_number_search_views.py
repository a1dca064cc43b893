"""One number search in every view (issue 21): "0412 555", "61412555" and "+61 412 555"
typed into the search boxes of Logs, Contacts, Opt-outs and Replies show the same
records, those whose number starts +61 412 555, and none of the others.

Each view is seeded with numbers that match and numbers that hold the same digits
elsewhere (a piece in the middle, another area), through its real path: messages lodged
at the sandbox and synced, contacts and opt-outs in the profile's file, replies stored
as the listener stores them.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from pytestqt.qtbot import QtBot

from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.replies import IncomingReply
from gwdesk.ui.contacts.tab import ContactsTab
from gwdesk.ui.logs.tab import LogsTab
from gwdesk.ui.optouts.tab import OptOutsTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.personal_support import add_contacts, store_of
from tests.ui.replies_support import replies_tab

FORMS = ("0412 555", "61412555", "+61 412 555")
"""National, international and international with `+`, each spaced as people type."""
MATCHING = ("61412555001", "61412555002")
OTHERS = ("61412655000", "61499412555", "61298412555")
"""Numbers holding the same digits, but not at the start of the international form."""
ALL = (*MATCHING, *OTHERS)


def lodge(sandbox: SandboxThread, recipient: str) -> None:
    response = httpx.post(
        f"{sandbox.rest_url}/v2/message/simple_send",
        json={"Message": "Your order is ready for pickup", "Recipient": recipient},
        auth=("demo", "demo"),
    )
    assert response.status_code == 200, response.text


async def test_every_form_finds_the_same_log_records_in_the_text_and_recipient_boxes(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    for number in ALL:
        lodge(sandbox, number)
    await ui.connect(sandbox)
    tab = LogsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)

    def shown() -> set[str] | None:
        model = tab.model
        if model is None or model.pending or tab.sync.running:
            return None
        ids = [model.message_id_at(row) for row in range(model.rowCount())]
        logs = tab.logs
        return {(logs.record(i) or {}).get("to_number") for i in ids if i} if logs else None

    await wait_until(lambda: shown() == set(ALL), 20, "every record synced")
    for box in (tab.filters.text, tab.filters.recipient):
        for typed in FORMS:
            box.setText(typed)
            tab.filters.flush()
            await wait_until(
                lambda: shown() == set(MATCHING), 10, f"{typed!r} in {box.accessibleName()!r}"
            )
        box.clear()
        tab.filters.flush()
        await wait_until(lambda: shown() == set(ALL), 10, "the filter cleared")


async def test_every_form_finds_the_same_contacts(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    await add_contacts(ui, *(ContactCard(f"Customer {n}", (n,)) for n in ALL))
    tab = ContactsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)

    def shown() -> set[str]:
        return {number for contact in tab.model.rows for number in contact.numbers}

    tab.refresh()
    await wait_until(lambda: shown() == set(ALL), 10, "every contact listed")
    for typed in FORMS:
        tab.search.setText(typed)
        await wait_until(lambda: shown() == set(MATCHING), 10, f"{typed!r} searched")
        tab.search.clear()
        await wait_until(lambda: shown() == set(ALL), 10, "the search cleared")


async def test_every_form_finds_the_same_opt_outs(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    optouts = store_of(ui).optouts
    for number in ALL:
        optouts.set(number, True, reason="asked on the phone")
    tab = OptOutsTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)

    def shown() -> set[str]:
        return {optout.number for optout in tab.model.rows}

    await wait_until(lambda: shown() == set(ALL), 10, "every opt-out listed")
    for typed in FORMS:
        tab.search.setText(typed)
        await wait_until(lambda: shown() == set(MATCHING), 10, f"{typed!r} searched")
        tab.search.clear()
        await wait_until(lambda: shown() == set(ALL), 10, "the search cleared")


@pytest.mark.parametrize("stored", ["international", "national"])
async def test_every_form_finds_the_same_replies(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, stored: str
) -> None:
    """A reply's sender as the gateway wrote it: international digits, or (some gateways)
    the national form; either is found by every form typed."""
    tab = await replies_tab(ui, qtbot, sandbox, listen=False)
    written = {n: n if stored == "international" else "0" + n[2:] for n in ALL}
    now = datetime.now(UTC)
    store_of(ui).replies.add(
        [IncomingReply(sender, "61400000000", "Thanks", now) for sender in written.values()]
    )
    assert tab.model is not None
    tab.model.refresh()

    def shown() -> set[str] | None:
        model = tab.model
        if model is None or model.pending:
            return None
        rows = (model.row(n) for n in range(model.total))
        return {row.from_number for row in rows if row is not None}

    await wait_until(lambda: shown() == set(written.values()), 10, "every reply listed")
    for typed in FORMS:
        tab.search_edit.setText(typed)
        tab.apply_search()
        await wait_until(
            lambda: shown() == {written[n] for n in MATCHING}, 10, f"{typed!r} searched"
        )


async def test_a_national_number_is_read_in_the_profiles_region_in_the_replies_search(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    """A British profile: "020 7946" is London's 44 20 7946, not Sydney's 61 20 7946."""
    tab = await replies_tab(ui, qtbot, sandbox, listen=False)
    british = Profile(name="London", rest_url=sandbox.rest_url, username="demo", region="GB")
    await ui.session.activate(british, Secret("demo"))
    await wait_until(lambda: tab.model is not None and tab.model.region == "GB")
    now = datetime.now(UTC)
    store_of(ui).replies.add(
        [
            IncomingReply("442079460958", "61400000000", "London", now),
            IncomingReply("61207946000", "61400000000", "Sydney", now),
        ]
    )
    tab.search_edit.setText("020 7946")
    tab.apply_search()

    def texts() -> list[str] | None:
        model = tab.model
        if model is None or model.pending or not model.search.active:
            return None
        return [row.text for n in range(model.total) if (row := model.row(n)) is not None]

    await wait_until(lambda: texts() == ["London"], 10, "the British number found")
