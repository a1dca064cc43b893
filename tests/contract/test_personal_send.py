"""Personal messages through the one pipeline, against the sandbox over loopback (Qt-free).

A 250-row CSV of first names (some needing UCS-2) with three rows missing a field:
247 messages lodged, each recipient's own text read back from the gateway's log,
identical texts grouped into shared requests; a contact group as the recipients,
with an opted-out member left out; the cost weighed against the account's credits.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gwdesk.app.personal import group_recipients, table_recipients
from gwdesk.app.profile_data import ProfileData, open_profile, sending_for
from gwdesk.app.sending import Sending
from gwdesk.app.sms import SmsForm
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.templates import parse_template
from gwdesk.importing.recipients import load_table
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from tests.contract.rest_support import endpoint_requests, service_for

TEMPLATE = "Hi {first name}, your check-up at {clinic} is due on {due|3 March}."
NAMES = ("Ann", "Zoë", "Ben", "Chloé", "Nguyễn", "Søren", "Łukasz", "Mia", "Kai", "José")
UCS2_NAMES = frozenset({"Zoë", "Nguyễn", "Łukasz"})
CLINICS = ("Glebe", "Newtown", "Bondi")
MISSING = (17, 101, 230)
"""Rows (0-based) without a clinic."""


def number(i: int) -> str:
    return f"6141200{i:04d}"


def write_sheet(path: Path, count: int = 250) -> Path:
    lines = ["First name,Mobile,Clinic"]
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


@pytest.fixture
async def setup(
    sandbox: SandboxThread, tmp_path: Path
) -> AsyncIterator[tuple[Sending, LocalStore]]:
    service = service_for(sandbox)
    data = ProfileData(tmp_path / "p.sqlite3", "demo@sandbox", "AU")
    store = open_profile(data)
    try:
        yield sending_for(service, store, data), store
    finally:
        await service.aclose()
        store.close()


async def logged(sandbox: SandboxThread, count: int, within: float = 20.0) -> list[dict[str, Any]]:
    """The gateway's log once it holds `count` records (a batch's messages are made in the
    background after the request was answered)."""
    deadline = time.monotonic() + within
    async with httpx.AsyncClient(auth=("demo", "demo")) as client:
        while True:
            answer = await client.get(f"{sandbox.rest_url}/v2/message/logs", params={"page": 1})
            page = answer.json()
            if page["totalRecords"] >= count or time.monotonic() > deadline:
                return list(page["messages"])
            await asyncio.sleep(0.05)


async def test_a_250_row_csv_lodges_247_messages_each_with_its_own_text(
    setup: tuple[Sending, LocalStore], sandbox: SandboxThread, tmp_path: Path
) -> None:
    sending, _store = setup
    template = parse_template(TEMPLATE)
    table = load_table(write_sheet(tmp_path / "patients.csv"), "AU")
    recipients = table_recipients(table, table.column, "AU", template)
    plan = await sending.plan_personal(SmsForm(), template, recipients)

    assert plan.recipients == 247
    assert [(row.row, row.reason) for row in plan.invalid] == [
        (i + 2, "no value for {clinic}") for i in MISSING
    ]
    named = {m.recipient.values["first name"] for m in plan.turned_ucs2()}
    assert named == UCS2_NAMES

    outcome = await sending.send_personal(plan)
    assert outcome.ok
    assert outcome.lodged_recipients == 247

    wanted = expected_texts()
    per_text = Counter(wanted.values())
    # 10 names by 3 clinics: 30 texts, each shared by 8 or 9 recipients in one request.
    assert len(per_text) == 30
    assert max(per_text.values()) <= 100
    assert len(outcome.sent) == endpoint_requests(sandbox, "send") == 30
    assert sorted(s.entry.recipient_count for s in outcome.sent) == sorted(per_text.values())

    records = await logged(sandbox, 247)
    assert {r["to"]: r["message"] for r in records} == wanted
    assert {r["to"]: r["parts"] for r in records} == {
        m.recipient.number: m.parts for m in plan.messages
    }


async def test_a_contact_group_is_sent_its_members_own_texts_leaving_out_who_opted_out(
    setup: tuple[Sending, LocalStore], sandbox: SandboxThread
) -> None:
    sending, store = setup
    people = [("Ann", "61412000001", "Glebe"), ("Zoë", "61412000002", "Bondi")]
    people.append(("Ben", "61412000003", "Glebe"))
    for name, phone, clinic in people:
        store.contacts.add(ContactCard(name, (phone,), (("Clinic", clinic),), groups=("Patients",)))
    store.contacts.add(ContactCard("Staff", ("61412000009",), groups=("Staff",)))
    store.optouts.set("61412000003", True, reason="asked by phone")
    template = parse_template("Dear {name}, {clinic} clinic is open late this week.")

    recipients = await asyncio.to_thread(group_recipients, store.contacts, "patients", template)
    plan = await sending.plan_personal(SmsForm(), template, recipients)
    assert [o.number for o in plan.excluded] == ["61412000003"]
    outcome = await sending.send_personal(plan)

    assert outcome.ok
    assert outcome.excluded == ("61412000003",)
    records = await logged(sandbox, 2)
    assert sorted((r["to"], r["message"]) for r in records) == [
        ("61412000001", "Dear Ann, Glebe clinic is open late this week."),
        ("61412000002", "Dear Zoë, Bondi clinic is open late this week."),
    ]


async def test_the_cost_weighs_the_parts_against_the_accounts_credits(
    setup: tuple[Sending, LocalStore], sandbox: SandboxThread, tmp_path: Path
) -> None:
    sending, _store = setup
    async with httpx.AsyncClient() as client:
        answer = await client.put(
            f"{sandbox.rest_url}/sandbox/account", json={"account": "demo", "credits": 100}
        )
        answer.raise_for_status()
    template = parse_template(TEMPLATE)
    table = load_table(write_sheet(tmp_path / "patients.csv"), "AU")
    plan = await sending.plan_personal(
        SmsForm(), template, table_recipients(table, table.column, "AU", template)
    )
    cost = await sending.cost(plan)
    assert (cost.parts, cost.credits, cost.balance, cost.covered) == (247, 247, 100, False)
