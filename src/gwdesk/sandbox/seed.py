"""Fast bulk seeding of realistic log records (`gwdesk-sandbox seed`).

The console's log browser, its cache and the benchmarks need an account with a
year of traffic, up to a million records, in seconds rather than hours. Rows are
generated in chunks from one seeded random stream and written with `executemany`,
one transaction per chunk, with `synchronous=OFF` for the duration. The account's
invariants hold afterwards: `lodged_us` strictly increasing, `rank` 1..n in that
order, `message_count`/`last_lodged_us` current, and MessageIds unique.
"""

from __future__ import annotations

import json
import sqlite3
import time
from array import array
from bisect import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from random import Random
from typing import Any, Final
from zoneinfo import ZoneInfo

from gwdesk.sandbox import seed_data as data
from gwdesk.sandbox.config import DEFAULT_PASSWORD, DEFAULT_TIMEZONE, DEFAULT_USERNAME
from gwdesk.sandbox.db import SCHEMA, Account, ensure_account, open_database, transaction
from gwdesk.sandbox.engine import MESSAGE_COLUMNS, SERVICE_LODGE, SERVICE_REST, now_us

Progress = Callable[[int, int], None]

CHUNK: Final = 10_000
SPAN_S: Final = 365 * 86_400
#: From this many new rows, indexes fed out of order are dropped and rebuilt once.
REBUILD_INDEX_AT: Final = 100_000
#: Page cache during a seed (KiB): interleaved inserts into a big table need it.
SEED_CACHE_KIB: Final = 256 * 1024
#: Share of sending events that are multi-recipient batches, and their sizes.
BATCH_SHARE: Final = 0.01
BATCH_SIZES: Final = (2, 3, 5, 10, 25, 50, 100)
BATCH_CUM_WEIGHTS: Final = (30, 50, 70, 85, 93, 98, 100)
#: Relative traffic by local hour (0-23) and weekday (Monday first).
HOUR_WEIGHTS: Final = (
    0.02, 0.01, 0.01, 0.01, 0.02, 0.05, 0.15, 0.40, 0.80, 1.00, 1.00, 0.95,
    0.85, 0.90, 1.00, 0.95, 0.85, 0.70, 0.55, 0.45, 0.35, 0.25, 0.12, 0.05,
)  # fmt: skip
DAY_WEIGHTS: Final = (1.0, 1.0, 1.0, 1.0, 0.95, 0.45, 0.30)
#: Message kinds of a single event: cumulative shares of
#: one-way SMS, two-way SMS, SMS with a HEADER sender name, WAP push, MMS, fax.
KIND_CUM: Final = (0.74, 0.84, 0.88, 0.91, 0.97, 1.0)
KINDS: Final = ("sms", "two_way", "header", "wap", "mms", "fax")
REPLY_SHARE: Final = 0.35
EARLIEST_END: Final = datetime(2001, 1, 1, tzinfo=UTC)
LATEST_END: Final = datetime(2100, 1, 1, tzinfo=UTC)
_MIXED: Final = -(10**9)

INSERT_MESSAGE: Final = (
    f"INSERT INTO messages({MESSAGE_COLUMNS}) VALUES "  # noqa: S608 - constant columns
    f"({', '.join('?' * len(MESSAGE_COLUMNS.split(',')))})"
)
INSERT_REPLY: Final = (
    "INSERT INTO replies(reply_id, account_id, message_id, from_number, to_number, text, "
    "keyword, sent_us, received_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_BATCH: Final = (
    "INSERT INTO batches(batch_code, account_id, tracking_id, template, recipients, total, "
    "created, created_us, done) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)"
)


@dataclass(frozen=True, slots=True)
class SeedReport:
    username: str
    account_id: int
    messages: int
    replies: int
    batches: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.messages / self.seconds if self.seconds > 0 else 0.0


def seed_account(
    db: str | Path,
    n: int,
    *,
    username: str = DEFAULT_USERNAME,
    password: str = DEFAULT_PASSWORD,
    timezone: str = DEFAULT_TIMEZONE,
    seed: int = 1,
    progress: Progress | None = None,
    end: datetime | None = None,
) -> SeedReport:
    """Add `n` records, spread over the year before `end` (default now), to an account.

    The account is created (or its password set) first. The same seed and `end`
    give the same records.
    """
    if end is not None and not EARLIEST_END <= end <= LATEST_END:
        raise ValueError(
            f"the end of a seed must lie from {EARLIEST_END:%Y} to {LATEST_END:%Y}, "
            "so that every record's time can be shown in any zone"
        )
    zone = ZoneInfo(timezone)
    conn = open_database(db)
    try:
        account = ensure_account(conn, username, password)
        end_us = now_us() if end is None else int(end.timestamp() * 1_000_000)
        return seed_connection(
            conn, account, n, zone=zone, seed=seed, end_us=end_us, progress=progress
        )
    finally:
        conn.close()


def seed_connection(
    conn: sqlite3.Connection,
    account: Account,
    n: int,
    *,
    zone: ZoneInfo,
    seed: int,
    end_us: int,
    progress: Progress | None = None,
    chunk_size: int = CHUNK,
) -> SeedReport:
    """Seed through an open sandbox connection (the loop thread's, if a sandbox runs)."""
    if n < 0:
        raise ValueError("the number of messages to seed must not be negative")
    started = time.perf_counter()
    rng = Random(seed)
    clock = _LocalClock(zone)
    times, sizes = _timeline(rng, n, end_us, clock)
    head = conn.execute(
        "SELECT message_count, last_lodged_us FROM accounts WHERE id = ?", (account.id,)
    ).fetchone()
    existing = int(head[0])
    overlap = existing > 0 and len(times) > 0 and times[0] <= int(head[1])
    taken_lodged: set[int] = set()
    if overlap:
        taken_lodged = {
            r[0]
            for r in conn.execute(
                "SELECT lodged_us FROM messages WHERE account_id = ?", (account.id,)
            )
        }
    writer = _Writer(conn, _drop_list(n, overlap))
    rows = _Rows(rng, account, n, end_us, clock, existing, taken_lodged)
    done = 0
    try:
        for chunk in rows.chunks(times, sizes, chunk_size):
            writer.write(chunk)
            done += len(chunk.messages)
            if progress is not None:
                progress(done, n)
        if n:
            _finish_account(conn, account.id, overlap)
    finally:
        writer.finish()
    return SeedReport(
        account.username,
        account.id,
        n,
        rows.reply_count,
        rows.batch_count,
        time.perf_counter() - started,
    )


# ---- time line --------------------------------------------------------------------------------


class _LocalClock:
    """UTC offsets of the account's zone, cached per UTC hour (DST hours computed exactly)."""

    def __init__(self, zone: ZoneInfo) -> None:
        self.zone = zone
        self._hours: dict[int, int] = {}

    def _exact(self, second: int) -> int:
        offset = datetime.fromtimestamp(second, UTC).astimezone(self.zone).utcoffset()
        return int(offset.total_seconds()) if offset is not None else 0

    def offset(self, second: int) -> int:
        hour = second // 3600
        cached = self._hours.get(hour)
        if cached is None:
            start, stop = self._exact(hour * 3600), self._exact(hour * 3600 + 3599)
            cached = start if start == stop else _MIXED
            self._hours[hour] = cached
        return self._exact(second) if cached == _MIXED else cached


def _timeline(
    rng: Random, n: int, end_us: int, clock: _LocalClock
) -> tuple[array[int], array[int]]:
    """Sending events (times ascending, µs) and their sizes (1, or a batch's recipients).

    A Poisson process walked back from `end`, its rate following the local hour, the
    weekday and a gentle growth over the year: working-day peaks, quiet nights and
    weekends, and the oldest record about a year back. Each gap is a unit exponential
    spent against the rate hour by hour, so sparse seeds still keep to the rhythm.
    """
    weights = [d * h for d in DAY_WEIGHTS for h in HOUR_WEIGHTS]
    mean_weight = sum(weights) / len(weights) * 0.8  # 0.8: the mean of the growth factor
    mean_batch = (
        sum(
            size * (cum - prev)
            for size, cum, prev in zip(
                BATCH_SIZES, BATCH_CUM_WEIGHTS, (0, *BATCH_CUM_WEIGHTS), strict=False
            )
        )
        / BATCH_CUM_WEIGHTS[-1]
    )
    events = max(1.0, n / (1 - BATCH_SHARE + BATCH_SHARE * mean_batch))
    per_event = SPAN_S / events * mean_weight  # seconds per event at weight 1
    end_s = end_us / 1_000_000
    t = end_s - rng.uniform(1.0, 30.0)
    times: array[int] = array("q")
    sizes: array[int] = array("l")
    remaining = n
    random_, expovariate = rng.random, rng.expovariate
    while remaining > 0:
        size = 1
        if random_() < BATCH_SHARE:
            size = min(remaining, BATCH_SIZES[bisect(BATCH_CUM_WEIGHTS, random_() * 100)])
        times.append(int(t * 1_000_000))
        sizes.append(size)
        remaining -= size
        budget = expovariate(1.0)
        while True:
            second = int(t)
            local = t + clock.offset(second)
            into_hour = local % 3600
            if into_hour < 1e-6:  # on a boundary: step into the hour before
                t -= 1e-6
                continue
            day, hour = int(local // 86_400), int(local // 3600) % 24
            growth = 0.6 + 0.4 * max(0.0, 1 - (end_s - t) / SPAN_S)
            rate = weights[((day + 3) % 7) * 24 + hour] * growth / per_event  # day 0: Thursday
            if budget <= rate * into_hour:
                t -= budget / rate
                break
            budget -= rate * into_hour
            t -= into_hour
    times.reverse()
    sizes.reverse()
    return times, sizes


# ---- rows -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Chunk:
    messages: list[tuple[Any, ...]]
    replies: list[tuple[Any, ...]]
    batches: list[tuple[Any, ...]]


def _uuid(bits: int) -> str:
    h = f"{bits:032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


class _Rows:
    """Generates the records of each event; the draws are all from the seed's stream."""

    def __init__(
        self,
        rng: Random,
        account: Account,
        n: int,
        end_us: int,
        clock: _LocalClock,
        existing: int,
        taken_lodged: set[int],
    ) -> None:
        self.rng = rng
        self.account = account
        self.end_us = end_us
        self.clock = clock
        self.rank = existing
        self.taken_lodged = taken_lodged
        self.prev_lodged = 0
        self.reply_count = 0
        self.batch_count = 0
        self.numbers = [data.random_number(rng) for _ in range(max(50, min(n // 4, 200_000)))]
        self.sms = data.text_pool(rng, 8192 if n > 8192 else max(n, 64), data.SMS_TEMPLATES, 0.06)
        self.two_way = data.text_pool(rng, 1024, data.TWO_WAY_TEMPLATES, 0.0)
        self.media = {
            kind: data.media_pool(rng, 256, kind.upper()) for kind in ("wap", "mms", "fax")
        }
        self._second = -1
        self._prefix = ""
        self._counter = 0

    def chunks(self, times: array[int], sizes: array[int], size: int) -> Iterator[_Chunk]:
        chunk = _Chunk([], [], [])
        for at, count in zip(times, sizes, strict=True):
            self._event(chunk, at, count)
            if len(chunk.messages) >= size:
                yield chunk
                chunk = _Chunk([], [], [])
        if chunk.messages:
            yield chunk

    def _recipient(self) -> str:
        numbers = self.numbers
        return numbers[int(len(numbers) * self.rng.random() ** 2)]

    def _message_id(self, lodged_us: int) -> str:
        second = lodged_us // 1_000_000
        if second != self._second:
            self._second = second
            local = second + self.clock.offset(second)
            self._prefix = time.strftime("%Y%m%d%H%M%S", time.gmtime(local))
            self._counter = int(self.rng.random() * 400_000)
        self._counter += 1
        return f"{self._prefix}{self._counter % 1_000_000:06d}"

    def _draft(self, kind: str) -> dict[str, Any]:
        """What the messages of one event share: type, text, sender, routes, references."""
        rng = self.rng
        random_ = rng.random
        draft: dict[str, Any] = {
            "type": "SMS", "subject": None, "url": None, "attachments": None,
            "reply_type": "", "reply_path": "", "service_id": SERVICE_REST,
            "from": self.account.default_from, "external": None, "tags": None,
        }  # fmt: skip
        if kind in ("sms", "two_way", "header"):
            pool = self.two_way if kind == "two_way" else self.sms
            text = pool[int(len(pool) * random_())]
            draft["text"], draft["parts"] = text.body, text.parts
            if kind == "two_way":
                routes = data.REPLY_ROUTES
                draft["reply_type"], draft["reply_path"] = routes[int(len(routes) * random_())]
            elif kind == "header":
                name = data.HEADER_NAMES[int(len(data.HEADER_NAMES) * random_())]
                draft["reply_type"], draft["reply_path"], draft["from"] = "HEADER", name, name
            elif random_() < 0.15:
                draft["from"] = data.SOURCES[int(len(data.SOURCES) * random_())]
            if random_() < 0.2:
                draft["service_id"] = SERVICE_LODGE
        else:
            media_pool = self.media[kind]
            media = media_pool[int(len(media_pool) * random_())]
            draft.update(
                type=media.type, text=media.text, parts=1, subject=media.subject,
                url=media.url, attachments=media.attachments, service_id=SERVICE_LODGE,
            )  # fmt: skip
        if draft["service_id"] == SERVICE_REST:
            if random_() < 0.15:
                prefix = rng.choice(data.EXTERNAL_PREFIXES)
                draft["external"] = f"{prefix}-{rng.randrange(1, 10_000_000):07d}"
            if random_() < 0.15:
                draft["tags"] = ",".join(rng.sample(data.TAGS, rng.randrange(1, 4)))
        centres = data.COST_CENTRES
        draft["costcentre"] = centres[int(len(centres) * random_())] if random_() < 0.1 else ""
        # A few sends are scheduled (SendAt) from an hour to a week ahead.
        draft["delay_us"] = int(rng.uniform(3600, 7 * 86_400) * 1e6) if random_() < 0.01 else 0
        return draft

    def _event(self, chunk: _Chunk, at: int, count: int) -> None:
        rng = self.rng
        random_ = rng.random
        batch_code = batch_tracking = None
        if count > 1:
            kind = KINDS[bisect(KIND_CUM, random_() * KIND_CUM[2])]  # batches are SMS
            batch_code = f"{rng.getrandbits(80):020X}"
            batch_tracking = _uuid(rng.getrandbits(128))
        else:
            kind = KINDS[min(bisect(KIND_CUM, random_()), len(KINDS) - 1)]
        draft = self._draft(kind)
        recipients: list[str] = []
        account_id, username, end_us = self.account.id, self.account.username, self.end_us
        for member in range(count):
            lodged = at + member * int(50 + random_() * 350) + (member // 25) * 20_000
            if lodged <= self.prev_lodged:
                lodged = self.prev_lodged + 1
            while lodged in self.taken_lodged:
                lodged += 1
            self.prev_lodged = lodged
            self.rank += 1
            to_number = self._recipient()
            recipients.append(to_number)
            sent = lodged + draft["delay_us"]
            status, receipt = "ACTIVE", None
            if sent <= end_us:
                roll = random_()
                if roll >= 0.02:  # 2% never get a receipt
                    candidate = sent + int((1.5 + rng.expovariate(1 / 8.0)) * 1e6)
                    if candidate <= end_us:
                        receipt = candidate
                        status = "FAILED" if roll < 0.07 else "DELIVERED"
            message_id = self._message_id(lodged)
            chunk.messages.append(
                (
                    account_id, self.rank, message_id, draft["type"], status, lodged, sent,
                    receipt, None, None, username, draft["costcentre"], draft["from"], to_number,
                    draft["subject"], draft["text"], draft["parts"], draft["service_id"],
                    draft["reply_type"], draft["reply_path"], _uuid(rng.getrandbits(128)),
                    batch_tracking, batch_code, draft["external"], draft["tags"], draft["url"],
                    draft["attachments"],
                )
            )  # fmt: skip
            if kind == "two_way" and status == "DELIVERED" and random_() < REPLY_SHARE:
                self._reply(chunk, message_id, to_number, draft["from"], receipt or sent)
        if batch_code is not None:
            self.batch_count += 1
            template = {
                "type": "SMS", "text": draft["text"], "service_id": draft["service_id"],
                "source": None if draft["from"] == self.account.default_from else draft["from"],
                "send_at_us": at + draft["delay_us"] if draft["delay_us"] else None,
                "external_system_id": draft["external"], "tags": draft["tags"],
                "reply_type": draft["reply_type"], "reply_path": draft["reply_path"],
                "subject": None, "url": None, "attachments": [],
            }  # fmt: skip
            chunk.batches.append(
                (
                    batch_code, account_id, batch_tracking, json.dumps(template),
                    json.dumps(recipients), count, count, at,
                )
            )  # fmt: skip

    def _reply(self, chunk: _Chunk, message_id: str, customer: str, ours: str, after: int) -> None:
        rng = self.rng
        sent = after + int(rng.expovariate(1 / 1200.0) * 1e6)
        received = sent + int(rng.uniform(1.0, 5.0) * 1e6)
        if received > self.end_us:
            return
        text = rng.choice(data.REPLY_TEXTS)
        words = text.split()
        chunk.replies.append(
            (
                _uuid(rng.getrandbits(128)), self.account.id, message_id, customer, ours, text,
                words[0].upper() if words else "", sent, received,
            )
        )  # fmt: skip
        self.reply_count += 1


# ---- writing ----------------------------------------------------------------------------------


class _Writer:
    """Writes chunks, each in one transaction, keeping MessageIds unique across the table."""

    def __init__(self, conn: sqlite3.Connection, drop: tuple[str, ...]) -> None:
        self.conn = conn
        self.synchronous = conn.execute("PRAGMA synchronous").fetchone()[0]
        self.cache_size = conn.execute("PRAGMA cache_size").fetchone()[0]
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute(f"PRAGMA cache_size={-SEED_CACHE_KIB}")
        # Indexes whose keys arrive out of order cost a random B-tree insert per row;
        # building them once afterwards (CREATE INDEX sorts) is several times cheaper.
        self.dropped = drop
        for name in drop:
            conn.execute(f"DROP INDEX IF EXISTS {name}")

    def write(self, chunk: _Chunk) -> None:
        messages = _unique_ids(self.conn, chunk.messages)
        with transaction(self.conn):
            self.conn.executemany(INSERT_MESSAGE, messages)
            if chunk.replies:
                self.conn.executemany(INSERT_REPLY, chunk.replies)
            if chunk.batches:
                self.conn.executemany(INSERT_BATCH, chunk.batches)

    def finish(self) -> None:
        if self.dropped:
            self.conn.executescript(SCHEMA)  # every index there is CREATE ... IF NOT EXISTS
        self.conn.execute(f"PRAGMA cache_size={int(self.cache_size)}")
        self.conn.execute(f"PRAGMA synchronous={int(self.synchronous)}")


def _unique_ids(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Move any MessageId that clashes (with the table or within the chunk) to a free one."""
    ids = [row[2] for row in rows]
    low, high = min(ids)[:14] + "000000", max(ids)[:14] + "999999"
    taken = {r[0] for r in conn.execute(
        "SELECT message_id FROM messages WHERE message_id BETWEEN ? AND ?", (low, high)
    )}  # fmt: skip
    if not taken and len(set(ids)) == len(ids):
        return rows
    seen = set(taken)
    out = []
    for row in rows:
        message_id = row[2]
        if message_id in seen:
            prefix, counter = message_id[:14], int(message_id[14:])
            while message_id in seen:
                counter = (counter + 1) % 1_000_000
                message_id = f"{prefix}{counter:06d}"
            row = (*row[:2], message_id, *row[3:])
        seen.add(message_id)
        out.append(row)
    return out


def _finish_account(conn: sqlite3.Connection, account_id: int, renumber: bool) -> None:
    """Counters, and ranks renumbered by lodging time when records were interleaved.

    The rank index is dropped at this point (see `_drop_list`), so the renumbering
    is one pass with no unique-index churn; `_Writer.finish` rebuilds the index.
    """
    with transaction(conn):
        if renumber:
            conn.execute(
                "UPDATE messages SET rank = ordered.r FROM (SELECT id, ROW_NUMBER() OVER "
                "(ORDER BY lodged_us, id) AS r FROM messages WHERE account_id = ?) AS ordered "
                "WHERE messages.id = ordered.id AND messages.rank != ordered.r",
                (account_id,),
            )
        conn.execute(
            "UPDATE accounts SET message_count = (SELECT COUNT(*) FROM messages WHERE account_id = ?),"
            " last_lodged_us = COALESCE((SELECT MAX(lodged_us) FROM messages WHERE account_id = ?),"
            " last_lodged_us) WHERE id = ?",
            (account_id, account_id, account_id),
        )


def _drop_list(n: int, overlap: bool) -> tuple[str, ...]:
    """Indexes to drop for the seed: the recipient one for big seeds, and when the new
    records interleave with old ones, the rank index (renumbered) and, if big, the
    lodging-time index (whose keys then arrive out of order too)."""
    drop: list[str] = []
    if n >= REBUILD_INDEX_AT:
        drop.append("messages_to")
    if overlap:
        drop.append("messages_rank")
        if n >= REBUILD_INDEX_AT:
            drop.append("messages_lodged")
    return tuple(drop)
