"""Exporting the Logs tab's current view to CSV on a worker thread, with progress and cancel.

The rows (possibly a million) stream from a read-only connection of the thread's
own (`gwdesk.logs.export`); progress and the outcome come back to the GUI
thread as queued signals.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import shiboken6
from PySide6.QtCore import QObject, Signal

from gwdesk.logs.cache import open_reader
from gwdesk.logs.export import ExportCancelled, export_csv
from gwdesk.logs.query import LogQuery

PROGRESS_EVERY: Final = 20_000


class LogExport(QObject):
    progress = Signal(int, int)
    """(rows written, rows in the view)."""
    finished = Signal(bool, str)
    """(ok, what happened, in words)."""

    def __init__(self, db: Path | str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._db = db
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, query: LogQuery, target: Path, columns: Sequence[str], total: int) -> None:
        if self.running:
            raise RuntimeError("an export is already running")
        self._cancel = threading.Event()
        cancel = self._cancel
        self._thread = threading.Thread(
            target=self._run,
            args=(query, target, list(columns), total, cancel),
            name="gwdesk-log-export",
            daemon=True,
        )
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def _say(self, ok: bool, text: str) -> None:
        if shiboken6.isValid(self):
            self.finished.emit(ok, text)

    def _run(
        self,
        query: LogQuery,
        target: Path,
        columns: list[str],
        total: int,
        cancel: threading.Event,
    ) -> None:
        last = [0]

        def progress(written: int) -> None:
            if written - last[0] >= PROGRESS_EVERY and shiboken6.isValid(self):
                last[0] = written
                self.progress.emit(written, total)

        try:
            conn = open_reader(self._db)
            try:
                written = export_csv(
                    conn,
                    query,
                    target,
                    columns=columns,
                    zone=None,  # the operator's zone, daylight saving included
                    progress=progress,
                    cancelled=cancel.is_set,
                )
            finally:
                conn.close()
        except ExportCancelled:
            self._say(False, "Export cancelled; no file was written.")
        except OSError as exc:
            self._say(False, f"Could not write {target.name}: {exc.strerror or exc}.")
        except sqlite3.Error as exc:
            self._say(False, f"Could not read the log cache: {exc}.")
        else:
            noun = "record" if written == 1 else "records"
            self._say(True, f"Exported {written:,} {noun} to {target}.")
