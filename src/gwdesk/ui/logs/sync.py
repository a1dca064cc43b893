"""Runs the log cache sync in the background for the Logs tab, and says how it goes.

The sync itself (`gwdesk.logs.sync`) is Qt-free; this controller starts it
through the `TaskRunner`, repeats it every `interval_ms` while it lives, and turns its
progress into signals: a line for the tab, the same line (less often) in the status
bar via `Session.report`, and `committed` when new rows are in the cache so the
view can refresh. A tab cannot reach the status bar directly, hence the signals.
"""

from __future__ import annotations

import time
from typing import Final

from PySide6.QtCore import QObject, Signal

from gwdesk.domain.errors import GatewayError, StoreError
from gwdesk.logs.cache import keeps_cache
from gwdesk.logs.sync import LogCacheSync, SyncProgress, SyncReport
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.timers import single_shot

INTERVAL_MS: Final = 60_000
SYNC_TASK: Final = "sync"
#: How often progress reaches the tab (s), the status bar (s), and a refresh is asked for.
TAB_EVERY: Final = 0.2
STATUS_EVERY: Final = 1.0
COMMIT_EVERY: Final = 1.0


def describe(step: SyncProgress) -> str:
    if step.phase == "first sync":
        of = f" of {step.total:,}" if step.total else ""
        return f"First sync of the logs: {step.done:,}{of} records"
    if step.phase == "indexing":
        return "Indexing the log cache for filters and sorting…"
    if step.phase == "status checks":
        return f"Checking older ACTIVE records: {step.done:,} of {step.total or 0:,}"
    return f"Syncing logs: {step.new:,} new, {step.updated:,} updated"


class LogSyncController(QObject):
    """`start()` once a profile is active; `sync_now()`, `cancel()`, `stop()`."""

    progress = Signal(str)
    running_changed = Signal(bool)
    committed = Signal()
    """New or changed records are in the cache."""
    finished = Signal(bool, str)
    """(ok, what happened) at the end of each run."""

    def __init__(
        self,
        session: Session,
        tasks: TaskRunner,
        *,
        interval_ms: int = INTERVAL_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._session = session
        self._tasks = tasks
        self._timer = single_shot(self, interval_ms, self.sync_now)
        self._said = self._told = self._signalled = 0.0
        self.last: SyncReport | None = None
        self.enabled = False

    @property
    def running(self) -> bool:
        return self._tasks.running(SYNC_TASK, owner=self)

    def start(self) -> None:
        """Sync now and then every interval, until `stop()`."""
        self.enabled = True
        self.sync_now()

    def stop(self) -> None:
        self.enabled = False
        self._timer.stop()
        self._tasks.cancel(SYNC_TASK, owner=self)

    def sync_now(self) -> None:
        if self.running:
            return
        self._timer.stop()
        self._tasks.run(self._run(), key=SYNC_TASK, owner=self, context="log sync")

    def cancel(self) -> None:
        self._tasks.cancel(SYNC_TASK, owner=self)

    def _on_progress(self, step: SyncProgress, _report: SyncReport) -> None:
        now = time.monotonic()
        text = describe(step)
        if now - self._said >= TAB_EVERY:
            self._said = now
            self.progress.emit(text)
        if now - self._told >= STATUS_EVERY:
            self._told = now
            self._session.report(text, True)
        if now - self._signalled >= COMMIT_EVERY:
            self._signalled = now
            self.committed.emit()

    async def _run(self) -> None:
        try:
            service, store = self._session.require()
        except GatewayError as exc:
            self.finished.emit(False, exc.message)
            return
        if not keeps_cache(store.path):
            self.finished.emit(False, "This profile keeps no log cache (its store is in memory).")
            return
        self.running_changed.emit(True)
        self.progress.emit("Syncing logs…")
        ok, text = False, "Log sync cancelled."
        try:
            report = await LogCacheSync(service, store.path, progress=self._on_progress).run()
        except GatewayError as exc:
            text = f"Log sync failed: {exc.message}"
            self._session.report(text, False)
        except StoreError as exc:
            text = f"Log sync could not write the cache: {exc}."
            self._session.report(text, False)
        else:
            self.last = report
            ok, text = True, f"{report.summary()} ({time.strftime('%H:%M:%S')})"
            self._session.report(report.summary(), True)
        finally:
            if alive(self):  # the tab may be gone when a cancelled run ends
                self.running_changed.emit(False)
                self.committed.emit()
                self.progress.emit(text)
                self.finished.emit(ok, text)
                if self.enabled:
                    self._timer.start()
