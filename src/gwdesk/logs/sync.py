"""Keeping the log cache in step with the gateway, in the background.

A sync has three steps; each batch of records is written, with the sync state that
describes it, in one transaction on a worker thread (`LogCacheWriter`), while the
event loop fetches the next page: fetching and writing overlap, and the GUI thread
only ever awaits.

1. **First sync, by pages.** `since` paging is a chain (each request needs the last
   answer's `dateLodged`), so it can never keep the gateway busy; `page=N` requests
   are independent. An empty cache is filled from `page=1, 2, …` (newest first,
   `PAGE_CONCURRENCY` requests in flight), parsed and written on the worker thread.
   Records lodged meanwhile push older ones onto later pages: that repeats records
   (stored once anyway) and never skips one while pages are served in order; the
   walk ends at the first short page, and a count check against page 1's
   `totalRecords` falls back to a full `since` walk if anything went missing. The
   resume point (pages done, page 1's newest record) is stored with every page, so
   an interrupted first sync resumes: records lodged since then shift the old pages
   by a number `since=<that record>` counts. Pages that arrive while a group is
   being written form the next group (one transaction, up to `COMMIT_EVERY` pages);
   a transaction is never left open across an await, because a GUI write to the
   same file (a draft) would then block the very loop the commit waits for. From
   `BULK_FROM` records the filter indexes are dropped and built once at the end,
   a third of the cost of keeping them in step row by row.
2. **New records, with `since`** (`GatewayService.sync_logs`): from the cursor (the
   newest `dateLodged` held, and the messageIds at it), oldest first.
3. **Status changes.** `since` never shows a record again when only its status
   changes, so the walk of step 2 starts earlier when one of the newest
   `REFRESH_WINDOW` records is still `ACTIVE`: from the oldest of those (bounded:
   at most that many records are re-read). Older `ACTIVE` records (scheduled, or
   stuck) are looked up by `message_id`, `LOOKUPS_PER_SYNC` per sync, least
   recently checked first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

from gwdesk.domain.errors import NotFoundError, ProtocolError
from gwdesk.gateway.service import GatewayService
from gwdesk.logs.cache import Backfill, LogCacheWriter, SyncState, WriteResult, now_us
from gwdesk.logs.rows import (
    Page,
    PageError,
    TimeReader,
    from_us,
    parse_page,
    time_us,
    to_row,
)

log = logging.getLogger("gwdesk.logs.sync")
T = TypeVar("T")
PAGE_CONCURRENCY: Final = 2
BATCH: Final = 1000
REFRESH_WINDOW: Final = 10_000
LOOKUPS_PER_SYNC: Final = 20
#: At most this many pages of a first sync are written in one transaction (see `_pages`).
COMMIT_EVERY: Final = 8
#: A first sync of at least this many records drops the filter indexes and builds
#: them at its end (`LogCacheWriter.drop_indexes`); a smaller one keeps them.
BULK_FROM: Final = 50_000


@dataclass(frozen=True, slots=True)
class SyncProgress:
    phase: str
    """One of "first sync", "indexing", "new records" or "status checks"."""
    done: int
    """Records received so far in this phase."""
    total: int | None
    """Records this phase expects, when the gateway said."""
    new: int
    updated: int


@dataclass(slots=True)
class SyncReport:
    new: int = 0
    updated: int = 0
    dropped: int = 0
    pages: int = 0
    checked: int = 0
    first: bool = False
    repaired: bool = False
    stalled: bool = False
    seconds: float = 0.0
    active_left: bool = False
    """One of the newest `REFRESH_WINDOW` records is still ACTIVE after the run: a
    status change is still to come (the console syncs again sooner after a send)."""

    def add(self, result: WriteResult) -> None:
        self.new += result.inserted
        self.updated += result.updated
        self.dropped += result.dropped

    def summary(self) -> str:
        parts = [f"{self.new:,} new", f"{self.updated:,} updated"]
        if self.dropped:
            parts.append(f"{self.dropped:,} unreadable skipped")
        if self.stalled:
            parts.append("stopped early: over a page of records share one time")
        return "Logs synced: " + ", ".join(parts)


Progress = Callable[[SyncProgress, SyncReport], None]


def convert(
    records: Iterable[Any], times: TimeReader, synced: int
) -> tuple[list[tuple[Any, ...]], int]:
    """Rows of the records that have an identity, and how many had none."""
    rows: list[tuple[Any, ...]] = []
    dropped = 0
    for record in records:
        row = to_row(record, times, synced)
        if row is None:
            dropped += 1
        else:
            rows.append(row)
    return rows, dropped


class LogCacheSync:
    """One sync run of one profile's cache: `await LogCacheSync(service, path).run()`."""

    def __init__(
        self,
        service: GatewayService,
        path: Path | str,
        *,
        progress: Progress | None = None,
        concurrency: int = PAGE_CONCURRENCY,
        refresh_window: int = REFRESH_WINDOW,
        lookups: int = LOOKUPS_PER_SYNC,
        bulk_from: int = BULK_FROM,
    ) -> None:
        self.service = service
        self.path = path
        self.zone = service.profile.zone
        self.times = TimeReader(self.zone)
        self.progress = progress
        self.concurrency = max(1, concurrency)
        self.refresh_window = refresh_window
        self.lookups = lookups
        self.bulk_from = bulk_from
        self.report = SyncReport()
        self._executor: ThreadPoolExecutor | None = None

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        assert self._executor is not None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, *args, **kwargs))

    def _tell(self, phase: str, done: int, total: int | None) -> None:
        if self.progress is not None:
            report = self.report
            self.progress(SyncProgress(phase, done, total, report.new, report.updated), report)

    async def run(self) -> SyncReport:
        started = time.perf_counter()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="gwdesk-log-writer")
        writer: LogCacheWriter | None = None
        try:
            writer = await self._call(LogCacheWriter, self.path)
            state = await self._call(writer.state)
            if state.backfill is None:
                await self._indexes(writer)  # after a crash between dropping and noting it
            if state.cursor is None:
                state = await self._first_sync(writer, state)
            if state.cursor is not None or self.report.repaired:
                await self._since(writer, state)
                await self._check_old_active(writer)
            await self._call(writer.write, [], finished=True)
            self.report.active_left = await self._call(self._any_recent_active, writer)
        finally:
            executor, self._executor = self._executor, None
            # After any write still under way (one worker, in order): commits what is open.
            closing = executor.submit(writer.close) if writer is not None else None
            executor.shutdown(wait=False)
            if closing is not None:
                await asyncio.wrap_future(closing)
        self.report.seconds = time.perf_counter() - started
        return self.report

    # ---- step 1: the first sync, by pages ----------------------------------------------------

    async def _page(self, number: int) -> bytes:
        return await self.service.log_page(number)

    def _write_first(self, writer: LogCacheWriter, body: bytes) -> tuple[Backfill | None, int]:
        page = _parse(body)
        rows, dropped = convert(page.records, self.times, now_us())
        if not rows:
            self.report.add(writer.write([], dropped=dropped))
            return None, len(page.records)
        newest = max(r[3] for r in rows)
        plan = Backfill(
            cursor=newest,
            at_cursor=tuple(sorted(r[0] for r in rows if r[3] == newest)),
            page_size=max(1, len(page.records)),
            total=page.total,
            pages_done=1,
        )
        self.report.add(writer.write(rows, backfill=plan, dropped=dropped))
        return plan, len(page.records)

    def _write_pages(
        self, writer: LogCacheWriter, plan: Backfill, pages: list[tuple[int, bytes]]
    ) -> list[int]:
        """Pages in one transaction (never held open across an await: see `_pages`)."""
        counts: list[int] = []
        try:
            for number, body in pages:
                page = _parse(body)
                rows, dropped = convert(page.records, self.times, now_us())
                done = Backfill(plan.cursor, plan.at_cursor, plan.page_size, plan.total, number)
                self.report.add(writer.write(rows, backfill=done, dropped=dropped, commit=False))
                counts.append(len(page.records))
                if len(page.records) < plan.page_size:
                    break  # the end: later pages (fetched ahead) are empty
        finally:
            writer.commit()
        return counts

    async def _first_sync(self, writer: LogCacheWriter, state: SyncState) -> SyncState:
        report = self.report
        report.first = True
        plan = state.backfill
        if plan is None:
            plan, received = await self._call(self._write_first, writer, await self._page(1))
            report.pages += 1
            if plan is None:
                return state  # an empty account: nothing to resume from
            self._tell("first sync", received, plan.total)
            start = 2
            if received >= plan.total:
                start = 0
            elif plan.total >= self.bulk_from:
                await self._call(writer.drop_indexes)
        else:
            newer = await self._newer_than(plan)
            start = (plan.pages_done * plan.page_size + newer) // plan.page_size + 1
        if start:
            await self._pages(writer, plan, start)
        await self._indexes(writer)
        held = await self._call(writer.count_through, plan.cursor)
        if held < plan.total:
            log.warning(
                "first log sync by pages holds %d of %d records; reading all with since",
                held,
                plan.total,
            )
            report.repaired = True
            await self._call(writer.write, [], backfill=None)
            return SyncState(None, frozenset(), None, None)
        cursor = (plan.cursor, plan.at_cursor)
        await self._call(writer.write, [], cursor=cursor, backfill=None)
        return SyncState(plan.cursor, frozenset(plan.at_cursor), None, None)

    async def _indexes(self, writer: LogCacheWriter) -> None:
        missing = await self._call(writer.missing_indexes)
        if missing:
            self._tell("indexing", 0, len(missing))
            await self._call(writer.ensure_indexes)
            self._tell("indexing", len(missing), len(missing))

    async def _newer_than(self, plan: Backfill) -> int:
        """Records lodged after the first sync's first page: how far its pages moved."""
        listing = await self.service.logs(since=from_us(plan.cursor))
        return max(0, listing.total_records - len(plan.at_cursor))

    async def _pages(self, writer: LogCacheWriter, plan: Backfill, start: int) -> None:
        """Pages `start, start+1, …` until a short one: fetched ahead, written in groups.

        The pages that arrived while the last group was being written are the next
        group (up to `COMMIT_EVERY`), written in one transaction by one worker call.
        A transaction never stays open while the event loop waits: a GUI write on
        the same file (a draft) would block the loop that the commit waits for.
        """
        queue: asyncio.Queue[tuple[int, bytes] | BaseException] = asyncio.Queue(COMMIT_EVERY)

        async def produce() -> None:
            in_flight: deque[tuple[int, asyncio.Task[bytes]]] = deque()
            number = start
            try:
                while True:
                    while len(in_flight) < self.concurrency:
                        in_flight.append((number, asyncio.ensure_future(self._page(number))))
                        number += 1
                    page, task = in_flight.popleft()
                    await queue.put((page, await task))
            except Exception as exc:  # handed to the consumer, which raises it
                await queue.put(exc)
            finally:
                for _, task in in_flight:
                    task.cancel()
                for _, task in in_flight:
                    with contextlib.suppress(BaseException):
                        await task

        producer = asyncio.ensure_future(produce())
        received = (start - 1) * plan.page_size
        try:
            while True:
                group = [await queue.get()]
                while not queue.empty() and len(group) < COMMIT_EVERY:
                    group.append(queue.get_nowait())
                pages = [item for item in group if not isinstance(item, BaseException)]
                counts = await self._call(self._write_pages, writer, plan, pages) if pages else []
                self.report.pages += len(counts)
                received += sum(counts)
                self._tell("first sync", received, max(plan.total, received))
                if any(count < plan.page_size for count in counts):
                    return
                for item in group:
                    if isinstance(item, BaseException):
                        raise item
        finally:
            producer.cancel()
            with contextlib.suppress(BaseException):
                await producer

    # ---- steps 2 and 3: since, and status changes --------------------------------------------

    def _write_records(
        self,
        writer: LogCacheWriter,
        records: Sequence[Any],
        *,
        cursor: tuple[int, frozenset[str]] | None = None,
        touch: Iterable[str] = (),
    ) -> WriteResult:
        rows, dropped = convert(records, self.times, now_us())
        result = writer.write(rows, cursor=cursor, advance_only=True, touch=touch, dropped=dropped)
        self.report.add(result)
        return result

    async def _since(self, writer: LogCacheWriter, state: SyncState) -> None:
        since, known = state.cursor, state.at_cursor
        window_start = await self._call(writer.recent_window, self.refresh_window)
        oldest_active = await self._call(writer.oldest_active, window_start)
        if since is not None and oldest_active is not None and oldest_active <= since:
            since, known = oldest_active, frozenset()
        walk = self.service.sync_logs(from_us(since) if since is not None else None, known)
        pending: Future[WriteResult] | None = None
        batch: list[Any] = []
        done = 0

        async def flush() -> None:
            nonlocal pending, batch
            if pending is not None:
                await asyncio.wrap_future(pending)
            assert self._executor is not None
            moment = time_us(walk.cursor, self.zone)
            cursor = None if moment is None else (moment, frozenset(walk.at_cursor))
            pending = self._executor.submit(
                partial(self._write_records, writer, batch, cursor=cursor)
            )
            batch = []

        try:
            async for record in walk:
                batch.append(record.model_dump(by_alias=True))
                done += 1
                if len(batch) >= BATCH:
                    await flush()
                    self._tell("new records", done, None)
            await flush()
        finally:
            if pending is not None:
                await asyncio.wrap_future(pending)
        self.report.pages += walk.pages
        self.report.stalled = walk.stalled
        self._tell("new records", done, done)

    def _any_recent_active(self, writer: LogCacheWriter) -> bool:
        start = writer.recent_window(self.refresh_window)
        return writer.oldest_active(start) is not None

    async def _check_old_active(self, writer: LogCacheWriter) -> None:
        window_start = await self._call(writer.recent_window, self.refresh_window)
        if window_start is None or self.lookups <= 0:
            return
        stale = await self._call(writer.stale_active, window_start, self.lookups)

        async def look_up(message_id: str) -> list[Any]:
            try:
                listing = await self.service.logs(message_id=message_id)
            except NotFoundError:
                return []
            return [r.model_dump(by_alias=True) for r in listing.messages]

        for start in range(0, len(stale), PAGE_CONCURRENCY * 2):
            ids = stale[start : start + PAGE_CONCURRENCY * 2]
            found = await asyncio.gather(*(look_up(m) for m in ids))
            records = [record for records in found for record in records]
            await self._call(self._write_records, writer, records, touch=ids)
            self.report.checked += len(ids)
            self._tell("status checks", start + len(ids), len(stale))


def _parse(body: bytes) -> Page:
    try:
        return parse_page(body)
    except PageError as exc:
        raise ProtocolError(str(exc), status=200, maybe_processed=False) from None
