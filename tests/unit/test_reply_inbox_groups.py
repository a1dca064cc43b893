"""The inbox's hand-offs: one per turn of a loop, each request answered with its own part,
a bad reply failing only its own request, and checkpoints finished between groups."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gwdesk.replies.inbox import InboxClosed, ReplyInbox
from gwdesk.store.replies import AddResult, IncomingReply, ReplyStore, WalCheckpoint

AT = datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)


def reply(text: str) -> IncomingReply:
    return IncomingReply("61412345678", "61400000000", text, AT)


class RefusingStore(ReplyStore):
    """A real store that refuses any group holding the text "bad" (as a store error would)."""

    def add(self, replies: Sequence[IncomingReply]) -> list[AddResult]:
        if any(r.text == "bad" for r in replies):
            raise ValueError("this reply cannot be stored")
        return super().add(replies)


class ShortCheckpoints(ReplyStore):
    """A real store whose first checkpoint says it left half of a long WAL behind; records
    the thread each checkpoint ran on."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.threads: list[str] = []
        self.taken = threading.Event()

    def checkpoint(self, *, wait: bool = True) -> WalCheckpoint | None:
        self.threads.append(threading.current_thread().name)
        done = super().checkpoint(wait=wait)
        self.taken.set()
        return WalCheckpoint(2000, 1000) if len(self.threads) == 1 else done


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ReplyStore]:
    opened = ReplyStore(tmp_path / "profile.sqlite3")
    yield opened
    opened.close()


async def test_requests_made_in_one_turn_of_a_loop_are_committed_together(
    store: ReplyStore,
) -> None:
    with ReplyInbox(store) as inbox:
        answers = await asyncio.gather(*(inbox.add_async([reply(str(i))]) for i in range(20)))
        assert inbox.stats.commits == 1
    assert [[r.reply.text for r in answer] for answer in answers] == [[str(i)] for i in range(20)]
    assert store.count() == 20


async def test_each_request_of_a_group_gets_its_own_replies_back(store: ReplyStore) -> None:
    with ReplyInbox(store) as inbox:
        one, two = await asyncio.gather(
            inbox.add_async([reply("a"), reply("b")]), inbox.add_async([reply("a"), reply("c")])
        )
    assert [(r.reply.text, r.new) for r in one] == [("a", True), ("b", True)]
    assert [(r.reply.text, r.new) for r in two] == [("a", False), ("c", True)]
    assert one[0].reply.id == two[0].reply.id


async def test_a_bad_reply_fails_only_its_own_request_in_a_group(tmp_path: Path) -> None:
    store = RefusingStore(tmp_path / "profile.sqlite3")
    with ReplyInbox(store) as inbox:
        outcomes = await asyncio.gather(
            inbox.add_async([reply("1")]),
            inbox.add_async([reply("bad")]),
            inbox.add_async([reply("2")]),
            return_exceptions=True,
        )
    assert isinstance(outcomes[1], ValueError)
    assert [r.reply.text for r in outcomes[0]] == ["1"]  # type: ignore[union-attr]
    assert [r.reply.text for r in outcomes[2]] == ["2"]  # type: ignore[union-attr]
    assert store.count() == 2
    store.close()


async def test_a_closed_inbox_refuses_async_requests_at_once(store: ReplyStore) -> None:
    inbox = ReplyInbox(store)
    with pytest.raises(InboxClosed):
        await inbox.add_async([reply("1")])


async def test_requests_gathered_when_the_inbox_closes_are_refused_not_lost(
    store: ReplyStore,
) -> None:
    inbox = ReplyInbox(store).start()
    pending = asyncio.ensure_future(inbox.add_async([reply("1")]))
    await asyncio.sleep(0)  # the request is gathered; its hand-off is the loop's next step
    inbox.close()
    with pytest.raises(InboxClosed):
        await pending
    assert store.count() == 0


def test_a_checkpoint_left_short_of_a_long_wal_is_finished_by_the_writer_after_its_next_group(
    tmp_path: Path,
) -> None:
    store = ShortCheckpoints(tmp_path / "profile.sqlite3")
    with ReplyInbox(store, checkpoint_every=0.01, wal_pages=0) as inbox:
        inbox.add([reply("1")])
        assert store.taken.wait(10)
        inbox.add([reply("2")])
        inbox.add([reply("3")])
    assert "gwdesk-reply-writer" in store.threads  # closing waited for the writer
    store.close()


def test_a_checkpoint_left_short_of_a_short_wal_is_left_to_the_next_one(tmp_path: Path) -> None:
    store = ShortCheckpoints(tmp_path / "profile.sqlite3")
    with ReplyInbox(store, checkpoint_every=0.01, wal_pages=5000) as inbox:
        inbox.add([reply("1")])
        assert store.taken.wait(10)
        inbox.add([reply("2")])
        inbox.add([reply("3")])
    assert "gwdesk-reply-writer" not in store.threads
    store.close()


def test_a_checkpoint_says_whether_it_copied_the_whole_wal(tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite3"
    store = ReplyStore(path)
    store.defer_checkpoints()
    store.add([reply("1")])
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM replies").fetchall()  # holds its view of the file
    store.add([reply("2")])
    first = store.checkpoint()
    assert first is not None
    assert not first.complete  # the frames after the reader's view stay in the WAL
    reader.execute("COMMIT")
    second = store.checkpoint()
    assert second is not None
    assert second.complete
    reader.close()
    store.close()
