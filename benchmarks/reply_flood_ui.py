"""The console under a reply flood: GUI-thread lag with the real Replies tab on screen.

    python -m benchmarks.reply_flood_ui                  # 30 s per run
    python -m benchmarks.reply_flood_ui --seconds 5      # a quick run

The console's own path, in one process as the console runs it: a `Session` whose
`ReplyHub` starts the listener (own thread and loop) and the group-committing
inbox, the hub's 100 ms drain, and the real `RepliesTab` (windowed SQLite model,
auto-scroll at the newest reply) shown offscreen at 1280x800 on a qasync loop.
The flood comes from another process (`benchmarks.reply_flood`'s client: many
keep-alive connections sending distinct `GET` reply webhooks as fast as they are
answered).

While it runs, a 10 ms timer on the GUI thread records how late each tick fires:
the lag an operator would feel (p50, p99, max). Afterwards the tab must show
every reply stored, and every acknowledged reply must be in the store.

The naive baseline is the same flood and listener with a view that does what a
first attempt would: one queued signal per reply, appended to a list model and
shown with a model reset and a scroll to the bottom for each. The floor is the
same flood with no view at all (the hub still drains): what the listener's own
threads cost the GUI thread in one process (the GIL, two cores shared with the
flooding client). The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMainWindow, QTableView

from benchmarks.reply_flood import Flood, flood, missing_acknowledged
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.paths import AppPaths
from gwdesk.replies import ReplyBatch
from gwdesk.store.replies import StoredReply
from gwdesk.ui.controller import default_service_factory
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.reply_state import ListenerState
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme

TICK_MS = 10
TARGET_LAG_P99_MS = 50.0


def say(line: str) -> None:
    print(line, flush=True)


class LagProbe(QObject):
    """A timer on the GUI thread; each tick's lateness is the lag an operator would feel."""

    def __init__(self) -> None:
        super().__init__()
        self.lags: list[float] = []
        self._last = 0.0
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lags.append(max(0.0, (now - self._last) * 1000 - TICK_MS))
        self._last = now

    def figures(self) -> dict[str, float]:
        ordered = sorted(self.lags) or [0.0]

        def at(fraction: float) -> float:
            return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 2)

        return {"ticks": len(self.lags), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)}


class NaiveModel(QAbstractTableModel):
    """Every reply in a Python list; the whole model reset for each one."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[StoredReply] = []

    def rowCount(self, parent: Any = QModelIndex()) -> int:  # noqa: B008
        return len(self.rows)

    def columnCount(self, parent: Any = QModelIndex()) -> int:  # noqa: B008
        return 4

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        reply = self.rows[index.row()]
        return (reply.received_at.isoformat(), reply.from_number, reply.to_number, reply.text)[
            index.column()
        ]

    def add(self, reply: StoredReply) -> None:
        self.beginResetModel()
        self.rows.append(reply)
        self.endResetModel()


class NaiveView(QObject):
    """One queued signal per reply from the writer thread, one reset and scroll per reply."""

    one = Signal(object)

    def __init__(self, table: QTableView) -> None:
        super().__init__()
        self.model = NaiveModel()
        self.table = table
        table.setModel(self.model)
        self.one.connect(self._show, Qt.ConnectionType.QueuedConnection)

    def feed(self, batch: ReplyBatch) -> None:
        for reply in batch.new:
            self.one.emit(reply)

    def _show(self, reply: StoredReply) -> None:
        self.model.add(reply)
        self.table.scrollToBottom()


async def poll(done: Callable[[], bool], every: float = 0.01) -> None:
    """Wait on state other threads and Qt change, keeping the loop (and Qt) running."""
    while not done():  # noqa: ASYNC110 - no event to wait on: threads and Qt set this state
        await asyncio.sleep(every)


def stored_count(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])
    finally:
        conn.close()


async def one_run(
    app: QApplication, work: Path, view: str, seconds: float, connections: int
) -> dict[str, Any]:
    """`view`: "tab" (the Replies tab), "naive" (the baseline) or "none" (the floor)."""
    os.environ["GWDESK_DATA_DIR"] = str(work / view)
    paths = AppPaths.default()
    theme = Theme(app)
    tasks = TaskRunner(ErrorReporter(show_dialogs=False))
    session = Session(paths, default_service_factory)
    profile = Profile(name="bench", rest_url="http://127.0.0.1:9", username="bench")
    await session.activate(profile, Secret("unused"))
    window = QMainWindow()
    window.resize(1280, 800)
    tab: RepliesTab | None = None
    naive_view: NaiveView | None = None
    if view == "naive":
        table = QTableView()
        window.setCentralWidget(table)
        naive_view = NaiveView(table)
    elif view == "tab":
        tab = RepliesTab(session, tasks, theme)
        window.setCentralWidget(tab)
    window.show()
    hub = session.replies
    status = await hub.start(0)
    if status.state is not ListenerState.LISTENING:
        raise SystemExit(f"the listener did not start: {status.long}")
    inbox = hub.inbox
    template = hub.template
    assert inbox is not None
    assert template is not None
    if naive_view is not None:
        inbox.subscribe(naive_view.feed)
    store_path = Path(session.store.path) if session.store else None
    assert store_path is not None
    await asyncio.sleep(0.3)

    outcome: list[tuple[Flood, list[list[int]]]] = []
    runner = threading.Thread(
        target=lambda: outcome.append(flood(template.base_url, seconds, connections)),
        name="flood",
    )
    probe = LagProbe()
    probe.start()
    runner.start()
    await poll(lambda: not runner.is_alive(), 0.05)
    probe.stop()
    stored = stored_count(store_path)
    caught_up = time.perf_counter()
    if tab is not None:
        model = tab.model
        await poll(lambda: model is None or (model.total >= stored and not model.pending))
        shown = model.total if model is not None else 0
    elif naive_view is not None:
        rows = naive_view.model.rows
        await poll(lambda: len(rows) >= stored or time.perf_counter() - caught_up > 120)
        shown = len(naive_view.model.rows)
    else:
        shown = stored
    behind_s = time.perf_counter() - caught_up
    batches = inbox.stats.commits
    await session.close()
    await tasks.drain()
    window.close()
    window.deleteLater()
    if not outcome:
        raise SystemExit("the flood did not complete")
    result, acked = outcome[0]
    return {
        "lag": probe.figures(),
        "acknowledged": result.acknowledged,
        "stored": stored,
        "stored_per_second": round(stored / result.seconds, 1),
        "ack_p50_ms": round(result.p50_ms, 2),
        "ack_p99_ms": round(result.p99_ms, 2),
        "refused": result.failures,
        "commits": batches,
        "shown": shown,
        "view_behind_s": round(behind_s, 2),
        "missing": missing_acknowledged(store_path, acked),
    }


def report(name: str, run: dict[str, Any]) -> None:
    lag = run["lag"]
    say(
        f"{name}: {run['stored_per_second']:,.0f} replies/s stored, ack p50 {run['ack_p50_ms']} ms "
        f"p99 {run['ack_p99_ms']} ms; GUI lag p50 {lag['p50_ms']} ms, p99 {lag['p99_ms']} ms, "
        f"max {lag['max_ms']} ms over {lag['ticks']:,} ticks"
    )
    say(
        f"{' ' * len(name)}  {run['shown']:,} of {run['stored']:,} shown, "
        f"{run['view_behind_s']} s behind at the end, {run['missing']} acknowledged missing"
    )


async def measure(app: QApplication, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    if not args.no_floor:
        figures["floor"] = await one_run(app, work, "none", args.seconds, args.connections)
        report("floor (no view)", figures["floor"])
    figures["replies_tab"] = await one_run(app, work, "tab", args.seconds, args.connections)
    report("Replies tab (batched)", figures["replies_tab"])
    if not args.no_baseline:
        figures["naive"] = await one_run(app, work, "naive", args.seconds, args.connections)
        report("naive (reset per reply)", figures["naive"])
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.reply_flood_ui", description=__doc__
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each flood")
    parser.add_argument("--connections", type=int, default=64, help="keep-alive connections")
    parser.add_argument("--no-baseline", action="store_true", help="skip the naive view")
    parser.add_argument("--no-floor", action="store_true", help="skip the run with no view at all")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.connections < 1:
        parser.error("--seconds and --connections must be positive")
    figures: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "seconds": args.seconds,
        "connections": args.connections,
    }
    with tempfile.TemporaryDirectory(prefix="gwdesk-flood-ui-") as temp:
        work = Path(temp)
        os.environ["GWDESK_CONFIG_DIR"] = str(work / "config")
        app = QApplication.instance() or QApplication(sys.argv[:1])
        assert isinstance(app, QApplication)
        # Each run closes its window; by default Qt quits when the last window closes, which
        # ends qasync's loop under the next run ("Event loop stopped before Future
        # completed"). The console turns it off for the same reason (`gwdesk.ui.app`).
        app.setQuitOnLastWindowClosed(False)
        loop = qasync.QEventLoop(app)
        try:
            figures.update(loop.run_until_complete(measure(app, args, work)))
        finally:
            loop.close()
    tab = figures["replies_tab"]
    met = tab["lag"]["p99_ms"] < TARGET_LAG_P99_MS and tab["missing"] == 0
    say(
        f"target:   GUI lag p99 < {TARGET_LAG_P99_MS:g} ms with the Replies tab: "
        + ("met" if met else "NOT met")
    )
    figures["targets_met"] = met
    print(json.dumps(figures), flush=True)
    return 0 if tab["missing"] == 0 and tab["shown"] == tab["stored"] else 1


if __name__ == "__main__":
    sys.exit(main())
