"""The log cache sync of the session, in the background, whatever tab is open.

The sync itself (`gwdesk.logs.sync`) is Qt-free; this controller starts it through
the `TaskRunner`, repeats it while it is enabled, and turns its progress into signals:
a line for the Logs tab, the same line (less often) in the status bar via
`Session.report`, `committed` when new or changed rows are in the cache (so the Logs
tab re-reads its view, and the views that show a send's status read the statuses
again) and `synced` with the report of each run that ended well.

The session has one (`session_sync`): the controller starts it when a profile is
connected, the Logs tab shows it, and it follows the session (a run of the previous
profile ends when the store closes; the next profile's starts). A send of this console
brings a sync soon after it (`sync_soon`: one for every send before it starts, never
one per message of a list), and syncs come every few seconds while a recent send's
status may still change (`gwdesk.app.live_status.SyncPace` decides when).
"""

from __future__ import annotations

import time
from typing import Final

from PySide6.QtCore import QObject, Signal

from gwdesk.app.live_status import SyncPace
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
    """`start()` once a profile is active; `sync_now()`, `sync_soon()`, `cancel()`, `stop()`.

    `follow`: the session's own sync (`session_sync`), which ends a run of the previous
    profile when its store closes, starts the next profile's, and is hurried by the
    session's sends."""

    progress = Signal(str)
    running_changed = Signal(bool)
    committed = Signal()
    """New or changed records are in the cache."""
    finished = Signal(bool, str)
    """(ok, what happened) at the end of each run."""
    synced = Signal(object)
    """The `SyncReport` of a run that ended well."""

    def __init__(
        self,
        session: Session,
        tasks: TaskRunner,
        *,
        interval_ms: int = INTERVAL_MS,
        follow: bool = False,
        pace: SyncPace | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._session = session
        self._tasks = tasks
        self.pace = pace or SyncPace(interval=interval_ms / 1000)
        self._timer = single_shot(self, interval_ms, self.sync_now)
        self._soon = single_shot(self, int(self.pace.soon * 1000), self._soon_due)
        self._again = False
        """A send ended while a run was under way: another run follows it soon."""
        self._store: object | None = None
        """The store the latest run fills."""
        self._generation = 0
        """Counts runs begun: a run superseded by a newer one (another profile's) ends
        without a word."""
        self._said = self._told = self._signalled = 0.0
        self.last: SyncReport | None = None
        self.enabled = False
        self.active = False
        """A run said it started (`running_changed(True)`) and has not ended yet: what a
        view made meanwhile shows (`running` is true from the moment one is asked for)."""
        if follow:
            session.changed.connect(self._session_changed)
            session.closing.connect(self._halt)
            session.sent.connect(lambda _outcome: self.sync_soon())

    @property
    def running(self) -> bool:
        return self._tasks.running(SYNC_TASK, owner=self)

    def start(self) -> None:
        """Sync now and then every interval, until `stop()`."""
        self.enabled = True
        self.sync_now()

    def stop(self) -> None:
        self.enabled = False
        self._halt()

    def _halt(self) -> None:
        """No run under way or due (the store is closing, or the sync was stopped)."""
        self._timer.stop()
        self._soon.stop()
        self._again = False
        self._tasks.cancel(SYNC_TASK, owner=self)

    def _session_changed(self) -> None:
        """Another profile (or none): a run of the previous one ends, the new one's starts."""
        store = self._session.store
        if self.running and self._store is store:
            return
        self._halt()
        if self.enabled and store is not None:
            self._begin()

    def sync_now(self) -> None:
        if self.running:
            return
        self._begin()

    def _begin(self) -> None:
        self._timer.stop()
        self._soon.stop()
        self._store = self._session.store
        self._generation += 1
        self._tasks.run(self._run(self._generation), key=SYNC_TASK, owner=self, context="log sync")

    def sync_soon(self) -> None:
        """A send of this console ended: a sync soon brings it (and those sent before it
        starts: one sync, not one per send). Only while the sync is enabled."""
        store = self._session.store
        if not self.enabled or store is None or not keeps_cache(store.path):
            return
        delay = self.pace.sent(time.monotonic())
        if not self._soon.isActive():
            self._soon.start(int(delay * 1000))

    def _soon_due(self) -> None:
        if self.running:
            self._again = True  # it may have read past the send already: once more after it
        else:
            self.sync_now()

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

    async def _run(self, generation: int) -> None:
        try:
            service, store = self._session.require()
        except GatewayError as exc:
            self.finished.emit(False, exc.message)
            return
        if not keeps_cache(store.path):
            self.finished.emit(False, "This profile keeps no log cache (its store is in memory).")
            return
        self.active = True
        self.running_changed.emit(True)
        self.progress.emit("Syncing logs…")
        ok, text = False, "Log sync cancelled."
        report: SyncReport | None = None
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
            # The tab may be gone when a cancelled run ends; a newer run says its own.
            if alive(self) and generation == self._generation:
                self._ended(ok, text, report)

    def _ended(self, ok: bool, text: str, report: SyncReport | None) -> None:
        self.active = False
        self.running_changed.emit(False)
        self.committed.emit()
        self.progress.emit(text)
        self.finished.emit(ok, text)
        if ok and report is not None:
            self.synced.emit(report)
        if not self.enabled:
            return
        if self._again:
            self._again = False
            self._soon.start(int(self.pace.soon * 1000))
        self._timer.start(int(self.pace.after(report if ok else None, time.monotonic()) * 1000))


def session_sync(session: Session, tasks: TaskRunner) -> LogSyncController:
    """The session's one log sync: made on the first ask (it lives as long as the session),
    started by whoever wants it running (the controller when a profile is connected, the
    Logs tab); views that show a send's status follow its `committed`."""
    sync = session.log_sync
    if not isinstance(sync, LogSyncController):
        sync = LogSyncController(session, tasks, follow=True, parent=session)
        session.log_sync = sync
    return sync
