"""The outbox on both engines: its guarded state machine, claims across consoles, and
exactly once when two consoles race for one batch (a profile's file, a team's server)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from gwdesk.store.outbox import (
    EntryState,
    NewEntry,
    OutboxBusy,
    OutboxError,
    OutboxStore,
    TransitionError,
)
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.shared import FileData, ServerData, SharedData

BODY = {"text": "Hello", "source": None}
WAIT = 60.0


def new_entries(count: int, prefix: str) -> list[NewEntry]:
    return [
        NewEntry(i, (f"6141200{i:04d}", f"6141300{i:04d}"), BODY, f"{prefix}-{i:04d}")
        for i in range(1, count + 1)
    ]


def record(outbox: OutboxStore, count: int = 3, prefix: str = "gwd-team") -> list[int]:
    _batch, recorded = outbox.record(
        gateway="demo@http://gw", channel="sms", label="Hello", send_id=prefix,
        entries=new_entries(count, prefix),
    )  # fmt: skip
    return [e.id for e in recorded]


def state(outbox: OutboxStore, entry_id: int) -> EntryState:
    entry = outbox.entry(entry_id)
    assert entry is not None
    return entry.state


def batch_of(outbox: OutboxStore, entry_id: int) -> int:
    entry = outbox.entry(entry_id)
    assert entry is not None
    return entry.batch_id


@pytest.fixture
def outbox(shared: SharedData) -> Iterator[OutboxStore]:
    store = OutboxStore(shared, operator="alex")
    yield store
    store.close()


@pytest.fixture
def other(shared: SharedData) -> Iterator[OutboxStore]:
    """A second console's outbox on the same data."""
    store = OutboxStore(shared, operator="sam")
    yield store
    store.close()


def opener(shared: SharedData) -> str:
    """Python that opens an outbox on `shared` in another process."""
    if isinstance(shared, FileData):
        return f"OutboxStore({str(shared.path)!r})"
    assert isinstance(shared, ServerData)
    assert isinstance(shared.database, PostgresDatabase)
    return f"OutboxStore(ServerData(PostgresDatabase({shared.database.url!r})))"


# ---- recording and the state machine -----------------------------------------------------


def test_a_recorded_batch_is_pending_and_names_its_operator(outbox: OutboxStore) -> None:
    ids = record(outbox, 3)
    [batch] = outbox.batches()
    assert (batch.entries, batch.recipients, batch.closed, batch.operator) == (3, 6, False, "alex")
    assert batch.count(EntryState.PENDING) == 3
    first = outbox.entry(ids[0])
    assert first is not None
    assert (first.external_system_id, first.recipients, dict(first.body)) == (
        "gwd-team-0001",
        ("61412000001", "61413000001"),
        BODY,
    )


def test_an_entry_goes_in_flight_once_and_counts_its_attempt(outbox: OutboxStore) -> None:
    [entry_id] = record(outbox, 1)
    started, entry = outbox.begin(entry_id)
    assert started
    assert (entry.state, entry.attempts) == (EntryState.IN_FLIGHT, 1)
    again, entry = outbox.begin(entry_id)
    assert not again
    assert entry.attempts == 1


def test_each_transition_starts_only_from_its_states(outbox: OutboxStore) -> None:
    [entry_id] = record(outbox, 1)
    with pytest.raises(TransitionError, match="pending"):
        outbox.lodged(entry_id, batch_code="B1")
    outbox.begin(entry_id)
    outbox.unknown(entry_id, reason="answer lost")
    outbox.requeue(entry_id, reason="not found by status")
    assert state(outbox, entry_id) is EntryState.PENDING
    assert outbox.begin(entry_id)[1].attempts == 2
    outbox.lodged(entry_id, batch_code="B1", found=2)
    entry = outbox.entry(entry_id)
    assert entry is not None
    assert (entry.state, entry.batch_code, entry.found) == (EntryState.LODGED, "B1", 2)


def test_lodged_is_final_whatever_is_asked_of_it(outbox: OutboxStore) -> None:
    [entry_id, other_id] = record(outbox, 2)
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
    assert outbox.reopen([entry_id, other_id], {"text": "new"}) == [other_id]
    outbox.discard(batch_of(outbox, entry_id))
    assert state(outbox, entry_id) is EntryState.LODGED


def test_the_batch_closes_when_nothing_is_left_to_do_and_reopens_with_a_resend(
    outbox: OutboxStore,
) -> None:
    first, second = record(outbox, 2)
    for entry_id in (first, second):
        outbox.begin(entry_id)
    outbox.lodged(first, batch_code="B1")
    outbox.failed(second, reason="503", error_kind="transient", retryable=True)
    assert len(outbox.batches()) == 1  # a failure that may pass keeps it open
    outbox.failed(second, reason="refused", error_kind="validation", retryable=False)
    assert outbox.batches() == []
    assert outbox.reopen([second], {"text": "Fixed"}) == [second]
    [reopened] = outbox.batches()
    assert reopened.count(EntryState.PENDING) == 1


def test_excluded_numbers_leave_the_entry_and_an_emptied_entry_fails(
    outbox: OutboxStore,
) -> None:
    first, second = record(outbox, 2)
    kept = outbox.exclude(first, {"61412000001"}, "opted out since")
    assert (kept.state, kept.recipients) == (EntryState.PENDING, ("61413000001",))
    emptied = outbox.exclude(second, {"61412000002", "61413000002"}, "all opted out")
    assert (emptied.state, emptied.retryable) == (EntryState.FAILED, False)
    [batch] = outbox.batches()
    assert batch.excluded == ("61412000001", "61412000002", "61413000002")
    outbox.begin(first)
    with pytest.raises(TransitionError):
        outbox.exclude(first, {"61413000001"}, "too late: it is in flight")


def test_discard_gives_up_what_is_left_and_closes_the_batch(outbox: OutboxStore) -> None:
    ids = record(outbox, 3)
    outbox.begin(ids[0])
    outbox.lodged(ids[0], batch_code="B1")
    outbox.begin(ids[1])
    assert outbox.discard(batch_of(outbox, ids[0])) == 2
    assert [state(outbox, i) for i in ids] == [
        EntryState.LODGED,
        EntryState.FAILED,
        EntryState.FAILED,
    ]
    assert outbox.batches() == []


def test_a_send_recorded_twice_or_reusing_an_external_id_is_refused_whole(
    outbox: OutboxStore,
) -> None:
    record(outbox, 2, prefix="gwd-same")
    with pytest.raises(OutboxError, match="already in the outbox; nothing was sent again"):
        record(outbox, 1, prefix="gwd-same")
    with pytest.raises(OutboxError, match="ExternalSystemId of this send is already"):
        outbox.record(
            gateway="g", channel="sms", label="x", send_id="gwd-other",
            entries=[NewEntry(1, ("61412000009",), BODY, "gwd-other-0001"),
                     NewEntry(2, ("61412000010",), BODY, "gwd-same-0002")],
        )  # fmt: skip
    [batch] = outbox.batches()  # nothing of the refused sends was kept
    assert batch.entries == 2


def test_hostile_text_in_a_label_and_body_comes_back_as_it_was(outbox: OutboxStore) -> None:
    body = {"text": "<b>'; DROP TABLE outbox_entries; --</b> 100% \u202e", "source": "ZoË"}
    batch, [entry] = outbox.record(
        gateway="g", channel="sms", label="Robert'); -- %s ?", send_id="gwd-hostile",
        entries=[NewEntry(1, ("61412000001",), body, "gwd-hostile-0001")],
    )  # fmt: skip
    assert batch.label == "Robert'); -- %s ?"
    assert dict(entry.body) == body


# ---- claims ------------------------------------------------------------------------------


def test_a_batch_claimed_by_a_live_console_is_busy_for_another(
    outbox: OutboxStore, other: OutboxStore
) -> None:
    batch_id = batch_of(outbox, record(outbox, 1)[0])
    outbox.claim(batch_id)
    assert other.held_elsewhere(batch_id)
    assert not outbox.held_elsewhere(batch_id)
    with pytest.raises(OutboxBusy, match="another running gwdesk"):
        other.claim(batch_id)
    with pytest.raises(OutboxBusy, match="already being sent"):
        outbox.claim(batch_id)
    batch = outbox.batch(batch_id)
    assert batch is not None
    assert batch.owner == outbox.token
    outbox.release(batch_id)
    assert not other.held_elsewhere(batch_id)
    other.claim(batch_id)
    other.release(batch_id)


def test_claiming_a_batch_that_does_not_exist_is_refused_and_holds_nothing(
    outbox: OutboxStore, other: OutboxStore
) -> None:
    with pytest.raises(OutboxError, match="no outbox batch 4242"):
        outbox.claim(4242)
    assert not outbox.busy(4242)
    assert not other.held_elsewhere(4242)


def test_the_claim_of_a_console_killed_with_sigkill_is_free_at_once(
    shared: SharedData, outbox: OutboxStore
) -> None:
    batch_id = batch_of(outbox, record(outbox, 1)[0])
    script = textwrap.dedent(f"""
        import time
        from gwdesk.store.outbox import OutboxStore
        from gwdesk.store.postgres import PostgresDatabase
        from gwdesk.store.shared import ServerData
        store = {opener(shared)}
        store.claim({batch_id})
        print("claimed", flush=True)
        time.sleep(120)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "claimed"
        assert outbox.held_elsewhere(batch_id)
        with pytest.raises(OutboxBusy):
            outbox.claim(batch_id)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    # The kill let go of the claim (a lock file's lock, or the server session's).
    for _ in range(200):  # the server notices the closed socket within moments
        if not outbox.held_elsewhere(batch_id):
            break
        threading.Event().wait(0.05)
    outbox.claim(batch_id)
    started, entry = outbox.begin(entry_id := outbox.entries(batch_id)[0].id)
    assert started, entry
    assert state(outbox, entry_id) is EntryState.IN_FLIGHT


def all_at_once(consoles: list[OutboxStore], work: Callable[[OutboxStore], None]) -> None:
    """`work` for each console on a thread of its own, all starting together; then the
    consoles close. What any of them raised is raised here."""
    start = threading.Barrier(len(consoles))

    def run(outbox: OutboxStore) -> None:
        start.wait(WAIT)
        work(outbox)

    try:
        with ThreadPoolExecutor(len(consoles)) as pool:
            for running in [pool.submit(run, console) for console in consoles]:
                running.result(WAIT)
    finally:
        for console in consoles:
            console.close()


def test_two_consoles_racing_to_resume_a_batch_begin_each_entry_once(
    shared: SharedData,
) -> None:
    consoles = [OutboxStore(shared, operator=name) for name in ("alex", "sam")]
    ids = record(consoles[0], 40, prefix="gwd-race")
    batch_id = batch_of(consoles[0], ids[0])
    begun: list[int] = []

    def resume(outbox: OutboxStore) -> None:
        """Claim, send a few, let go (as a halted run does), again until none are left."""
        while outbox.entries(batch_id, {EntryState.PENDING}):
            try:
                outbox.claim(batch_id)
            except OutboxBusy:
                threading.Event().wait(0.001)
                continue
            try:
                for entry in outbox.entries(batch_id, {EntryState.PENDING})[:5]:
                    if outbox.begin(entry.id)[0]:
                        begun.append(entry.id)  # list.append: one at a time
                        outbox.lodged(entry.id, message_id=f"M{entry.id}")
            finally:
                outbox.release(batch_id)

    all_at_once(consoles, resume)
    assert Counter(begun) == Counter(ids)  # each once
    check = OutboxStore(shared)
    try:
        batch = check.batch(batch_id)
        assert batch is not None
        assert (batch.count(EntryState.LODGED), batch.closed) == (40, True)
    finally:
        check.close()


def test_consoles_beginning_entries_without_claims_still_begin_each_once(
    shared: SharedData,
) -> None:
    consoles = [OutboxStore(shared) for _ in range(3)]
    ids = record(consoles[0], 30, prefix="gwd-unclaimed")
    begun: list[int] = []

    def begin_all(outbox: OutboxStore) -> None:
        begun.extend(entry_id for entry_id in ids if outbox.begin(entry_id)[0])

    all_at_once(consoles, begin_all)
    assert sorted(begun) == sorted(ids)


# ---- claims on a team's server -----------------------------------------------------------


@pytest.fixture
def server(pg_url: str) -> Iterator[ServerData]:
    data = ServerData(PostgresDatabase(pg_url))
    yield data
    data.close()


def terminate(url: str, pid: int) -> None:
    """End a server session from another connection (as a restart or a cut network does)."""
    with psycopg.connect(url, autocommit=True) as conn:
        ended = conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
        assert ended is not None
        assert ended[0] is True


def test_a_lost_claim_connection_makes_begin_refuse_rather_than_send(
    server: ServerData, pg_url: str
) -> None:
    outbox, other = OutboxStore(server), OutboxStore(server)
    try:
        first, second = record(outbox, 2)
        batch_id = batch_of(outbox, first)
        outbox.claim(batch_id)
        assert outbox.begin(first)[0]
        assert outbox.claim_pid
        terminate(pg_url, outbox.claim_pid)
        with pytest.raises(OutboxBusy, match=r"claim on outbox batch \d+ was lost"):
            outbox.begin(second)
        assert state(outbox, second) is EntryState.PENDING  # nothing was marked to send
        outbox.lodged(first, message_id="M1")  # an answer already received is still kept
        other.claim(batch_id)  # free for another console at once
        assert other.begin(second)[0]
        outbox.release(batch_id)  # never raises, and does not let go of the other's claim
        assert outbox.held_elsewhere(batch_id)
    finally:
        outbox.close()
        other.close()


def test_a_console_claims_again_after_its_claim_connection_was_lost(
    server: ServerData, pg_url: str
) -> None:
    outbox = OutboxStore(server)
    try:
        [entry_id] = record(outbox, 1)
        batch_id = batch_of(outbox, entry_id)
        outbox.claim(batch_id)
        assert outbox.claim_pid
        terminate(pg_url, outbox.claim_pid)
        outbox.release(batch_id)
        outbox.claim(batch_id)  # on a new connection of its own
        assert outbox.begin(entry_id)[0]
    finally:
        outbox.close()


def test_an_entry_of_a_batch_another_console_holds_does_not_begin(server: ServerData) -> None:
    outbox, other = OutboxStore(server), OutboxStore(server)
    try:
        [entry_id] = record(outbox, 1)
        other.claim(batch_of(outbox, entry_id))
        with pytest.raises(OutboxBusy, match="another running gwdesk"):
            outbox.begin(entry_id)
        assert state(outbox, entry_id) is EntryState.PENDING
    finally:
        outbox.close()
        other.close()


def test_a_dead_consoles_owner_is_not_shown_as_sending(server: ServerData, pg_url: str) -> None:
    outbox, other = OutboxStore(server), OutboxStore(server)
    try:
        batch_id = batch_of(outbox, record(outbox, 1)[0])
        outbox.claim(batch_id)
        [shown] = other.batches()
        assert shown.owner == outbox.token
        assert outbox.claim_pid
        terminate(pg_url, outbox.claim_pid)
        [shown] = other.batches()
        assert shown.owner is None
    finally:
        outbox.close()
        other.close()
