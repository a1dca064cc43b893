"""The outbox's store: its migration, its state machine, claims, and rows it cannot trust."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.store.database import MIGRATIONS, StoreError, connect
from gwdesk.store.local import LocalStore
from gwdesk.store.outbox import (
    EntryState,
    NewEntry,
    OutboxBusy,
    OutboxError,
    OutboxStore,
    Step,
    TransitionError,
)

BODY = {"text": "Hello", "source": None}


def entries(count: int, prefix: str = "gwd-test-abc") -> list[NewEntry]:
    return [
        NewEntry(i, (f"6141200{i:04d}", f"6141300{i:04d}"), BODY, f"{prefix}-{i:04d}")
        for i in range(1, count + 1)
    ]


def record(outbox: OutboxStore, count: int = 3, prefix: str = "gwd-test-abc") -> list[int]:
    _batch, recorded = outbox.record(
        gateway="demo@http://gw", channel="sms", label="Hello", send_id=prefix,
        entries=entries(count, prefix),
    )  # fmt: skip
    return [e.id for e in recorded]


@pytest.fixture
def outbox(tmp_path: Path) -> Iterator[OutboxStore]:
    store = OutboxStore(tmp_path / "profile.sqlite3")
    yield store
    store.close()


def batch_of(outbox: OutboxStore, entry_id: int) -> int:
    entry = outbox.entry(entry_id)
    assert entry is not None
    return entry.batch_id


def state(outbox: OutboxStore, entry_id: int) -> EntryState:
    entry = outbox.entry(entry_id)
    assert entry is not None
    return entry.state


# ---- migration ---------------------------------------------------------------------------


def test_an_existing_store_gains_the_outbox_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    before = MIGRATIONS.index(next(m for m in MIGRATIONS if "outbox_batches" in m))
    for step in range(before):
        conn.executescript(f"BEGIN;{MIGRATIONS[step]}PRAGMA user_version={step + 1};COMMIT;")
    conn.execute("INSERT INTO drafts(key, value) VALUES ('send', '{\"text\": \"kept\"}')")
    conn.close()

    store = LocalStore(path)
    try:
        assert store.drafts.load("send") == {"text": "kept"}
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert store.outbox.batches() == []
        record(store.outbox)
        assert len(store.outbox.batches()) == 1
    finally:
        store.close()


def test_the_outbox_connection_is_wal_and_fully_synchronous(outbox: OutboxStore) -> None:
    assert outbox.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert outbox.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_a_claim_and_its_release_leave_the_connection_fully_synchronous(
    outbox: OutboxStore,
) -> None:
    [entry_id] = record(outbox, 1)
    batch_id = batch_of(outbox, entry_id)
    outbox.claim(batch_id)
    assert outbox.conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    outbox.release(batch_id)
    assert outbox.conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert outbox.begin(entry_id)[0]  # a transition after them is synced as ever


# ---- recording and the state machine -----------------------------------------------------


def test_a_recorded_batch_is_pending_with_ids_recipients_and_body(outbox: OutboxStore) -> None:
    ids = record(outbox, 3)
    [batch] = outbox.batches()
    assert (batch.entries, batch.recipients, batch.closed) == (3, 6, False)
    assert batch.count(EntryState.PENDING) == 3
    first = outbox.entry(ids[0])
    assert first is not None
    assert first.external_system_id == "gwd-test-abc-0001"
    assert first.recipients == ("61412000001", "61413000001")
    assert dict(first.body) == BODY
    assert (first.state, first.attempts, first.damaged) == (EntryState.PENDING, 0, "")


def test_an_entry_goes_in_flight_once_and_counts_its_attempt(outbox: OutboxStore) -> None:
    [entry_id] = record(outbox, 1)
    started, entry = outbox.begin(entry_id)
    assert started
    assert (entry.state, entry.attempts) == (EntryState.IN_FLIGHT, 1)
    assert entry.sent_us is not None
    again, entry = outbox.begin(entry_id)
    assert not again
    assert entry.attempts == 1


def test_an_entry_is_lodged_only_from_in_flight_or_unknown(outbox: OutboxStore) -> None:
    [entry_id] = record(outbox, 1)
    with pytest.raises(TransitionError, match="pending"):
        outbox.lodged(entry_id, batch_code="B1")
    outbox.begin(entry_id)
    outbox.unknown(entry_id, reason="answer lost")
    outbox.lodged(entry_id, batch_code="B1", found=2)
    entry = outbox.entry(entry_id)
    assert entry is not None
    assert (entry.state, entry.batch_code, entry.found) == (EntryState.LODGED, "B1", 2)


def test_lodged_is_final_whatever_is_asked_of_it(outbox: OutboxStore) -> None:
    [entry_id, other] = record(outbox, 2)
    outbox.begin(entry_id)
    outbox.lodged(entry_id, message_id="M1")
    assert outbox.begin(entry_id)[0] is False
    for change in (
        lambda: outbox.requeue(entry_id),
        lambda: outbox.unknown(entry_id, reason="x"),
        lambda: outbox.failed(entry_id, reason="x"),
    ):
        with pytest.raises(TransitionError, match="lodged"):
            change()
    outbox.give_up(entry_id, "damaged")
    assert outbox.reopen([entry_id, other], {"text": "new"}) == [other]
    batch_id = batch_of(outbox, entry_id)
    outbox.discard(batch_id)
    assert state(outbox, entry_id) is EntryState.LODGED


def test_an_unknown_entry_goes_back_to_pending_when_proved_not_lodged(
    outbox: OutboxStore,
) -> None:
    [entry_id] = record(outbox, 1)
    outbox.begin(entry_id)
    outbox.unknown(entry_id, reason="answer lost")
    outbox.requeue(entry_id, reason="not found by status")
    assert state(outbox, entry_id) is EntryState.PENDING
    assert outbox.begin(entry_id)[1].attempts == 2


def test_a_group_of_changes_keeps_the_others_when_one_is_refused(outbox: OutboxStore) -> None:
    first, second, third = record(outbox, 3)
    outbox.begin(third)
    done = outbox.apply(
        [Step("begin", first), Step("lodged", second, {"message_id": "M2"}),
         Step("lodged", third, {"message_id": "M3"})]
    )  # fmt: skip
    (started, entry), _none = done[0]
    assert started
    assert entry.state is EntryState.IN_FLIGHT
    assert done[1][0] is None
    assert isinstance(done[1][1], TransitionError)
    assert done[2][0].state is EntryState.LODGED
    assert [state(outbox, e) for e in (first, second, third)] == [
        EntryState.IN_FLIGHT, EntryState.PENDING, EntryState.LODGED,
    ]  # fmt: skip


def test_a_begin_in_a_group_leaves_out_who_opted_out_first(outbox: OutboxStore) -> None:
    [entry_id] = record(outbox, 1)
    gone = "6141200" + "0001"
    [((started, entry), _none)] = outbox.apply(
        [Step("begin", entry_id, {"excluding": frozenset({gone}), "reason": "opted out"})]
    )
    assert started
    assert entry.state is EntryState.IN_FLIGHT
    assert gone not in entry.recipients
    assert len(entry.recipients) == 1
    assert outbox.batch(entry.batch_id).excluded == (gone,)  # type: ignore[union-attr]


def test_a_begin_in_a_group_with_everyone_opted_out_fails_unsent(outbox: OutboxStore) -> None:
    [entry_id] = record(outbox, 1)
    everyone = frozenset(entries(1)[0].recipients)
    [((started, entry), _none)] = outbox.apply(
        [Step("begin", entry_id, {"excluding": everyone, "reason": "all opted out"})]
    )
    assert not started
    assert (entry.state, entry.reason, entry.attempts) == (EntryState.FAILED, "all opted out", 0)


def test_the_batch_closes_when_nothing_is_left_to_do(outbox: OutboxStore) -> None:
    first, second = record(outbox, 2)
    for entry_id in (first, second):
        outbox.begin(entry_id)
    outbox.lodged(first, batch_code="B1")
    outbox.failed(second, reason="503", error_kind="transient", retryable=True)
    assert len(outbox.batches()) == 1  # a failure that may pass keeps it open
    outbox.failed(second, reason="refused", error_kind="validation", retryable=False)
    assert outbox.batches() == []
    [closed] = outbox.batches(open_only=False)
    assert closed.closed
    assert closed.count(EntryState.LODGED, EntryState.FAILED) == 2


def test_reopen_readies_failed_and_pending_entries_with_the_new_message(
    outbox: OutboxStore,
) -> None:
    failed, pending, flying = record(outbox, 3)
    outbox.begin(failed)
    outbox.failed(failed, reason="refused", error_kind="validation")
    outbox.begin(flying)
    opened = outbox.reopen([failed, pending, flying], {"text": "Fixed text"})
    assert opened == [failed, pending]
    for entry_id in opened:
        entry = outbox.entry(entry_id)
        assert entry is not None
        assert (entry.state, entry.body["text"], entry.reason) == (
            EntryState.PENDING,
            "Fixed text",
            "",
        )
    assert state(outbox, flying) is EntryState.IN_FLIGHT


def test_discard_gives_up_what_is_left_and_closes_the_batch(outbox: OutboxStore) -> None:
    ids = record(outbox, 3)
    outbox.begin(ids[0])
    outbox.lodged(ids[0], batch_code="B1")
    outbox.begin(ids[1])
    batch_id = batch_of(outbox, ids[0])
    assert outbox.discard(batch_id) == 2
    assert [state(outbox, i) for i in ids] == [
        EntryState.LODGED,
        EntryState.FAILED,
        EntryState.FAILED,
    ]
    assert outbox.batches() == []


# ---- claims ------------------------------------------------------------------------------


def test_a_batch_claimed_by_a_live_outbox_is_busy_for_another(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    first, second = OutboxStore(path), OutboxStore(path)
    try:
        batch_id = batch_of(first, record(first, 1)[0])
        first.claim(batch_id)
        with pytest.raises(OutboxBusy, match="another running gwdesk"):
            second.claim(batch_id)
        with pytest.raises(OutboxBusy, match="already being sent"):
            first.claim(batch_id)
        first.release(batch_id)
        second.claim(batch_id)
        second.release(batch_id)
    finally:
        first.close()
        second.close()


def test_the_claim_of_a_killed_process_is_taken_over_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    outbox = OutboxStore(path)
    try:
        batch_id = batch_of(outbox, record(outbox, 1)[0])
        script = textwrap.dedent(f"""
            import sys, time
            from gwdesk.store.outbox import OutboxStore
            store = OutboxStore({str(path)!r})
            store.claim({batch_id})
            print("claimed", flush=True)
            time.sleep(60)
        """)
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "claimed"
        with pytest.raises(OutboxBusy):
            outbox.claim(batch_id)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        child.stdout.close()
        outbox.claim(batch_id)  # the dead owner's lock went with it
        batch = outbox.batch(batch_id)
        assert batch is not None
        assert batch.owner == outbox.token
    finally:
        outbox.close()


# ---- rows it cannot trust ----------------------------------------------------------------


def test_a_second_batch_with_an_existing_external_id_is_refused_whole(
    outbox: OutboxStore,
) -> None:
    record(outbox, 2, prefix="gwd-same")
    with pytest.raises(OutboxError, match="already in the outbox"):
        outbox.record(
            gateway="g", channel="sms", label="x", send_id="gwd-other",
            entries=[NewEntry(1, ("61412000009",), BODY, "gwd-other-0001"),
                     NewEntry(2, ("61412000010",), BODY, "gwd-same-0002")],
        )  # fmt: skip
    assert len(outbox.batches()) == 1  # nothing of the refused batch was kept
    assert outbox.conn.execute("SELECT COUNT(*) FROM outbox_entries").fetchone()[0] == 2


def test_a_batch_without_requests_or_recipients_is_refused(outbox: OutboxStore) -> None:
    with pytest.raises(OutboxError, match="at least one request"):
        outbox.record(gateway="g", channel="sms", label="x", send_id="s1", entries=[])
    with pytest.raises(OutboxError, match="no recipient"):
        outbox.record(
            gateway="g", channel="sms", label="x", send_id="s2",
            entries=[NewEntry(1, (), BODY, "s2-0001")],
        )  # fmt: skip


def test_unreadable_rows_come_back_damaged_not_as_something_to_send(
    outbox: OutboxStore,
) -> None:
    ids = record(outbox, 4)
    conn = outbox.conn
    conn.execute("UPDATE outbox_entries SET recipients = '{not json' WHERE id = ?", (ids[0],))
    conn.execute("UPDATE outbox_entries SET recipients = '[1, 2]' WHERE id = ?", (ids[1],))
    conn.execute("UPDATE outbox_entries SET body = '\"just text\"' WHERE id = ?", (ids[2],))
    conn.execute("PRAGMA ignore_check_constraints = ON")
    conn.execute("UPDATE outbox_entries SET state = 'sent-ish' WHERE id = ?", (ids[3],))
    conn.execute("PRAGMA ignore_check_constraints = OFF")

    found = {e.id: e for e in outbox.entries(batch_of(outbox, ids[0]))}
    assert "cannot be read" in found[ids[0]].damaged
    assert "not a list of numbers" in found[ids[1]].damaged
    assert "not a JSON object" in found[ids[2]].damaged
    assert "'sent-ish' is not one gwdesk knows" in found[ids[3]].damaged
    assert found[ids[3]].state is EntryState.UNKNOWN
    [batch] = outbox.batches()
    assert batch.count(EntryState.UNKNOWN) == 1  # counted, as something to look at
    assert [e.id for e in outbox.unsettled(batch.id)] == [ids[3]]
    outbox.give_up(ids[3], "damaged")
    assert state(outbox, ids[3]) is EntryState.FAILED


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a database"):
        OutboxStore(path)


def test_a_body_is_stored_as_json_text(outbox: OutboxStore) -> None:
    [entry_id] = record(outbox, 1)
    raw = outbox.conn.execute("SELECT body FROM outbox_entries WHERE id = ?", (entry_id,))
    assert json.loads(raw.fetchone()[0]) == BODY


def test_connect_alone_creates_every_outbox_table(tmp_path: Path) -> None:
    conn = connect(tmp_path / "fresh.sqlite3")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert {"outbox_batches", "outbox_entries"} <= names
