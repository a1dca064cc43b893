"""Scheduled sends the outbox holds, on both engines (a profile's file, a team's server):
held out of what is resumed, changed or cancelled only while nobody has taken them, and
taken by exactly one of the desks and receivers racing for a due one."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from gwdesk.store.outbox import NewEntry, OutboxError, OutboxStore
from gwdesk.store.outbox_holds import Repeat
from gwdesk.store.shared import SharedData

GATEWAY = "demo@http://gw"
BODY = {"text": "Hello", "source": None}
DUE = 1_900_000_000_000_000
"""The send's time, in µs (2030): far from any real clock, so only the times the tests
pass decide."""


def entries(numbers: tuple[str, ...], send_id: str = "gwd-held") -> list[NewEntry]:
    return [NewEntry(1, numbers, BODY, f"{send_id}-0001")]


def hold(outbox: OutboxStore, until_us: int = DUE, send_id: str = "gwd-held") -> int:
    batch, _entries = outbox.record(
        gateway=GATEWAY, channel="sms", label="Hello", send_id=send_id,
        entries=entries(("61412000001", "61412000002"), send_id), held_until_us=until_us,
    )  # fmt: skip
    return batch.id


@pytest.fixture
def outbox(shared: SharedData) -> Iterator[OutboxStore]:
    store = OutboxStore(shared, operator="alex")
    yield store
    store.close()


def test_a_held_send_is_listed_as_scheduled_and_not_as_left_to_resume(
    outbox: OutboxStore,
) -> None:
    batch_id = hold(outbox)
    assert [b.id for b in outbox.batches(gateway=GATEWAY, held=True)] == [batch_id]
    assert outbox.batches(gateway=GATEWAY, held=False) == []
    assert outbox.next_due_us(GATEWAY) == DUE


def test_a_held_send_is_due_only_once_its_time_has_come(outbox: OutboxStore) -> None:
    batch_id = hold(outbox)
    assert outbox.due(GATEWAY, DUE - 1) == []
    assert not outbox.take(batch_id, DUE - 1)
    assert [b.id for b in outbox.due(GATEWAY, DUE)] == [batch_id]


def test_taking_a_due_send_ends_its_hold_and_it_is_then_an_ordinary_batch(
    outbox: OutboxStore,
) -> None:
    batch_id = hold(outbox)
    assert outbox.take(batch_id, DUE)
    assert outbox.batches(gateway=GATEWAY, held=True) == []
    assert [b.id for b in outbox.batches(gateway=GATEWAY, held=False)] == [batch_id]
    assert not outbox.take(batch_id, DUE), "taken twice"


def test_of_many_desks_racing_for_a_due_send_exactly_one_takes_it(
    shared: SharedData, outbox: OutboxStore
) -> None:
    batch_id = hold(outbox)
    desks = [OutboxStore(shared, operator=f"desk {i}") for i in range(6)]
    try:
        with ThreadPoolExecutor(len(desks)) as pool:
            taken = list(pool.map(lambda desk: desk.take(batch_id, DUE), desks))
    finally:
        for desk in desks:
            desk.close()
    assert taken.count(True) == 1


def test_a_held_send_can_be_moved_to_another_time(outbox: OutboxStore) -> None:
    batch_id = hold(outbox)
    moved = outbox.retime(batch_id, DUE + 3_600_000_000)
    assert moved.held_until_us == DUE + 3_600_000_000
    assert outbox.due(GATEWAY, DUE) == []


def test_a_held_send_can_be_given_another_text(outbox: OutboxStore) -> None:
    batch_id = hold(outbox)
    batch, rewritten = outbox.rewrite(
        batch_id, label="Hello again", body={"text": "Hello again", "source": None}
    )
    assert batch.label == "Hello again"
    assert [e.body["text"] for e in rewritten] == ["Hello again"]
    assert rewritten[0].recipients == ("61412000001", "61412000002")


def test_a_held_send_can_be_given_other_recipients(outbox: OutboxStore) -> None:
    batch_id = hold(outbox)
    _batch, rewritten = outbox.rewrite(batch_id, label="Hello", entries=entries(("61412000009",)))
    assert [e.recipients for e in rewritten] == [("61412000009",)]
    assert outbox.entries(batch_id) == rewritten


def test_a_send_already_taken_can_no_longer_be_changed_or_cancelled(
    outbox: OutboxStore,
) -> None:
    batch_id = hold(outbox)
    assert outbox.take(batch_id)
    with pytest.raises(OutboxError, match="no longer waiting"):
        outbox.rewrite(batch_id, label="Too late", body={"text": "Too late"})
    with pytest.raises(OutboxError, match="no longer waiting"):
        outbox.retime(batch_id, DUE)
    with pytest.raises(OutboxError, match="no longer waiting"):
        outbox.cancel(batch_id, "too late")
    assert outbox.entries(batch_id)[0].body == BODY


def test_a_held_send_with_a_request_already_tried_cannot_be_rewritten(
    outbox: OutboxStore,
) -> None:
    batch_id = hold(outbox)
    [entry] = outbox.entries(batch_id)
    outbox.begin(entry.id)  # a damaged or hand-edited file: tried while still held
    with pytest.raises(OutboxError, match="tried already"):
        outbox.rewrite(batch_id, label="x", body={"text": "x"})


def test_a_cancelled_send_fails_unsent_closes_and_is_never_taken(outbox: OutboxStore) -> None:
    batch_id = hold(outbox)
    assert outbox.cancel(batch_id, "cancelled by alex") == 1
    [entry] = outbox.entries(batch_id)
    assert (entry.state.value, entry.attempts, entry.retryable) == ("failed", 0, False)
    assert entry.reason == "cancelled by alex"
    assert not outbox.take(batch_id)
    assert outbox.batches(gateway=GATEWAY) == []
    assert outbox.next_due_us(GATEWAY) is None


def test_a_rewrite_with_no_recipient_is_refused_and_changes_nothing(
    outbox: OutboxStore,
) -> None:
    batch_id = hold(outbox)
    with pytest.raises(OutboxError, match="at least one recipient"):
        outbox.rewrite(batch_id, label="x", entries=[])
    assert outbox.entries(batch_id)[0].recipients == ("61412000001", "61412000002")


def test_the_soonest_held_send_is_the_next_due(outbox: OutboxStore) -> None:
    later = hold(outbox, DUE + 10, "gwd-later")
    soonest = hold(outbox, DUE, "gwd-sooner")
    assert outbox.next_due_us(GATEWAY) == DUE
    assert [b.id for b in outbox.due(GATEWAY, DUE + 10)] == [soonest, later]


def test_taking_a_recurring_send_records_its_next_occurrence_under_a_new_name(
    outbox: OutboxStore,
) -> None:
    batch_id = hold(outbox)
    assert outbox.take(batch_id, DUE, Repeat(DUE + 86_400_000_000, "gwd-next"))
    [following] = outbox.batches(gateway=GATEWAY, held=True)
    assert (following.send_id, following.held_until_us) == ("gwd-next", DUE + 86_400_000_000)
    [entry] = outbox.entries(following.id)
    assert (entry.external_system_id, entry.recipients, entry.body) == (
        "gwd-next-0001",
        ("61412000001", "61412000002"),
        BODY,
    )
    assert entry.state.value == "pending"


def test_a_send_that_cannot_be_taken_records_no_next_occurrence(outbox: OutboxStore) -> None:
    batch_id = hold(outbox)
    assert not outbox.take(batch_id, DUE - 1, Repeat(DUE + 1, "gwd-early"))
    assert [b.send_id for b in outbox.batches(gateway=GATEWAY, held=True)] == ["gwd-held"]


def test_desks_taking_due_sends_a_page_at_a_time_take_each_once(
    shared: SharedData, outbox: OutboxStore
) -> None:
    held = [hold(outbox, DUE + i, f"gwd-crowd-{i:03d}") for i in range(60)]
    desks = [OutboxStore(shared, operator=f"desk {i}") for i in range(4)]

    def take_all(desk: OutboxStore) -> list[int]:
        taken: list[int] = []
        while page := desk.take_due(GATEWAY, DUE + 100, limit=7):
            taken.extend(b.id for b in page)
        return taken

    try:
        with ThreadPoolExecutor(len(desks)) as pool:
            pages = list(pool.map(take_all, desks))
    finally:
        for desk in desks:
            desk.close()
    every = [batch_id for page in pages for batch_id in page]
    assert sorted(every) == sorted(held)  # each taken, and by one desk only


def test_taking_due_sends_leaves_those_not_due_and_those_before_since(
    outbox: OutboxStore,
) -> None:
    early, due, late = (hold(outbox, DUE + d, f"gwd-{d}") for d in (-10, 0, 10))
    taken = outbox.take_due(GATEWAY, DUE, since_us=DUE - 5)
    assert [b.id for b in taken] == [due]
    assert sorted(b.id for b in outbox.batches(gateway=GATEWAY, held=True)) == [early, late]


def test_taking_a_due_recurring_send_in_a_page_records_its_next(outbox: OutboxStore) -> None:
    hold(outbox)
    [taken] = outbox.take_due(GATEWAY, DUE, then=lambda _b: Repeat(DUE + 60, "gwd-again"))
    [following] = outbox.batches(gateway=GATEWAY, held=True)
    assert (following.send_id, following.held_until_us) == ("gwd-again", DUE + 60)
    assert taken.send_id == "gwd-held"
