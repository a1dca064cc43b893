"""Exporting the Logs tab's current view to CSV as blocking work, with progress and cancel.

The rows (possibly a million) stream from a reader of the profile's file of the
work's own (`gwdesk.logs.export.export_view`) on a worker thread
(`tasks.BlockingJob`); progress and the outcome come back to the GUI thread as signals.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from PySide6.QtCore import QObject, Signal

from gwdesk.domain.errors import StoreError
from gwdesk.logs.export import ExportCancelled, export_view
from gwdesk.logs.query import LogQuery
from gwdesk.ui.tasks import BlockingJob, TaskRunner, alive

PROGRESS_EVERY: Final = 20_000


class LogExport(QObject):
    progress = Signal(int, int)
    """(rows written, rows in the view)."""
    finished = Signal(bool, str)
    """(ok, what happened, in words)."""

    def __init__(self, db: Path | str, tasks: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._db = db
        self._tasks = tasks
        self._job: BlockingJob[int] | None = None

    @property
    def running(self) -> bool:
        return self._job is not None

    def start(self, query: LogQuery, target: Path, columns: Sequence[str], total: int) -> None:
        if self.running:
            raise RuntimeError("an export is already running")
        job: BlockingJob[int] = BlockingJob(self._progressed)
        self._job = job
        self._tasks.run(
            self._run(job, query, target, list(columns), total),
            key="export",
            owner=self,
            context="exporting the logs",
        )

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()

    def _progressed(self, _phase: str, written: int, total: int) -> None:
        if alive(self):
            self.progress.emit(written, total)

    async def _run(
        self, job: BlockingJob[int], query: LogQuery, target: Path, columns: list[str], total: int
    ) -> None:
        db = self._db

        def work(job: BlockingJob[int]) -> int:
            report = job.progress("exporting")
            last = 0

            def progress(written: int) -> None:
                nonlocal last
                if written - last >= PROGRESS_EVERY:
                    last = written
                    report(written, total)

            return export_view(
                db,
                query,
                target,
                columns=columns,
                zone=None,  # the operator's zone, daylight saving included
                progress=progress,
                cancelled=job.cancelled,
            )

        try:
            written = await job.run(work)
        except ExportCancelled:
            self._say(False, "Export cancelled; no file was written.")
        except OSError as exc:
            self._say(False, f"Could not write {target.name}: {exc.strerror or exc}.")
        except StoreError as exc:
            self._say(False, f"Could not read the log cache: {exc}.")
        else:
            noun = "record" if written == 1 else "records"
            self._say(True, f"Exported {written:,} {noun} to {target}.")
        finally:
            if alive(self) and self._job is job:
                self._job = None

    def _say(self, ok: bool, text: str) -> None:
        if alive(self):
            self._job = None  # running no more when whoever listens hears it
            self.finished.emit(ok, text)
