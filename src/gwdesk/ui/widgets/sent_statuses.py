"""A list of sends whose statuses follow the log: "Sent this session" never says ACTIVE forever.

`SentStatuses` watches the session's log sync (`ui.log_sync`): whenever it commits, the
statuses of the messages the list shows are read again from the log cache, by
MessageId, in one batched read on a reader thread (`StoreReads`), and the rows whose
status changed are repainted in place (`gwdesk.app.live_status.followed` says which).
A profile without a log cache (a store in memory) keeps what the sends said.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from PySide6.QtCore import QObject

from gwdesk.app.live_status import followed, sent_statuses, watched_ids
from gwdesk.domain.errors import StoreError
from gwdesk.logs.cache import keeps_cache
from gwdesk.ui.log_sync import session_sync
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import drop_connections
from gwdesk.ui.tasks import StoreReads, TaskRunner
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.history_view import HistoryView

log = logging.getLogger("gwdesk.ui.sent_statuses")
#: A sync commits about once a second while it writes: one read for a burst.
READ_AFTER_MS: Final = 250


class SentStatuses(QObject):
    """Keeps `view`'s statuses those the log cache holds (a child of the view)."""

    def __init__(self, view: HistoryView, session: Session, tasks: TaskRunner) -> None:
        super().__init__(view)
        self.view = view
        self.session = session
        self._reads: StoreReads | None = None
        self._path: object = None
        self._timer = single_shot(self, READ_AFTER_MS, self.read)
        sync = session_sync(session, tasks)
        connections = [
            (sync.committed, sync.committed.connect(self._timer.start)),
            (session.changed, session.changed.connect(self._session_changed)),
            (session.closing, session.closing.connect(self._closing)),
        ]
        # The sync and the session outlive the view: their connections go with it.
        self.destroyed.connect(lambda: drop_connections(connections))
        self._session_changed()

    def _session_changed(self) -> None:
        store = self.session.store
        path = store.path if store is not None and keeps_cache(store.path) else None
        if path == self._path:
            return
        self._closing()
        self._path = path
        if path is not None:
            self._reads = StoreReads(path, "sent statuses", self)
            self._timer.start()  # the list the tab shows now may be older than the cache

    def _closing(self) -> None:
        """The profile's store is closing (or another opens): no read of it is due."""
        self._timer.stop()
        self._path = None
        if self._reads is not None:
            self._reads.close()
            self._reads.deleteLater()
            self._reads = None

    def read(self) -> None:
        """Read the statuses of the messages listed (one batched read), then repaint."""
        reads, ids = self._reads, watched_ids(self.view.entries())
        if reads is None or not ids:
            return

        def answer(held: Any, error: BaseException | None) -> None:
            if isinstance(error, StoreError):  # kept as they were; the Logs tab says why
                log.warning("the statuses of this session's sends could not be read: %s", error)
                return
            if error is not None:
                raise error
            self.view.update_rows(followed(self.view.entries(), held))

        reads.submit(lambda reading: sent_statuses(reading, ids), answer, key="statuses")
