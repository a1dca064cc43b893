"""The opt-out list in the one send pipeline, against the sandbox over loopback (Qt-free).

A STOP stored by the reply store refuses a single send to that number, leaves it out of
a list (the batch says so), is checked again before each request of a list recorded
earlier, and is passed by a message marked purely factual.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from gwdesk.app.optouts import OptedOutError
from gwdesk.app.profile_data import ProfileData, open_profile, sending_for
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsForm, check_message
from gwdesk.gateway.errors import ValidationError
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from gwdesk.store.outbox import EntryState
from gwdesk.store.replies import IncomingReply
from tests.contract.rest_support import service_for

CUSTOMER = "61412345678"


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


def stop(store: LocalStore, text: str = "STOP", number: str = CUSTOMER) -> None:
    store.replies.add([IncomingReply(number, "61400000000", text, datetime.now(UTC))])


def lodged_to(sandbox: SandboxThread, number: str) -> int:
    logs = httpx.get(
        f"{sandbox.rest_url}/v2/message/logs", auth=("demo", "demo"), params={"recipient": number}
    )
    return int(logs.json().get("totalRecords", 0)) if logs.status_code == 200 else 0


async def test_a_single_send_to_a_number_that_replied_stop_is_refused_with_why(
    setup: tuple[Sending, LocalStore], sandbox: SandboxThread
) -> None:
    sending, store = setup
    stop(store)
    with pytest.raises(OptedOutError) as refused:
        await sending.send_message(SmsForm(recipient="0412 345 678", text="Hello"))
    assert refused.value.field == "Recipient"
    assert "opted out by replying STOP on" in refused.value.message
    assert store.outbox.batches(open_only=False) == []  # nothing recorded


async def test_a_factual_message_goes_to_an_opted_out_number_and_says_so(
    setup: tuple[Sending, LocalStore],
) -> None:
    sending, store = setup
    stop(store)
    outcome = await sending.send_message(
        SmsForm(recipient=CUSTOMER, text="Your appointment is at 10:00", factual=True)
    )
    assert outcome.ok
    assert "purely factual" in outcome.history[0].detail
    assert outcome.sent[0].entry.body.get("factual") is True


async def test_a_list_leaves_out_the_opted_out_number_and_counts_it(
    setup: tuple[Sending, LocalStore],
) -> None:
    sending, store = setup
    stop(store)
    numbers = [CUSTOMER] + [f"614120{n:05d}" for n in range(249)]
    message = check_message(SmsForm(text="Sale on now"), "AU")
    outcome = await sending.send_list(message, numbers)
    assert outcome.ok
    assert outcome.lodged_recipients == 249
    assert outcome.excluded == (CUSTOMER,)


async def test_a_stop_that_arrives_after_a_list_is_recorded_still_counts(
    setup: tuple[Sending, LocalStore],
) -> None:
    sending, store = setup
    numbers = [f"614120{n:05d}" for n in range(150)]
    message = check_message(SmsForm(text="Sale on now"), "AU")
    batch, entries = await sending.record_list(message, numbers)
    stop(store, number=numbers[120])  # in the second request, before it leaves
    outcome = await sending.run_list(batch, entries, message)
    assert outcome.lodged_recipients == 149
    second = store.outbox.entries(batch.id)[1]
    assert numbers[120] not in second.recipients
    assert store.outbox.batch(batch.id).excluded == (numbers[120],)


async def test_a_request_whose_every_recipient_opted_out_is_not_sent(
    setup: tuple[Sending, LocalStore],
) -> None:
    sending, store = setup
    message = check_message(SmsForm(text="Sale on now"), "AU")
    batch, entries = await sending.record_list(message, [CUSTOMER])
    stop(store)
    outcome = await sending.run_list(batch, entries, message)
    assert not outcome.ok
    assert outcome.sent[0].entry.state is EntryState.FAILED
    assert "opted out" in outcome.sent[0].entry.reason


async def test_a_list_of_only_opted_out_numbers_is_refused(
    setup: tuple[Sending, LocalStore],
) -> None:
    sending, store = setup
    stop(store)
    message = check_message(SmsForm(text="Sale on now"), "AU")
    with pytest.raises(ValidationError, match="opted out"):
        await sending.send_list(message, [CUSTOMER])


async def test_start_lets_the_number_be_texted_again(setup: tuple[Sending, LocalStore]) -> None:
    sending, store = setup
    stop(store)
    store.replies.add([IncomingReply(CUSTOMER, "61400000000", "start", datetime.now(UTC))])
    outcome = await sending.send_message(SmsForm(recipient=CUSTOMER, text="Welcome back"))
    assert outcome.ok


async def test_a_wap_push_to_an_opted_out_number_is_refused(
    setup: tuple[Sending, LocalStore],
) -> None:
    sending, store = setup
    stop(store)
    form = SmsForm(channel=Channel.WAP_PUSH, recipient=CUSTOMER, wap_url="https://x.example/a")
    with pytest.raises(OptedOutError):
        await sending.send_message(form)


async def test_a_marketing_message_carries_the_instruction_in_its_parts(
    setup: tuple[Sending, LocalStore], sandbox: SandboxThread
) -> None:
    sending, _store = setup
    outcome = await sending.send_message(
        SmsForm(recipient="0412 000 111", text="Half price today", marketing=True)
    )
    assert outcome.ok
    assert outcome.history[0].text == "Half price today\nReply STOP to opt out"


async def test_a_marketing_message_from_a_sender_name_is_refused(
    setup: tuple[Sending, LocalStore],
) -> None:
    sending, _store = setup
    with pytest.raises(ValidationError) as refused:
        sending.check_message(
            SmsForm(recipient="0412 000 111", text="Half price", sender="ACME", marketing=True)
        )
    assert refused.value.field == "Source"
    assert "reply STOP" in refused.value.message
