"""How stored replies reach whoever shows them, in batches, from the writer's thread.

Callbacks run on the reply writer thread, right after the commit that stored the
batch and before the calls that brought it are answered `OK`: a GUI must not touch
its widgets there, only hand the batch over (a Qt signal, or the `FeedBuffer` a
100 ms timer drains) and return at once, since acknowledgements wait for it. A
failing subscriber is logged and skipped; it never stops replies being stored and
acknowledged.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from gwdesk.store.replies import StoredReply

log = logging.getLogger("gwdesk.replies.feed")
DEFAULT_BUFFER: Final = 10_000


@dataclass(frozen=True, slots=True)
class ReplyBatch:
    """What one commit changed: replies stored for the first time, and known ones that gained
    a field (the backfill's MessageId, say). A view upserts both by `id`."""

    new: tuple[StoredReply, ...]
    updated: tuple[StoredReply, ...] = ()

    def __len__(self) -> int:
        return len(self.new) + len(self.updated)


FeedCallback = Callable[[ReplyBatch], None]


class Subscription:
    """Returned by `subscribe`; `cancel()` (or leaving the `with` block) stops deliveries."""

    def __init__(self, feed: ReplyFeed, callback: FeedCallback) -> None:
        self._feed = feed
        self.callback = callback

    def cancel(self) -> None:
        self._feed._remove(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


class ReplyFeed:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: tuple[Subscription, ...] = ()

    def subscribe(self, callback: FeedCallback) -> Subscription:
        subscription = Subscription(self, callback)
        with self._lock:
            self._subscriptions = (*self._subscriptions, subscription)
        return subscription

    def _remove(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)

    def publish(self, batch: ReplyBatch) -> None:
        if not batch:
            return
        for subscription in self._subscriptions:  # a snapshot: (un)subscribing never blocks this
            try:
                subscription.callback(batch)
            except Exception:
                log.exception("a reply feed subscriber failed; it keeps its subscription")


@dataclass(frozen=True, slots=True)
class Drained:
    new: list[StoredReply]
    updated: list[StoredReply]
    dropped: int
    """Replies that did not fit the buffer: reload from the store (`ReplyStore.after`)."""


class FeedBuffer:
    """A bounded buffer to subscribe with, for a consumer that polls (a GUI timer).

    Under a flood the consumer takes everything that arrived since its last poll in
    one go; if it falls further behind than `capacity`, the oldest are dropped and
    counted rather than memory growing without bound.
    """

    def __init__(self, capacity: int = DEFAULT_BUFFER) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._new: deque[StoredReply] = deque()
        self._updated: list[StoredReply] = []
        self._dropped = 0

    def __call__(self, batch: ReplyBatch) -> None:
        with self._lock:
            self._new.extend(batch.new)
            self._updated.extend(batch.updated)
            overflow = len(self._new) - self.capacity
            for _ in range(max(overflow, 0)):
                self._new.popleft()
            self._dropped += max(overflow, 0)
            if len(self._updated) > self.capacity:
                self._dropped += len(self._updated) - self.capacity
                del self._updated[: len(self._updated) - self.capacity]

    def drain(self) -> Drained:
        with self._lock:
            drained = Drained(list(self._new), self._updated, self._dropped)
            self._new.clear()
            self._updated = []
            self._dropped = 0
        return drained
