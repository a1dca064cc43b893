"""Helpers shared by the personal-message tests: a list of patients, contacts, a planned tab."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final

import httpx
from PySide6.QtWidgets import QMessageBox, QPushButton

from gwdesk.domain.contacts import ContactCard
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.contacts import Contact
from gwdesk.store.local import LocalStore
from gwdesk.ui.batch.tab import BatchTab
from tests.ui.conftest import UiBundle, wait_until

TEMPLATE: Final = "Hi {first name}, your check-up at {clinic} is due on {due|3 March}."
NAMES: Final = ("Ann", "Zoë", "Ben", "Chloé", "Nguyễn", "Søren", "Łukasz", "Mia", "Kai", "José")
UCS2_NAMES: Final = frozenset({"Zoë", "Nguyễn", "Łukasz"})
CLINICS: Final = ("Glebe", "Newtown", "Bondi")
MISSING: Final = (17, 101, 230)
"""Rows (0-based) without a clinic."""


def number(i: int) -> str:
    return f"6141200{i:04d}"


def write_sheet(path: Path, count: int = 250, first: str = "First name") -> Path:
    lines = [f"{first},Mobile,Clinic"]
    for i in range(count):
        clinic = "" if i in MISSING else CLINICS[i % 3]
        lines.append(f"{NAMES[i % 10]},0412 00{i:04d},{clinic}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def expected_texts(count: int = 250) -> dict[str, str]:
    return {
        number(i): f"Hi {NAMES[i % 10]}, your check-up at {CLINICS[i % 3]} is due on 3 March."
        for i in range(count)
        if i not in MISSING
    }


def store_of(ui: UiBundle) -> LocalStore:
    assert ui.session.store is not None
    return ui.session.store


async def add_contacts(ui: UiBundle, *cards: ContactCard) -> list[Contact]:
    """Cards into the profile's address book (off the loop's thread, as the console does)."""
    contacts = store_of(ui).contacts
    return await asyncio.to_thread(lambda: [contacts.add(card) for card in cards])


async def set_credits(sandbox: SandboxThread, credits: int) -> None:
    async with httpx.AsyncClient() as client:
        answer = await client.put(
            f"{sandbox.rest_url}/sandbox/account", json={"account": "demo", "credits": credits}
        )
        answer.raise_for_status()


async def batch_tab(ui: UiBundle, qtbot: object, sandbox: SandboxThread) -> BatchTab:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    return tab


async def planned(tab: BatchTab, within: float = 20.0) -> None:
    """The plan of what the tab shows now has landed (or why there is none)."""
    template = tab.compose.personal_template()
    assert template is not None, "the message is a template"

    def ready() -> bool:
        planner = tab.planner
        if tab.recipients.pending() or planner.busy:
            return False
        current = tab.plan_inputs(template)
        return current.same(planner.inputs) and (planner.plan or planner.failure) is not None

    await wait_until(ready, within, "the plan of what the tab shows")


async def imported(tab: BatchTab, path: Path) -> None:
    tab.recipients.import_path(path)
    await wait_until(lambda: tab.recipients.table is not None and not tab.recipients.pending())


async def confirm(tab: BatchTab, starting: str = "Send to") -> QMessageBox:
    """The question the send asks; answered with the button whose text starts `starting`."""
    await wait_until(lambda: tab.confirm_box is not None and tab.confirm_box.isVisible())
    box = tab.confirm_box
    assert box is not None
    button = next(b for b in box.buttons() if b.text().startswith(starting))
    assert isinstance(button, QPushButton)
    button.click()
    return box


async def sent(tab: BatchTab, within: float = 30.0) -> None:
    await wait_until(lambda: tab.run is not None and not tab.sending, within, "send finished")


async def idle(tab: BatchTab, ui: UiBundle) -> None:
    """Stop following, and let the tab's tasks end."""
    if ui.tasks.running("batch-follow", owner=tab):
        tab.results.follow_button.click()
    await wait_until(
        lambda: not any(ui.tasks.running(k, owner=tab) for k in ("batch-send", "batch-follow")),
        20,
        "tab idle",
    )


def messages_by_number(sandbox: SandboxThread) -> dict[str, str]:
    return dict(sandbox.query("SELECT to_number, message FROM messages"))
