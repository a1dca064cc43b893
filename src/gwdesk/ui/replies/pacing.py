"""Replies handed to the Replies table at most once a frame, and a slice at a time.

The hub drains every 100 ms, however many replies arrived; a drain after a busy
spell (or a flood faster than the table paints) can hold thousands. Appending them
all and painting the result in one go would hold the GUI thread for a long frame,
and every call into Python then waits for the GIL the listener's threads hold. So
`DeliveryPacer` gathers the hub's deliveries and hands the view one at a time: at
most one per frame (`FRAME_MS`), each with at most `SLICE_ROWS` new replies, in the
order they arrived, the rest in the frames that follow. A delivery's updates and
overflow (`updated`, `dropped`) ride with the slice that carries its last new reply,
so they apply once every row they may touch is in the table.

A lone delivery after a quiet spell is handed over at once (no frame to wait for).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from PySide6.QtCore import QObject

from gwdesk.ui.reply_state import ReplyDelivery
from gwdesk.ui.timers import single_shot

FRAME_MS: Final = 16
"""One frame at 60 Hz: the table changes at most this often."""
SLICE_ROWS: Final = 1000
"""New replies handed over in one frame at most (appending them stays a few ms)."""


class DeliveryPacer(QObject):
    """Deliveries in, at most one slice per frame out (to `show`), in arrival order."""

    def __init__(
        self,
        show: Callable[[ReplyDelivery], object],
        parent: QObject | None = None,
        *,
        frame_ms: int = FRAME_MS,
        slice_rows: int = SLICE_ROWS,
    ) -> None:
        super().__init__(parent)
        self._show = show
        self._frame_ms = frame_ms
        self._slice_rows = slice_rows
        self._waiting: deque[ReplyDelivery] = deque()
        self._taken = 0
        """New replies of the first waiting delivery already handed over."""
        self._last = -1.0
        self._timer = single_shot(self, frame_ms, self._hand_over)

    @property
    def waiting(self) -> int:
        """New replies not handed over yet."""
        return sum(len(d.new) for d in self._waiting) - self._taken

    @property
    def idle(self) -> bool:
        """Nothing waits: the view shows every delivery it was given."""
        return not self._waiting

    def add(self, delivery: ReplyDelivery) -> None:
        self._waiting.append(delivery)
        if self._timer.isActive():
            return
        wait = self._last + self._frame_ms / 1000 - time.monotonic()
        if wait <= 0:
            self._hand_over()
        else:
            self._timer.start(max(1, round(wait * 1000)))

    def clear(self) -> None:
        """Forget what waits (the view's listing was replaced: it reads the store anew)."""
        self._timer.stop()
        self._waiting.clear()
        self._taken = 0

    def _hand_over(self) -> None:
        piece = self._next_slice()
        if piece is None:
            if self._waiting:
                self._timer.start(self._frame_ms)
            return
        self._last = time.monotonic()
        if self._waiting:
            self._timer.start(self._frame_ms)
        self._show(piece)

    def _next_slice(self) -> ReplyDelivery | None:
        """Up to `slice_rows` new replies off the front, in order; a delivery's updates
        and overflow with its last new reply."""
        new: list[Any] = []  # the hub's `StoredReply`s
        updated: list[Any] = []
        dropped = 0
        room = self._slice_rows
        while self._waiting and room > 0:
            first = self._waiting[0]
            take = first.new[self._taken : self._taken + room]
            new.extend(take)
            room -= len(take)
            self._taken += len(take)
            if self._taken < len(first.new):
                break  # the rest of it next frame
            self._waiting.popleft()
            self._taken = 0
            updated.extend(first.updated)
            dropped += first.dropped
            if not first.new:
                room -= 1  # a delivery of updates only still counts towards the slice
        if not new and not updated and not dropped:
            return None
        return ReplyDelivery(tuple(new), tuple(updated), dropped)
