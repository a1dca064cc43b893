"""The gateway's behaviour, independent of which face (REST or Lodge) asked.

Lodging, batches, status, logs, balance and credits, and replies live here; the REST and
Lodge modules only translate requests and results. Everything runs on the
server's event loop thread, so the single SQLite connection needs no locking.
"""

from __future__ import annotations

import json
import random
import secrets
import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal
from zoneinfo import ZoneInfo

from gwdesk.domain.segments import count_parts
from gwdesk.sandbox.db import Account, transaction

PAGE_SIZE: Final = 1000
SERVICE_REST: Final = 1
SERVICE_LODGE: Final = 2
#: What one part (or one MMS, one fax file) costs, in cents.
PRICE_CENTS: Final = {"SMS": 6, "WAP": 6, "MMS": 30, "FAX": 25}
#: The same in a prepaid account's message credits (a credit is about one SMS part).
PRICE_CREDITS: Final = {"SMS": 1, "WAP": 1, "MMS": 5, "FAX": 4}

MESSAGE_COLUMNS: Final = (
    "account_id, rank, message_id, type, status, lodged_us, sent_us, receipt_us, deliver_at_us, "
    "final_status, sender, costcentre, from_number, to_number, subject, message, parts, "
    "service_id, reply_type, reply_path, tracking_id, batch_tracking_id, batch_code, "
    "external_system_id, tags, url, attachments"
)


KEYWORD_TRAILING_PUNCTUATION: Final = ".,!?;:"


def keyword_of(text: str) -> str:
    """The reply's first word, upper-case, without trailing sentence punctuation."""
    words = text.split(maxsplit=1)
    return words[0].rstrip(KEYWORD_TRAILING_PUNCTUATION).upper() if words else ""


def now_us() -> int:
    return time.time_ns() // 1000


def us_to_datetime(value: int, zone: ZoneInfo) -> datetime:
    # One conversion (zone.fromutc) instead of via UTC then astimezone: same result,
    # a fifth less time, and log pages format three of these per record.
    return datetime.fromtimestamp(value / 1_000_000, tz=zone)


def iso(value: int | None, zone: ZoneInfo, timespec: str = "microseconds") -> str | None:
    """ISO 8601 with the zone's UTC offset; microseconds by default (unique per account)."""
    if value is None:
        return None
    return us_to_datetime(value, zone).isoformat(timespec=timespec)


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def datetime_to_us(moment: datetime) -> int:
    """Exact integer microseconds (a float timestamp loses the last digit after 2030)."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


@dataclass(slots=True)
class Attachment:
    file_name: str
    content_type: str
    size: int
    sha256: str


@dataclass(slots=True)
class Draft:
    """One message as a face understood it, before it has a recipient and an id."""

    type: str
    text: str
    service_id: int
    source: str | None = None
    send_at_us: int | None = None
    external_system_id: str | None = None
    tags: str | None = None
    reply_type: str = ""
    reply_path: str = ""
    subject: str | None = None
    url: str | None = None
    attachments: list[Attachment] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Draft:
        data = json.loads(text)
        data["attachments"] = [Attachment(**a) for a in data.get("attachments", [])]
        return cls(**data)

    def _cost(self, prices: dict[str, int]) -> int:
        if self.type == "FAX":
            return prices["FAX"] * max(1, len(self.attachments))
        if self.type in ("MMS", "WAP"):
            return prices[self.type]
        return prices["SMS"] * count_parts(self.text)

    @property
    def cost_cents(self) -> int:
        return self._cost(PRICE_CENTS)

    @property
    def cost_credits(self) -> int:
        return self._cost(PRICE_CREDITS)


class MessageIds:
    """`yyyyMMddHHmmss` (account zone) + 6 digits, unique within this process's run."""

    def __init__(self, zone: ZoneInfo, rng: random.Random) -> None:
        self._zone = zone
        self._rng = rng
        self._second = ""
        self._counter = 0

    def next(self, at_us: int) -> str:
        second = us_to_datetime(at_us, self._zone).strftime("%Y%m%d%H%M%S")
        if second != self._second:
            self._second = second
            self._counter = self._rng.randrange(0, 400_000)
        self._counter += 1
        return f"{second}{self._counter % 1_000_000:06d}"


@dataclass(frozen=True, slots=True)
class AccountFunds:
    name: str
    """The AccountName Account/Info answers: the username, unless the control API set one."""
    account_type: str
    """`prepaid` or `postpaid` (`db.ACCOUNT_TYPES`)."""
    type_name: str
    """The AccountType Account/Info answers: the type's own word (`Prepaid`), unless the
    control API set another."""
    balance: float
    currency: str
    credits: int | None
    """Message credits of a prepaid account; None for a postpaid one."""


@dataclass(slots=True)
class LogQuery:
    page: int | None = None
    since_us: int | None = None
    message_id: str | None = None
    batch_code: str | None = None
    recipient: str | None = None


class Engine:
    """The sandbox gateway's state machine over one SQLite connection."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        zone: ZoneInfo,
        rng: random.Random,
        *,
        simulate_delivery: bool = False,
        delivery_delay: tuple[float, float] = (1.0, 5.0),
        delivery_failure_rate: float = 0.05,
    ) -> None:
        self.conn = conn
        self.zone = zone
        self.rng = rng
        self.ids = MessageIds(zone, rng)
        self.simulate_delivery = simulate_delivery
        self.delivery_delay = delivery_delay
        self.delivery_failure_rate = delivery_failure_rate
        self.failing_numbers: frozenset[str] = frozenset()
        """Numbers (digits) whose every delivery fails, whatever the rate: a test or a
        demo names who fails (`PUT /sandbox/deliveries`)."""
        self.reply_listeners: list[Callable[[sqlite3.Row], None]] = []
        """Called with each new reply row (webhooks, keyword forwards)."""
        self.lodge_listeners: list[Callable[[sqlite3.Row], None]] = []
        """Called with each newly created message row (auto-reply)."""

    # ---- lodging -------------------------------------------------------------------------

    def _insert(
        self,
        account: Account,
        draft: Draft,
        recipient: str,
        batch: tuple[str, str] | None = None,
    ) -> sqlite3.Row:
        """Insert one message; the caller holds the transaction."""
        state = self.conn.execute(
            "SELECT message_count, last_lodged_us FROM accounts WHERE id = ?", (account.id,)
        ).fetchone()
        lodged = max(now_us(), state["last_lodged_us"] + 1)
        rank = state["message_count"] + 1
        sent = draft.send_at_us if draft.send_at_us and draft.send_at_us > lodged else lodged
        deliver_at = final = None
        if self.simulate_delivery:
            low, high = self.delivery_delay
            deliver_at = sent + int(self.rng.uniform(low, high) * 1_000_000)
            unlucky = self.rng.random() < self.delivery_failure_rate
            named = "".join(c for c in recipient if c.isdigit()) in self.failing_numbers
            final = "FAILED" if unlucky or named else "DELIVERED"
        if draft.reply_type == "HEADER":
            from_number = draft.reply_path
        else:
            from_number = draft.source or account.default_from
        attachments = (
            json.dumps([asdict(a) for a in draft.attachments]) if draft.attachments else None
        )
        values = (
            account.id, rank, "", draft.type, "ACTIVE", lodged, sent, None, deliver_at, final,
            account.username, "", from_number, recipient, draft.subject, draft.text,
            count_parts(draft.text) if draft.type == "SMS" else 1, draft.service_id,
            draft.reply_type, draft.reply_path, str(uuid.uuid4()),
            batch[1] if batch else None, batch[0] if batch else None,
            draft.external_system_id, draft.tags, draft.url, attachments,
        )  # fmt: skip
        for _ in range(20):
            message_id = self.ids.next(lodged)
            try:
                cursor = self.conn.execute(
                    f"INSERT INTO messages({MESSAGE_COLUMNS}) VALUES "  # noqa: S608 - constant columns
                    f"({', '.join('?' * len(values))})",
                    (*values[:2], message_id, *values[3:]),
                )
                break
            except sqlite3.IntegrityError:
                continue
        else:  # pragma: no cover - a million ids a second would be needed
            raise RuntimeError("could not allocate a unique MessageId")
        # A postpaid account's credits are NULL and stay so.
        self.conn.execute(
            "UPDATE accounts SET message_count = ?, last_lodged_us = ?, "
            "balance_cents = balance_cents - ?, message_credits = message_credits - ? "
            "WHERE id = ?",
            (rank, lodged, draft.cost_cents, draft.cost_credits, account.id),
        )
        row: sqlite3.Row = self.conn.execute(
            "SELECT * FROM messages WHERE id = ?", (cursor.lastrowid,)
        ).fetchone()
        return row

    def lodge(self, account: Account, draft: Draft, recipient: str) -> sqlite3.Row:
        """Create one message at once (single sends and every Lodge operation)."""
        with transaction(self.conn):
            row = self._insert(account, draft, recipient)
        self._notify(self.lodge_listeners, [row])
        return row

    def start_batch(self, account: Account, draft: Draft, recipients: Sequence[str]) -> str:
        """Record a batch to be loaded in the background; returns its BatchCode."""
        code = secrets.token_hex(10).upper()
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO batches(batch_code, account_id, tracking_id, template, recipients, "
                "total, created_us) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    code, account.id, str(uuid.uuid4()), draft.to_json(),
                    json.dumps(list(recipients)), len(recipients), now_us(),
                ),
            )  # fmt: skip
        return code

    def pending_batches(self) -> list[str]:
        rows = self.conn.execute("SELECT batch_code FROM batches WHERE done = 0 ORDER BY rowid")
        return [r["batch_code"] for r in rows]

    def load_batch_step(self, batch_code: str, step: int) -> bool:
        """Create up to `step` more messages of a batch; returns True when it is complete."""
        batch = self.conn.execute(
            "SELECT b.*, a.username, a.default_from FROM batches b "
            "JOIN accounts a ON a.id = b.account_id WHERE batch_code = ?",
            (batch_code,),
        ).fetchone()
        if batch is None or batch["done"]:
            return True
        account = Account(batch["account_id"], batch["username"], batch["default_from"])
        draft = Draft.from_json(batch["template"])
        recipients = json.loads(batch["recipients"])
        start = batch["created"]
        chunk = recipients[start : start + step]
        rows = []
        with transaction(self.conn):
            for recipient in chunk:
                rows.append(
                    self._insert(account, draft, recipient, (batch_code, batch["tracking_id"]))
                )
            created = start + len(chunk)
            done = created >= batch["total"]
            self.conn.execute(
                "UPDATE batches SET created = ?, done = ? WHERE batch_code = ?",
                (created, int(done), batch_code),
            )
        self._notify(self.lodge_listeners, rows)
        return bool(done)

    def settle_deliveries(self) -> int:
        """Apply simulated delivery receipts that are due; returns how many changed."""
        with transaction(self.conn):
            cursor = self.conn.execute(
                "UPDATE messages SET status = final_status, receipt_us = deliver_at_us "
                "WHERE deliver_at_us IS NOT NULL AND receipt_us IS NULL AND deliver_at_us <= ?",
                (now_us(),),
            )
        return cursor.rowcount

    # ---- queries -------------------------------------------------------------------------

    def message(self, message_id: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.conn.execute(
            "SELECT * FROM messages WHERE message_id = ?", (message_id,)
        ).fetchone()
        return row

    def status_by_message_id(self, account: Account, message_id: str) -> list[sqlite3.Row] | None:
        row = self.message(message_id)
        if row is None or row["account_id"] != account.id:
            return None
        return [row]

    def status_by_batch(self, account: Account, batch_code: str) -> list[sqlite3.Row] | None:
        batch = self.conn.execute(
            "SELECT account_id FROM batches WHERE batch_code = ?", (batch_code,)
        ).fetchone()
        if batch is None or batch["account_id"] != account.id:
            return None
        return self.conn.execute(
            "SELECT * FROM messages WHERE batch_code = ? ORDER BY rank", (batch_code,)
        ).fetchall()

    def batch_progress(self, batch_code: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.conn.execute(
            "SELECT total, created, done FROM batches WHERE batch_code = ?", (batch_code,)
        ).fetchone()
        return row

    def status_by_external_id(self, account: Account, external_id: str) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT * FROM messages WHERE account_id = ? AND external_system_id = ? ORDER BY rank",
            (account.id, external_id),
        ).fetchall()

    def logs(self, account: Account, query: LogQuery) -> tuple[int, list[sqlite3.Row]]:
        """One page of log records and the count of all records that fit (contract rules)."""
        conn = self.conn
        if query.since_us is not None:
            total_row = conn.execute(
                "SELECT message_count FROM accounts WHERE id = ?", (account.id,)
            ).fetchone()
            first = conn.execute(
                "SELECT rank FROM messages WHERE account_id = ? AND lodged_us >= ? "
                "ORDER BY lodged_us LIMIT 1",
                (account.id, query.since_us),
            ).fetchone()
            total = 0 if first is None else total_row["message_count"] - first["rank"] + 1
            rows = conn.execute(
                "SELECT * FROM messages WHERE account_id = ? AND lodged_us >= ? "
                "ORDER BY lodged_us, rank LIMIT ?",
                (account.id, query.since_us, PAGE_SIZE),
            ).fetchall()
            return (total, rows)
        if query.message_id is not None:
            rows = conn.execute(
                "SELECT * FROM messages WHERE account_id = ? AND message_id = ?",
                (account.id, query.message_id),
            ).fetchall()
            return (len(rows), rows)
        if query.batch_code is not None:
            return _first_page(conn, account, "batch_code", query.batch_code, "rank")
        if query.recipient is not None:
            return _first_page(conn, account, "to_number", query.recipient, "lodged_us")
        page = query.page or 1
        total = conn.execute(
            "SELECT message_count FROM accounts WHERE id = ?", (account.id,)
        ).fetchone()[0]
        top = total - (page - 1) * PAGE_SIZE
        rows = conn.execute(
            "SELECT * FROM messages WHERE account_id = ? AND rank <= ? AND rank > ? "
            "ORDER BY rank DESC",
            (account.id, top, top - PAGE_SIZE),
        ).fetchall()
        return (total, rows)

    def funds(self, account: Account) -> AccountFunds:
        """What both account resources (balance, Account/Info) report, read together."""
        row = self.conn.execute(
            "SELECT COALESCE(account_name, username) AS name, balance_cents, currency, "
            "account_type, type_name, message_credits FROM accounts WHERE id = ?",
            (account.id,),
        ).fetchone()
        return AccountFunds(
            name=row["name"],
            account_type=row["account_type"],
            type_name=(
                row["account_type"].capitalize() if row["type_name"] is None else row["type_name"]
            ),
            balance=row["balance_cents"] / 100,
            currency=row["currency"],
            credits=row["message_credits"],
        )

    # ---- replies -------------------------------------------------------------------------

    def create_reply(
        self,
        *,
        text: str,
        message: sqlite3.Row | None,
        account_id: int | None = None,
        from_number: str | None = None,
        to_number: str | None = None,
        sent_us: int | None = None,
    ) -> sqlite3.Row:
        """Record a customer's reply (to `message` when known) and tell the listeners."""
        received = now_us()
        if message is not None:
            account_id = message["account_id"]
            from_number = from_number or message["to_number"]
            to_number = to_number or message["from_number"]
        if account_id is None or not from_number or not to_number:
            raise ValueError("a reply needs its original message, or an account, from and to")
        keyword = keyword_of(text)
        reply_id = str(uuid.uuid4())
        with transaction(self.conn):
            cursor = self.conn.execute(
                "INSERT INTO replies(reply_id, account_id, message_id, from_number, to_number, "
                "text, keyword, sent_us, received_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    reply_id, account_id, message["message_id"] if message is not None else None,
                    from_number, to_number, text, keyword,
                    min(sent_us or received - 2_000_000, received), received,
                ),
            )  # fmt: skip
        row: sqlite3.Row = self.conn.execute(
            "SELECT * FROM replies WHERE id = ?", (cursor.lastrowid,)
        ).fetchone()
        self._notify(self.reply_listeners, [row])
        return row

    def replies_between(
        self, account: Account, start_us: int, end_us: int, page: int, page_size: int
    ) -> tuple[int, list[sqlite3.Row]]:
        total = self.conn.execute(
            "SELECT COUNT(*) FROM replies WHERE account_id = ? AND received_us >= ? "
            "AND received_us < ?",
            (account.id, start_us, end_us),
        ).fetchone()[0]
        rows = self.conn.execute(
            "SELECT * FROM replies WHERE account_id = ? AND received_us >= ? AND received_us < ? "
            "ORDER BY received_us, id LIMIT ? OFFSET ?",
            (account.id, start_us, end_us, page_size, (page - 1) * page_size),
        ).fetchall()
        return (total, rows)

    @staticmethod
    def _notify(listeners: list[Callable[[sqlite3.Row], None]], rows: list[sqlite3.Row]) -> None:
        for row in rows:
            for listener in listeners:
                listener(row)

    # ---- shapes --------------------------------------------------------------------------

    def log_record(self, row: sqlite3.Row) -> dict[str, Any]:
        """A log record with every field of the spec's table, in the spec's order."""
        return {
            "messageId": row["message_id"],
            "status": row["status"],
            "dateSent": iso(row["sent_us"], self.zone),
            "dateLodged": iso(row["lodged_us"], self.zone),
            "deliveryReceiptReceived": iso(row["receipt_us"], self.zone),
            "sender": row["sender"],
            "costcentre": row["costcentre"],
            "from": row["from_number"],
            "to": row["to_number"],
            "subject": row["subject"],
            "message": row["message"],
            "parts": row["parts"],
            "type": row["type"],
            "senderid": row["account_id"],
            "senderserviceid": row["service_id"],
            "replytype": row["reply_type"],
            "replypath": row["reply_path"],
            "trackingId": row["tracking_id"],
            "batchTrackingId": row["batch_tracking_id"],
        }

    @staticmethod
    def status_message(row: sqlite3.Row, *, full: bool = True) -> dict[str, Any]:
        """The Message object; ExternalSystemId and Tags only when they were supplied."""
        out: dict[str, Any] = {
            "PhoneNumber": row["to_number"],
            "MessageId": row["message_id"],
            "Status": row["status"],
        }
        if full and row["external_system_id"] is not None:
            out["ExternalSystemId"] = row["external_system_id"]
        if full and row["tags"] is not None:
            out["Tags"] = row["tags"]
        return out


def _first_page(
    conn: sqlite3.Connection,
    account: Account,
    column: Literal["batch_code", "to_number"],
    value: str,
    newest_by: Literal["rank", "lodged_us"],
) -> tuple[int, list[sqlite3.Row]]:
    """How many of the account's messages have `value` in `column`, and the newest page of
    them (newest by `newest_by`): the logs filtered by a batch or a recipient."""
    where = f"FROM messages WHERE account_id = ? AND {column} = ?"
    total = conn.execute(f"SELECT COUNT(*) {where}", (account.id, value)).fetchone()[0]
    rows = conn.execute(
        f"SELECT * {where} ORDER BY {newest_by} DESC LIMIT ?",
        (account.id, value, PAGE_SIZE),
    ).fetchall()
    return (total, rows)
