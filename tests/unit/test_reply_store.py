"""The replies store and its group-committing inbox: once each, durable, in batches."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gwdesk.replies.feed import FeedBuffer, ReplyBatch
from gwdesk.replies.inbox import InboxClosed, ReplyInbox
from gwdesk.store.database import StoreBusy
from gwdesk.store.local import LocalStore
from gwdesk.store.replies import IncomingReply, ReplyStore

AT = datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)


def reply(text: str = "Yes please", **fields: object) -> IncomingReply:
    values: dict[str, object] = {
        "from_number": "61412345678",
        "to_number": "61400000000",
        "text": text,
        "received_at": AT,
    }
    values.update(fields)
    return IncomingReply(**values)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ReplyStore]:
    opened = ReplyStore(tmp_path / "profile.sqlite3")
    yield opened
    opened.close()


@pytest.fixture
def inbox(store: ReplyStore) -> Iterator[ReplyInbox]:
    with ReplyInbox(store) as running:
        yield running


def test_a_reply_is_stored_with_utc_whole_seconds(store: ReplyStore) -> None:
    sydney_time = (AT + timedelta(microseconds=900_000)).astimezone(ZoneInfo("Australia/Sydney"))
    [result] = store.add([reply(received_at=sydney_time)])
    assert result.new
    [stored] = store.latest()
    assert stored.received_at == AT
    assert stored.received_at.tzinfo == UTC


def test_the_same_reply_again_is_stored_once(store: ReplyStore) -> None:
    first = store.add([reply()])
    again = store.add([reply(), reply()])
    assert [r.new for r in first + again] == [True, False, False]
    assert {r.reply.id for r in first + again} == {first[0].reply.id}
    assert store.count() == 1


def test_a_reply_twice_in_one_group_is_new_once(store: ReplyStore) -> None:
    first, second = store.add([reply(), reply(message_id="M-1")])
    assert (first.new, second.new, second.updated) == (True, False, True)
    assert first.reply.id == second.reply.id
    assert second.reply.message_id == "M-1"
    assert store.count() == 1


def test_a_different_text_or_second_is_another_reply(store: ReplyStore) -> None:
    store.add([reply(), reply("No"), reply(received_at=AT + timedelta(seconds=1))])
    assert store.count() == 3


def test_a_later_copy_fills_in_the_message_it_answers(store: ReplyStore) -> None:
    store.add([reply()])
    [result] = store.add([reply(message_id="M-1", source="backfill")])
    assert (result.new, result.updated) == (False, True)
    assert result.reply.message_id == "M-1"
    assert result.reply.source == "webhook"
    [again] = store.add([reply(message_id="M-2")])
    assert (again.updated, again.reply.message_id) == (False, "M-1")


def test_a_bulk_insert_with_one_known_reply_still_tells_which_were_new(store: ReplyStore) -> None:
    store.add([reply("b")])
    results = store.add([reply("a"), reply("b"), reply("c")])
    assert [r.new for r in results] == [True, False, True]
    assert len({r.reply.id for r in results}) == 3
    assert sorted(r.text for r in store.latest()) == ["a", "b", "c"]


def test_bulk_inserted_replies_get_their_real_ids(store: ReplyStore) -> None:
    results = store.add([reply(str(i)) for i in range(50)])
    assert len({result.reply.id for result in results}) == 50
    for result in results:
        stored = store.get(result.reply.id)
        assert stored is not None
        assert stored.text == result.reply.text


def test_the_secret_is_made_once_and_kept_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite3"
    first = ReplyStore(path)
    secret = first.secret()
    assert secret == first.secret()
    first.close()
    again = ReplyStore(path)
    assert again.secret() == secret
    again.close()
    assert len(secret) >= 32


def test_the_listener_port_is_remembered(store: ReplyStore) -> None:
    assert store.remembered_port() is None
    store.remember_port(9123)
    assert store.remembered_port() == 9123


def test_a_conversation_lists_one_number_oldest_first(store: ReplyStore) -> None:
    store.add(
        [
            reply("2", received_at=AT + timedelta(seconds=5)),
            reply("1"),
            reply("x", from_number="999"),
        ]
    )
    assert [r.text for r in store.with_number("61412345678")] == ["1", "2"]


def test_search_matches_text_and_numbers_literally(store: ReplyStore) -> None:
    store.add([reply("100% sure"), reply("100 ways"), reply("hello", from_number="61499")])
    assert [r.text for r in store.search("0% s")] == ["100% sure"]
    assert [r.text for r in store.search("6149")] == ["hello"]


def test_seen_replies_leave_the_unseen_count(store: ReplyStore) -> None:
    results = store.add([reply("1"), reply("2"), reply("3")])
    assert store.unseen_count() == 3
    store.mark_seen(results[1].reply.id)
    assert store.unseen_count() == 1
    store.mark_seen(results[0].reply.id)  # a watermark never goes back
    assert store.seen_up_to() == results[1].reply.id


def test_local_store_has_the_replies_in_the_profile_file(tmp_path: Path) -> None:
    local = LocalStore(tmp_path / "p.sqlite3")
    local.replies.add([reply()])
    assert local.conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 1
    local.close()


# ---- the inbox -----------------------------------------------------------------------------


def test_concurrent_replies_are_committed_in_groups(store: ReplyStore, inbox: ReplyInbox) -> None:
    barrier = threading.Barrier(40)

    def send(i: int) -> None:
        barrier.wait()
        inbox.add([reply(f"r{i}")], timeout=10)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.count() == 40
    assert inbox.stats.stored == 40
    assert inbox.stats.commits < 40


async def test_add_async_returns_once_the_reply_is_committed(
    tmp_path: Path, inbox: ReplyInbox
) -> None:
    [result] = await inbox.add_async([reply()])
    other = sqlite3.connect(tmp_path / "profile.sqlite3")
    assert other.execute("SELECT id FROM replies").fetchall() == [(result.reply.id,)]
    other.close()


def test_subscribers_get_each_commit_as_a_batch(inbox: ReplyInbox) -> None:
    batches: list[ReplyBatch] = []
    inbox.subscribe(batches.append)
    inbox.add([reply("1"), reply("2")])
    inbox.add([reply("1")])
    inbox.add([reply("1", message_id="M-1")])
    assert [[r.text for r in b.new] for b in batches] == [["1", "2"], []]
    assert [r.message_id for r in batches[1].updated] == ["M-1"]


def test_a_failing_subscriber_does_not_stop_storing(inbox: ReplyInbox) -> None:
    def broken(batch: ReplyBatch) -> None:
        raise RuntimeError("view crashed")

    inbox.subscribe(broken)
    seen: list[ReplyBatch] = []
    inbox.subscribe(seen.append)
    [result] = inbox.add([reply()])
    assert result.new
    assert len(seen) == 1


def test_a_cancelled_subscription_gets_nothing_more(inbox: ReplyInbox) -> None:
    seen: list[ReplyBatch] = []
    with inbox.subscribe(seen.append):
        inbox.add([reply("1")])
    inbox.add([reply("2")])
    assert len(seen) == 1


def test_a_locked_file_fails_the_group_and_the_next_one_succeeds(tmp_path: Path) -> None:
    store = ReplyStore(tmp_path / "p.sqlite3", busy_timeout=0.05)
    blocker = sqlite3.connect(tmp_path / "p.sqlite3", isolation_level=None)
    with ReplyInbox(store) as inbox:
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreBusy, match="locked"):  # the store's error, not SQLite's
            inbox.add([reply()], timeout=5)
        blocker.execute("ROLLBACK")
        assert inbox.add([reply()], timeout=5)[0].new
    blocker.close()
    store.close()


def test_a_closed_inbox_refuses_instead_of_hanging(store: ReplyStore) -> None:
    inbox = ReplyInbox(store)
    with pytest.raises(InboxClosed):
        inbox.add([reply()])
    inbox.start()
    inbox.close()
    with pytest.raises(InboxClosed):
        inbox.add([reply()])


def test_closing_while_replies_arrive_loses_none_that_were_accepted(store: ReplyStore) -> None:
    inbox = ReplyInbox(store).start()
    outcomes: list[str] = []

    def send(i: int) -> None:
        try:
            inbox.add([reply(str(i))], timeout=10)
            outcomes.append("stored")
        except InboxClosed:
            outcomes.append("refused")

    threads = [threading.Thread(target=send, args=(i,)) for i in range(30)]
    for thread in threads:
        thread.start()
    inbox.close()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 30
    assert store.count() == outcomes.count("stored")


def test_a_feed_buffer_hands_over_everything_since_the_last_drain() -> None:
    buffer = FeedBuffer(capacity=3)
    stored = ReplyStore(":memory:")
    results = stored.add([reply(str(i)) for i in range(5)])
    buffer(ReplyBatch(tuple(r.reply for r in results[:2])))
    buffer(ReplyBatch(tuple(r.reply for r in results[2:])))
    drained = buffer.drain()
    assert [r.text for r in drained.new] == ["2", "3", "4"]
    assert drained.dropped == 2
    assert buffer.drain().new == []
    stored.close()


def test_a_running_inbox_takes_checkpoints_off_the_commit_path(
    tmp_path: Path, store: ReplyStore
) -> None:
    def threshold() -> int:
        return int(store._writer.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])

    main_file = tmp_path / "profile.sqlite3"
    with ReplyInbox(store, checkpoint_every=60) as inbox:
        assert threshold() == 0
        before = main_file.stat().st_size
        inbox.add([reply("x" * 2000 + str(i)) for i in range(200)])
        assert main_file.stat().st_size == before  # the pages wait in the WAL
        store.checkpoint()
        assert main_file.stat().st_size > before
    assert threshold() == 1000


def test_the_replies_package_never_imports_qt() -> None:
    probe = (
        "import sys, gwdesk.replies, gwdesk.cli.listen, gwdesk.store.replies; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
