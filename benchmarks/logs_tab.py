"""The Logs tab over a million cached records, offscreen, beside the SQLite floor.

    python -m benchmarks.logs_tab                   # builds a 1,000,000-record cache first
    python -m benchmarks.logs_tab --cache FILE      # reuse one (benchmarks.log_sync --keep-cache)
    python -m benchmarks.logs_tab --quick           # a smoke run in seconds

Opens the real `LogsTab` in a 1280x800 window (Qt offscreen, qasync loop) on the
cache and measures, from the operator's action until the rows are on screen
(fetched and painted):

- first rows: opening the tab until the newest records show;
- text filter ("appointment"), status filter (FAILED), sort by recipient (header
  click), scroll to the end;
- RSS: peak growth of the process over all of it.

Beside each, the floor: the same SQL (count, then the window of rows on screen)
on a fresh sqlite3 connection, no Qt. And the naive model for the first figure:
every row read into Python at once. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMainWindow

from gwdesk.domain.profile import Profile
from gwdesk.logs.cache import LogCache
from gwdesk.logs.query import LogFilter, LogQuery, LogSort, count, fetch_window
from gwdesk.logs.rows import FIELDS
from gwdesk.paths import AppPaths
from gwdesk.store.local import LocalStore
from gwdesk.store.reader import Reading, StoreReader
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.logs.tab import LogsTab
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme

TARGETS_MS = {
    "first_rows": 300,
    "text_filter": 150,
    "status_filter": 150,
    "sort": 500,
    "scroll_end": 100,
}
TO = next(i for i, f in enumerate(FIELDS) if f.column == "to_number")


def say(text: str) -> None:
    print(text, flush=True)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def build_cache(path: Path, messages: int, work: Path) -> None:
    from benchmarks.log_sync import first_sync
    from benchmarks.sandbox_throughput import sandbox_process
    from gwdesk.sandbox.seed import seed_account

    sandbox_db = work / "sandbox.sqlite3"
    say(f"building a cache of {messages:,} records: seeding a sandbox ...")
    seed_account(sandbox_db, messages, seed=1)
    with sandbox_process(sandbox_db, work / "sandbox.log") as base:
        say("... and syncing it")
        report, seconds = asyncio.run(first_sync(base, path))
    say(f"cache built: {report.new:,} records in {seconds:.1f} s")


async def until(predicate: Callable[[], bool], within: float = 60.0) -> None:
    deadline = time.perf_counter() + within
    while not predicate():
        if time.perf_counter() > deadline:
            raise SystemExit("timed out waiting for the tab")
        await asyncio.sleep(0.001)


def floor(path: Path, query: LogQuery, start: int | None, rows: int, counted: bool = True) -> float:
    """The same SQL on a fresh connection (ms): the count (unless the tab has it cached
    for this filter, `counted=False`), then the window on screen."""

    def timed(reading: Reading) -> float:
        total = count(reading, query.filter)
        began = time.perf_counter()
        if counted:
            total = count(reading, query.filter)
        first = max(0, total - rows) if start is None else start
        fetch_window(reading, query, (first // 500) * 500, 500, total)
        return (time.perf_counter() - began) * 1000

    with StoreReader(path) as reader:
        return reader.run(timed)


async def measure(path: Path, app: QApplication) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    theme = Theme(app)
    reporter = ErrorReporter(show_dialogs=False)
    tasks = TaskRunner(reporter)
    session = Session(AppPaths.default(), lambda *_: None)  # type: ignore[arg-type,return-value]
    store = LocalStore(path)
    records = LogCache(store).total()
    figures["records"] = records
    session.store = store
    session.profile = Profile(name="bench", rest_url="http://127.0.0.1:9", username="demo")
    window = QMainWindow()
    window.resize(1280, 800)
    window.show()
    await asyncio.sleep(0.05)
    rss_before = current_rss_mb()
    peak_before = rss_mb()

    began = time.perf_counter()
    tab = LogsTab(session, tasks, theme)
    tab.sync.stop()  # measure the table, not a sync (there is no gateway here)
    window.setCentralWidget(tab)
    model = tab.model
    assert model is not None
    visible = tab.visible_rows()

    async def shown(first: int | None = None) -> None:
        await until(lambda: not model.pending)
        start = tab.first_visible_row() if first is None else first
        await until(lambda: model.has_rows(start, start + visible - 1) and model.rowCount() > 0)
        tab.table.viewport().repaint()

    async def timed(name: str, action: Callable[[], None], query_floor: float) -> None:
        began = time.perf_counter()
        action()
        await shown()
        ms = (time.perf_counter() - began) * 1000
        figures[f"{name}_ms"] = round(ms, 1)
        figures[f"{name}_sqlite_floor_ms"] = round(query_floor, 1)
        figures[f"{name}_target_ms"] = TARGETS_MS[name]
        verdict = "ok" if ms < TARGETS_MS[name] else "OVER TARGET"
        say(
            f"{name.replace('_', ' ')}: {ms:,.0f} ms ({model.rowCount():,} rows; sqlite floor "
            f"{query_floor:,.0f} ms; target < {TARGETS_MS[name]} ms: {verdict})"
        )

    await shown(0)
    ms = (time.perf_counter() - began) * 1000
    figures.update(
        first_rows_ms=round(ms, 1),
        first_rows_sqlite_floor_ms=round(floor(path, LogQuery(), 0, visible), 1),
        first_rows_target_ms=TARGETS_MS["first_rows"],
    )
    say(
        f"first rows: {ms:,.0f} ms ({model.rowCount():,} rows; sqlite floor "
        f"{figures['first_rows_sqlite_floor_ms']:,.0f} ms; target < 300 ms)"
    )
    await until(lambda: tab.filters.status.findData("FAILED") > 0, within=120)  # stats loaded

    text = LogQuery(LogFilter(text="appointment"))

    def type_text() -> None:
        tab.filters.text.setText("appointment")
        tab.filters.flush()  # the debounce is the operator's pause, not the work

    await timed("text_filter", type_text, floor(path, text, 0, visible))
    tab.filters.clear()
    await shown(0)

    status = LogQuery(LogFilter(status="FAILED"))
    await timed(
        "status_filter",
        lambda: tab.filters.status.setCurrentIndex(tab.filters.status.findData("FAILED")),
        floor(path, status, 0, visible),
    )
    tab.filters.clear()
    await shown(0)

    by_recipient = LogQuery(sort=LogSort("to_number", descending=False))
    await timed(
        "sort",
        lambda: tab.table.sortByColumn(TO, Qt.SortOrder.AscendingOrder),
        floor(path, by_recipient, 0, visible, counted=False),  # same filter: count cached
    )
    await timed(
        "scroll_end",
        tab.table.scrollToBottom,
        floor(path, by_recipient, None, visible, counted=False),
    )
    assert model.message_id_at(model.rowCount() - 1) is not None

    figures["rss_growth_mb"] = round(max(rss_mb() - peak_before, current_rss_mb() - rss_before))
    figures["rss_growth_target_mb"] = 250
    figures["peak_rss_mb"] = round(rss_mb())
    say(
        f"RSS growth: {figures['rss_growth_mb']} MB (peak {figures['peak_rss_mb']} MB; target < 250 MB)"
    )
    if reporter.errors:
        raise SystemExit(f"the tab reported errors: {reporter.errors!r}")
    tab.close()
    window.close()
    await tasks.drain()
    store.close()
    return figures


def naive_load(path: Path) -> tuple[float, float]:
    """Every row into Python at once, as a list-backed model would: (seconds, MB)."""
    before = current_rss_mb()
    conn = sqlite3.connect(path)
    began = time.perf_counter()
    rows = conn.execute("SELECT * FROM log_records ORDER BY date_lodged DESC").fetchall()
    seconds = time.perf_counter() - began
    grown = current_rss_mb() - before
    del rows
    conn.close()
    return seconds, grown


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="gwdesk-logstab-") as folder:
        work = Path(folder)
        os.environ.setdefault("GWDESK_DATA_DIR", str(work / "data"))
        os.environ.setdefault("GWDESK_CONFIG_DIR", str(work / "config"))
        path = Path(args.cache) if args.cache else work / "profile.sqlite3"
        if not path.exists():
            build_cache(path, args.messages, work)
        app = QApplication.instance() or QApplication(sys.argv[:1])
        assert isinstance(app, QApplication)
        loop = qasync.QEventLoop(app)
        try:
            figures.update(loop.run_until_complete(measure(path, app)))
        finally:
            loop.close()
        seconds, grown = naive_load(path)
        figures["naive_load_all_s"] = round(seconds, 2)
        figures["naive_load_all_rss_mb"] = round(grown)
        say(
            f"naive model (every row read into Python first): {seconds:.1f} s before the first "
            f"row, {grown:,.0f} MB"
        )
    return figures


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.logs_tab")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--messages", type=int, default=None, metavar="N")
    parser.add_argument("--cache", default=None, metavar="FILE", help="a filled profile store")
    args = parser.parse_args(argv)
    if args.messages is None:
        args.messages = 5_000 if args.quick else 1_000_000
    if args.messages < 1:
        parser.error("--messages must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    figures = run(parse_args(argv))
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
