"""The console's one way to cross threads (`gwdesk.ui.tasks`): coroutines for slots with keys
scoped to their owner, blocking work with progress, cancel and undo, store reads off the
GUI thread with superseded reads dropped, reads asked for again coalesced, and a flow's
hand-off settled.

Real parts: the qasync loop, worker threads, a real SQLite file read by a real reader.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication

from gwdesk.store.database import ReadInterrupted, StoreError, StoreUnavailable
from gwdesk.store.reader import Reading
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.tasks import (
    BlockingJob,
    CoalescingRead,
    FlowHandoff,
    StoreReads,
    TaskRunner,
    off_thread,
    to_gui_thread,
)
from tests.ui.conftest import UiBundle, wait_until

Answers = list[tuple[Any, BaseException | None]]


async def forever(started: list[str], name: str) -> None:
    started.append(name)
    await asyncio.Event().wait()


# ---- coroutines, keyed per owner ----------------------------------------------------------------


async def test_two_owners_tasks_of_one_key_do_not_cancel_each_other(ui: UiBundle) -> None:
    first, second = QObject(), QObject()
    started: list[str] = []
    one = ui.tasks.run(forever(started, "one"), key="send", owner=first)
    two = ui.tasks.run(forever(started, "two"), key="send", owner=second)
    await wait_until(lambda: started == ["one", "two"], message="both tasks started")
    assert ui.tasks.running("send", owner=first)
    assert ui.tasks.running("send", owner=second)
    assert not ui.tasks.running("send")  # nor is it the console's own key
    assert not one.done()
    assert not two.done()
    ui.tasks.cancel("send", owner=first)
    await wait_until(one.cancelled, message="the first owner's task cancelled")
    assert not two.done()
    assert ui.tasks.running("send", owner=second)


async def test_a_newer_task_of_the_same_owner_and_key_cancels_the_older(ui: UiBundle) -> None:
    owner = QObject()
    started: list[str] = []
    older = ui.tasks.run(forever(started, "older"), key="lookup", owner=owner)
    await wait_until(lambda: started == ["older"])
    newer = ui.tasks.run(forever(started, "newer"), key="lookup", owner=owner)
    await wait_until(older.cancelled, message="the older lookup cancelled")
    await wait_until(lambda: started == ["older", "newer"])
    assert not newer.done()
    assert ui.tasks.running("lookup", owner=owner)


async def test_an_owners_tasks_end_when_it_is_destroyed_and_others_go_on(ui: UiBundle) -> None:
    owner, other = QObject(), QObject()
    started: list[str] = []
    keyed = ui.tasks.run(forever(started, "keyed"), key="load", owner=owner)
    plain = ui.tasks.run(forever(started, "plain"), owner=owner)
    kept = ui.tasks.run(forever(started, "kept"), key="load", owner=other)
    await wait_until(lambda: len(started) == 3)
    owner.deleteLater()
    await wait_until(lambda: keyed.cancelled() and plain.cancelled(), message="owner's tasks")
    assert not kept.done()
    assert ui.tasks.running("load", owner=other)


async def test_an_owners_unhandled_failure_reaches_the_reporter(ui: UiBundle) -> None:
    reporter = ErrorReporter(show_dialogs=False)
    tasks = TaskRunner(reporter)
    owner = QObject()
    broken = RuntimeError("broken on purpose")

    async def fails() -> None:
        raise broken

    tasks.run(fails(), key="x", owner=owner, context="doing the thing")
    await wait_until(lambda: reporter.errors, message="the report")
    assert reporter.errors == [broken]


# ---- blocking work -----------------------------------------------------------------------------


async def test_blocking_work_runs_off_the_gui_thread_and_reports_progress_here(
    ui: UiBundle,
) -> None:
    reports: list[tuple[str, int, int, int]] = []

    def report(phase: str, done: int, total: int) -> None:
        reports.append((phase, done, total, threading.get_ident()))

    def work(job: BlockingJob[int]) -> int:
        step = job.progress("counting")
        for done in range(1, 4):
            step(done, 3)
        return threading.get_ident()

    job: BlockingJob[int] = BlockingJob(report)
    worker = await job.run(work)
    gui = threading.get_ident()
    assert worker != gui
    assert job.thread_id == worker
    await wait_until(lambda: len(reports) == 3, message="the progress")
    assert [(p, d, t) for p, d, t, _ in reports] == [("counting", n, 3) for n in (1, 2, 3)]
    assert {thread for *_, thread in reports} == {gui}


async def test_cancelling_a_blocking_job_stops_the_work_it_polls(ui: UiBundle) -> None:
    polling = threading.Event()

    def work(job: BlockingJob[str]) -> str:
        polling.set()
        while not job.cancelled():
            threading.Event().wait(0.005)
        return "stopped early"

    job: BlockingJob[str] = BlockingJob()
    running = asyncio.ensure_future(job.run(work))
    await wait_until(polling.is_set, message="the work polling")
    job.cancel()
    assert await running == "stopped early"


async def test_cancelling_the_awaiting_task_tells_the_work_to_stop(ui: UiBundle) -> None:
    polling, stopped = threading.Event(), threading.Event()

    def work(job: BlockingJob[None]) -> None:
        polling.set()
        while not job.cancelled():
            threading.Event().wait(0.005)
        stopped.set()

    owner = QObject()
    job: BlockingJob[None] = BlockingJob()
    task = ui.tasks.run(job.run(work), key="import", owner=owner)
    await wait_until(polling.is_set, message="the work polling")
    ui.tasks.cancel("import", owner=owner)
    await wait_until(stopped.is_set, message="the work told to stop")
    assert task.cancelled()


async def test_what_an_abandoned_start_started_is_undone_once(ui: UiBundle) -> None:
    started, release, undone = threading.Event(), threading.Event(), []

    def start() -> str:
        started.set()
        release.wait(10)
        return "listener"

    job: BlockingJob[str] = BlockingJob()
    caller = asyncio.ensure_future(job.run(lambda _job: start(), undo=undone.append))
    await wait_until(started.is_set, message="the start under way")
    caller.cancel()  # the caller goes away while the start is under way
    with pytest.raises(asyncio.CancelledError):
        await caller
    release.set()
    await job.settle()
    assert undone == ["listener"]
    await job.settle()
    assert undone == ["listener"]  # settled again: not undone twice


async def test_off_thread_returns_the_result_and_raises_the_error(ui: UiBundle) -> None:
    assert await off_thread(threading.get_ident) != threading.get_ident()

    def fails() -> None:
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        await off_thread(fails)


# ---- callbacks from threads of their own ---------------------------------------------------


async def test_a_thread_s_callback_runs_on_the_gui_thread_unless_its_owner_is_gone(
    ui: UiBundle,
) -> None:
    loop = asyncio.get_running_loop()
    gone, here = QObject(), QObject()
    ran: list[tuple[str, int]] = []
    to_gone = to_gui_thread(loop, gone, lambda name: ran.append((name, threading.get_ident())))
    to_here = to_gui_thread(loop, here, lambda name: ran.append((name, threading.get_ident())))
    shiboken6.delete(gone)
    caller = threading.Thread(target=lambda: (to_gone("gone"), to_here("here")))
    caller.start()
    caller.join(10)
    await wait_until(lambda: ran, message="the living owner's callback")
    assert ran == [("here", threading.get_ident())]  # posted after the other: the loop keeps order


# ---- store reads -------------------------------------------------------------------------------


@pytest.fixture
def numbers(tmp_path: Path) -> Path:
    path = tmp_path / "numbers.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE items (n INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO items VALUES (?)", [(n,) for n in range(10)])
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def reads(ui: UiBundle, numbers: Path) -> Iterator[StoreReads]:
    reads = StoreReads(numbers, "test")
    yield reads
    reads.close()


def count(reading: Reading) -> int:
    return int(reading.sql.execute("SELECT COUNT(*) FROM items").fetchone()[0])


def gated(gate: threading.Event, value: str) -> Any:
    def read(reading: Reading) -> str:
        gate.wait(10)
        count(reading)
        return value

    return read


def held_read() -> tuple[threading.Event, threading.Event, Any]:
    """A read that says it started, then counts once the gate opens: (started, gate, read)."""
    started, gate = threading.Event(), threading.Event()

    def held(reading: Reading) -> int:
        started.set()
        gate.wait(10)
        return count(reading)

    return started, gate, held


def collect(answers: Answers) -> Any:
    def answer(result: Any, error: BaseException | None) -> None:
        answers.append((result, error))

    return answer


async def test_a_read_runs_on_the_reader_and_is_answered_on_the_gui_thread(
    reads: StoreReads,
) -> None:
    threads: list[int] = []

    def read(reading: Reading) -> int:
        threads.append(threading.get_ident())
        return count(reading)

    answered: list[tuple[int, int]] = []
    reads.submit(read, lambda result, _error: answered.append((result, threading.get_ident())))
    await wait_until(lambda: answered, message="the answer")
    assert answered == [(10, threading.get_ident())]
    assert threads != [threading.get_ident()]


async def test_reads_superseded_before_they_answer_are_dropped(reads: StoreReads) -> None:
    gate = threading.Event()
    answers: Answers = []
    reads.submit(gated(gate, "running when superseded"), collect(answers))
    reads.submit(gated(gate, "queued when superseded"), collect(answers))
    reads.supersede()
    gate.set()
    reads.submit(gated(gate, "the new listing"), collect(answers))
    await wait_until(lambda: answers, message="the new read's answer")
    assert answers == [("the new listing", None)]


async def test_a_newer_read_of_the_same_key_drops_the_older(reads: StoreReads) -> None:
    gate = threading.Event()
    answers: Answers = []
    reads.submit(gated(gate, "first reload"), collect(answers), key="conversation")
    reads.submit(gated(gate, "unrelated"), collect(answers), key="other")
    reads.submit(gated(gate, "second reload"), collect(answers), key="conversation")
    gate.set()
    await wait_until(lambda: len(answers) == 2, message="two answers")
    assert answers == [("unrelated", None), ("second reload", None)]


async def test_supersede_interrupts_a_read_that_would_never_end(reads: StoreReads) -> None:
    started = threading.Event()
    errors: list[BaseException] = []

    def endless(reading: Reading) -> int:
        started.set()
        try:
            return int(
                reading.sql.execute(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                    "SELECT COUNT(*) FROM n"
                ).fetchone()[0]
            )
        except BaseException as exc:
            errors.append(exc)
            raise

    answers: Answers = []
    reads.submit(endless, collect(answers))
    await wait_until(started.is_set, message="the endless read running")
    reads.supersede()
    reads.submit(count, collect(answers))
    await wait_until(lambda: answers, message="the next read, once the endless one stopped")
    assert answers == [(10, None)]
    assert len(errors) == 1  # it was stopped, not left to run
    assert isinstance(errors[0], sqlite3.OperationalError)  # inside the reader, SQLite's


async def test_a_failed_read_answers_the_stores_error_not_the_engines(
    reads: StoreReads, numbers: Path
) -> None:
    answers: Answers = []

    def missing(reading: Reading) -> int:
        return int(reading.sql.execute("SELECT COUNT(*) FROM no_such_table").fetchone()[0])

    reads.submit(missing, collect(answers))
    await wait_until(lambda: answers, message="the failure")
    (result, error) = answers[0]
    assert result is None
    assert isinstance(error, StoreUnavailable)
    assert not isinstance(error, sqlite3.Error)
    assert "no such table: no_such_table" in str(error)


async def test_an_interrupted_read_that_was_not_superseded_says_so(reads: StoreReads) -> None:
    started = threading.Event()

    def endless(reading: Reading) -> int:
        started.set()
        found = reading.sql.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
        )
        return int(found.fetchone()[0])

    fetched = asyncio.ensure_future(reads.fetch(endless))
    await wait_until(started.is_set)
    reads._reader.interrupt()  # stopped without being superseded: the caller hears why
    with pytest.raises(ReadInterrupted):
        await fetched


async def test_fetch_awaits_a_read_and_a_dropped_one_is_cancelled(reads: StoreReads) -> None:
    assert await reads.fetch(count) == 10
    started, gate, held = held_read()
    waiting = asyncio.ensure_future(reads.fetch(held))
    await wait_until(started.is_set, message="the read running")
    reads.close()
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_a_closed_reader_answers_nothing_and_reads_nothing(
    reads: StoreReads, numbers: Path
) -> None:
    reads.close()
    ran: list[int] = []
    answers: Answers = []
    ticket = reads.submit(lambda reading: ran.append(count(reading)), collect(answers))
    assert ticket.cancelled  # refused at once: nothing was queued to run or answer later
    assert ran == []
    assert answers == []


def test_a_read_asked_after_the_consoles_loop_stopped_is_dropped_not_raised(
    qapp: QApplication, numbers: Path
) -> None:
    reads = StoreReads(numbers, "after-quit")  # no loop runs here: as after the console quit
    ran: list[int] = []
    answers: Answers = []
    try:
        ticket = reads.submit(lambda reading: ran.append(count(reading)), collect(answers))
    finally:
        reads.close()
    assert ticket.cancelled
    assert (ran, answers) == ([], [])


async def test_a_read_answering_after_its_owner_was_destroyed_is_dropped(
    ui: UiBundle, numbers: Path
) -> None:
    owner = QObject()
    reads = StoreReads(numbers, "owned", owner)
    started, gate, held = held_read()
    waiting = asyncio.ensure_future(reads.fetch(held))
    await wait_until(started.is_set, message="the read running")
    shiboken6.delete(owner)  # the owner and its reads deleted, never closed
    assert not shiboken6.isValid(reads)
    gate.set()  # the reader thread now hands in its answer
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 10)
    finally:
        reads.close()


async def test_a_read_of_an_in_memory_store_is_a_store_error(ui: UiBundle) -> None:
    reads = StoreReads(":memory:", "memory")
    try:
        with pytest.raises(StoreError, match="profile data file"):
            await reads.fetch(count)
    finally:
        reads.close()


# ---- reads asked for again, and a flow's hand-off -----------------------------------------------


async def test_requests_while_a_read_runs_are_coalesced_into_one_more(ui: UiBundle) -> None:
    started, gate, reads, done = threading.Event(), threading.Event(), [], []

    def read() -> int:
        started.set()
        gate.wait(10)
        reads.append(threading.get_ident())
        return len(reads)

    coalescing = CoalescingRead(read, done.append, "a count")
    coalescing.request()
    await wait_until(started.is_set, message="the first read under way")
    for _ in range(5):
        coalescing.request()  # while the first runs
    gate.set()
    await wait_until(lambda: not coalescing.busy, message="the reads over")
    assert done == [1, 2]
    assert threading.get_ident() not in reads


async def test_a_read_that_fails_leaves_the_coalescing_read_free_for_the_next_request(
    ui: UiBundle,
) -> None:
    answers: list[str] = []
    away = [True]

    def read() -> str:
        if away[0]:
            raise StoreUnavailable("the server is away")
        return "read"

    coalescing = CoalescingRead(read, answers.append, "the team's replies")
    coalescing.request()
    await wait_until(lambda: not coalescing.busy, message="the failed read over")
    assert answers == []
    away[0] = False
    coalescing.request()
    await wait_until(lambda: answers == ["read"], message="read on the next request")


async def test_a_stopped_coalescing_read_hands_nothing_over(ui: UiBundle) -> None:
    gate, answers = threading.Event(), []
    coalescing = CoalescingRead(lambda: gate.wait(10), answers.append, "a read")
    coalescing.request()
    coalescing.stop()
    gate.set()
    await wait_until(lambda: not coalescing.busy, message="the read dropped")
    coalescing.request()
    assert not coalescing.busy
    assert answers == []


async def test_settling_a_flows_hand_off_undoes_an_abandoned_start_and_stops_its_work(
    ui: UiBundle, numbers: Path
) -> None:
    owner = QObject()
    handoff = FlowHandoff(owner, numbers, "flow")
    started, release, undone = threading.Event(), threading.Event(), []

    def start() -> str:
        started.set()
        release.wait(10)
        return "listener"

    assert await handoff.read(count) == 10
    caller = asyncio.ensure_future(handoff.blocking(start, undo=undone.append))
    forever_started: list[str] = []
    handoff.background(forever(forever_started, "chore"), "a chore")
    await wait_until(started.is_set, message="the start under way")
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    release.set()

    await handoff.settle()

    assert undone == ["listener"]
    assert forever_started == ["chore"]
    with pytest.raises(asyncio.CancelledError):
        await handoff.read(count)  # closed: no answer comes
