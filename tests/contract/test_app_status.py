"""The status use cases against a real sandbox: a lookup by each key, and following a list."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.sending import Sending
from gwdesk.app.sms import SmsForm, check_message
from gwdesk.app.status import (
    FOLLOW_GIVE_UP,
    LODGE,
    MAX_KEY,
    REST,
    Key,
    Progress,
    StatusRow,
    check_key,
    follow,
    look_up,
    summarise,
)
from gwdesk.gateway.errors import GatewayError, NotFoundError, ValidationError
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState, OutboxEntry, OutboxStore
from tests.contract.rest_support import endpoint_requests, service_for, set_faults

NUMBERS = [f"614{i:08d}" for i in range(10_000, 10_250)]
QUICK = 0.01
"""Seconds between following's rounds: the tests wait for answers, not for a clock."""


def lodge_rest(
    sandbox: SandboxThread, recipients: list[str], external_id: str
) -> dict[str, object]:
    """A send made by another client (the one under test only looks it up)."""
    response = httpx.post(
        f"{sandbox.rest_url}/v2/message/send",
        json={"Message": "Hello", "Recipients": recipients, "ExternalSystemId": external_id},
        auth=("demo", "demo"),
    )
    response.raise_for_status()
    data: dict[str, object] = response.json()["Data"]
    return data


async def until_rows(service: GatewayService, key: Key, value: str, count: int) -> list[StatusRow]:
    """The lookup once the gateway has created `count` messages (it does so in the background)."""
    for _ in range(200):
        rows = await look_up(service, key, value)
        if len(rows) >= count:
            return rows
        await asyncio.sleep(0.02)
    raise AssertionError(f"the lookup never found {count} messages")


@pytest.fixture
async def service(sandbox: SandboxThread) -> AsyncIterator[GatewayService]:
    async with service_for(sandbox, soap_namespace=sandbox.config.namespace) as service:
        yield service


# ---- look_up ---------------------------------------------------------------------------------


async def test_a_message_id_lookup_finds_the_message(
    sandbox: SandboxThread, service: GatewayService
) -> None:
    message = lodge_rest(sandbox, ["61412345678"], "ext-one")["Message"]
    assert isinstance(message, dict)
    [row] = await look_up(service, Key.MESSAGE_ID, f"  {message['MessageId']} ")
    assert (row.phone_number, row.message_id, row.status, row.source) == (
        "61412345678",
        message["MessageId"],
        "ACTIVE",
        REST,
    )
    assert row.external_system_id == "ext-one"


async def test_a_batch_code_lookup_finds_every_message_of_the_batch(
    sandbox: SandboxThread, service: GatewayService
) -> None:
    numbers = ["61412345678", "61412345679", "61412345670"]
    code = str(lodge_rest(sandbox, numbers, "ext-batch")["BatchCode"])
    rows = await until_rows(service, Key.BATCH_CODE, code, 3)
    assert sorted(r.phone_number for r in rows) == sorted(numbers)
    assert {r.external_system_id for r in rows} == {"ext-batch"}


async def test_an_external_id_lookup_finds_each_send_that_carried_it(
    sandbox: SandboxThread, service: GatewayService
) -> None:
    lodge_rest(sandbox, ["61412345678"], "ext-shared")
    lodge_rest(sandbox, ["61412345679"], "ext-shared")
    lodge_rest(sandbox, ["61412345670"], "ext-other")
    rows = await until_rows(service, Key.EXTERNAL_SYSTEM_ID, "ext-shared", 2)
    assert sorted(r.phone_number for r in rows) == ["61412345678", "61412345679"]


async def test_a_lodge_msg_id_lookup_asks_lodge_and_keeps_its_times(
    service: GatewayService,
) -> None:
    lodged = await service.lodge.lodge_sms_with_reply_xml(
        "0412 345 611", "Your table is ready", "EMAIL", "desk@example.com"
    )
    assert lodged.msg_id
    [row] = await look_up(service, Key.LODGE_MSG_ID, lodged.msg_id)
    assert (row.phone_number, row.message_id, row.status, row.source) == (
        "61412345611",
        lodged.msg_id,
        "ACTIVE",
        LODGE,
    )
    assert row.date_lodged is not None
    assert row.external_system_id is None


async def test_an_unknown_message_id_is_a_refusal_not_an_empty_answer(
    service: GatewayService,
) -> None:
    with pytest.raises(GatewayError):
        await look_up(service, Key.MESSAGE_ID, "20990101000000000000")


async def test_markup_as_a_lodge_msg_id_is_answered_as_unknown(service: GatewayService) -> None:
    with pytest.raises(GatewayError, match="does not know that message"):
        await look_up(service, Key.LODGE_MSG_ID, "<MsgID>1</MsgID> & 'x' \"y\"")


@pytest.mark.parametrize(
    ("kind", "value", "says"),
    [
        ("message_id", "   ", "Type the value"),
        ("legacy_msg_id", "", "Type the value"),
        ("batch_code", "2015\x0712", "control characters"),
        ("external_system_id", "x" * (MAX_KEY + 1), "longer than"),
        ("phone_number", "61412345678", "cannot be looked up by"),
    ],
    ids=["blank", "empty", "control character", "too long", "unknown kind"],
)
async def test_a_bad_lookup_is_refused_before_any_request(
    sandbox: SandboxThread, service: GatewayService, kind: str, value: str, says: str
) -> None:
    with pytest.raises(ValidationError, match=says):
        await look_up(service, kind, value)
    assert endpoint_requests(sandbox, "status") == 0
    assert endpoint_requests(sandbox, "lodge") == 0


def test_a_checked_key_is_trimmed_and_names_its_interface() -> None:
    assert check_key("legacy_msg_id", " 123 ") == (Key.LODGE_MSG_ID, "123")
    assert Key.LODGE_MSG_ID.source == LODGE
    assert {k.source for k in Key if k is not Key.LODGE_MSG_ID} == {REST}


def test_a_summary_counts_each_status() -> None:
    rows = [
        StatusRow("61412345678", "1", "DELIVERED"),
        StatusRow("61412345679", "2", "ACTIVE"),
        StatusRow("61412345670", "3", "DELIVERED"),
        StatusRow("61412345671", "4", ""),
    ]
    assert summarise(rows) == "4 messages: 1 (no status), 1 ACTIVE, 2 DELIVERED"
    assert summarise(rows[:1]) == "1 message: 1 DELIVERED"
    assert summarise([]) == "No messages found."


# ---- follow ----------------------------------------------------------------------------------


async def lodged_list(service: GatewayService, folder: Path) -> list[OutboxEntry]:
    """250 recipients sent through the outbox as the Batch tab sends them: 3 lodged entries."""
    outbox = OutboxStore(folder / "profile.sqlite3")
    try:
        sending = Sending(OutboxRunner(service, outbox, "demo@sandbox"), None, "AU")
        message = check_message(SmsForm(text="Following this"), "AU")
        outcome = await sending.send_list(message, NUMBERS)
    finally:
        outbox.close()
    assert outcome.ok
    return [s.entry for s in outcome.sent]


async def test_following_counts_every_message_until_all_are_created(
    service: GatewayService, tmp_path: Path
) -> None:
    entries = await lodged_list(service, tmp_path)
    progress = Progress()
    seen: list[tuple[int, int]] = []
    await follow(
        service,
        lambda: entries,
        progress,
        stop=asyncio.Event(),
        on_change=lambda e: seen.append((e.seq, progress.created(e))),
        interval=QUICK,
    )
    assert [progress.created(e) for e in entries] == [100, 100, 50]
    assert progress.total(entries) == 250
    assert progress.due(entries) == []
    for seq in (1, 2, 3):  # each request's count only grew, to its size
        counts = [n for s, n in seen if s == seq]
        assert counts == sorted(counts)
        assert counts[-1] == (50 if seq == 3 else 100)


async def test_following_gives_up_on_a_request_after_failures_in_a_row(
    sandbox: SandboxThread, service: GatewayService, tmp_path: Path
) -> None:
    entries = await lodged_list(service, tmp_path)
    await asyncio.to_thread(set_faults, sandbox, "status:404=1")
    progress = Progress()
    told: list[int] = []
    await follow(
        service,
        lambda: entries,
        progress,
        stop=asyncio.Event(),
        on_change=lambda e: told.append(e.seq),
        interval=QUICK,
    )
    assert endpoint_requests(sandbox, "status") == FOLLOW_GIVE_UP * len(entries)
    assert sorted(told) == [1, 2, 3]  # each once: when given up on
    assert progress.due(entries) == []
    assert all(progress.given_up(e).startswith("progress unknown: ") for e in entries)
    assert progress.total(entries) < 250


async def test_following_again_asks_about_requests_it_had_given_up_on(
    sandbox: SandboxThread, service: GatewayService, tmp_path: Path
) -> None:
    entries = await lodged_list(service, tmp_path)
    await asyncio.to_thread(set_faults, sandbox, "status:404=1")
    progress = Progress()
    await follow(service, lambda: entries, progress, stop=asyncio.Event(), interval=QUICK)
    assert progress.due(entries) == []
    await asyncio.to_thread(set_faults, sandbox, "")

    progress.again()
    await follow(service, lambda: entries, progress, stop=asyncio.Event(), interval=QUICK)

    assert progress.total(entries) == 250
    assert [progress.given_up(e) for e in entries] == ["", "", ""]


async def test_following_waits_for_a_busy_send_and_stops_when_told(
    service: GatewayService, tmp_path: Path
) -> None:
    entries = await lodged_list(service, tmp_path)
    shown: list[OutboxEntry] = []  # the list as a send in progress shows it: nothing yet
    stop = asyncio.Event()
    progress = Progress()
    following = asyncio.create_task(
        follow(service, lambda: shown, progress, stop=stop, busy=lambda: True, interval=QUICK)
    )
    shown.extend(entries)  # the send lodges them
    for _ in range(500):
        if progress.total(entries) == 250:
            break
        await asyncio.sleep(0.02)
    assert progress.total(entries) == 250
    assert not following.done()  # still busy: more may come
    stop.set()
    await asyncio.wait_for(following, 5)


def test_a_success_between_failures_starts_the_count_again() -> None:
    entry = lodged_entry()
    progress = Progress()
    down = NotFoundError("no status endpoint")
    for _ in range(FOLLOW_GIVE_UP - 1):
        assert not progress.failed(entry, down)
    assert progress.learnt(entry, 10)
    for _ in range(FOLLOW_GIVE_UP - 1):
        assert not progress.failed(entry, down)
    assert progress.due([entry]) == [entry]
    assert progress.failed(entry, down)
    assert progress.given_up(entry) == "progress unknown: no status endpoint"
    assert progress.due([entry]) == []


def test_a_lodged_entry_counts_what_its_answer_named_until_status_says_more() -> None:
    entry = lodged_entry(found=1, recipients=1)
    progress = Progress()
    assert progress.created(entry) == 1
    assert progress.complete(entry)
    pending = lodged_entry(state=EntryState.PENDING)
    assert progress.created(pending) == 0
    assert progress.due([pending]) == []


def lodged_entry(
    *, found: int = 0, recipients: int = 100, state: EntryState = EntryState.LODGED
) -> OutboxEntry:
    numbers = tuple(NUMBERS[:recipients])
    return OutboxEntry(
        id=1,
        batch_id=1,
        seq=1,
        channel="sms",
        external_system_id="gwd-test-0001",
        own_id=True,
        recipients=numbers,
        recipient_count=len(numbers),
        body={},
        state=state,
        attempts=1,
        message_id=None,
        batch_code="B1" if state is EntryState.LODGED else None,
        found=found,
        reason="",
        error_kind=None,
        retryable=False,
        created_us=0,
        updated_us=0,
        sent_us=None,
    )
