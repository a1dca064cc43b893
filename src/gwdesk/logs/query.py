"""The Logs tab's view of the cache as SQL: filters, sorts, counts and windows of rows.

Functions of a `Reading` (`gwdesk.store.reader`): the Logs tab runs them on its
reader, off the GUI thread, and never sees the SQL.

Nothing here holds rows beyond the window asked for: a view of a million records
is its filter and sort, its count (one `COUNT`) and whichever 500-row windows the
table is showing. A window is read with `LIMIT/OFFSET` from the nearer end of the
order (the reversed order for the second half), so the first and the last rows
cost the same and the worst case (the middle) walks half an index, ~20 ms for a
million rows. Every sort is `column, date_lodged, id` in one direction, which the
column's index `(column, date_lodged)` (plus the implicit rowid) serves as is.

Text search is FTS5: each word typed is a prefix term (`"bjo"*` finds "Björn":
diacritics are folded), all terms must match. Pieces that FTS cannot see (emoji and
other symbols, scripts written without spaces such as Chinese) are matched as a
substring (`LIKE`) instead: a full scan, but correct, and off the GUI thread.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, timedelta, tzinfo
from typing import Any, Final

from gwdesk.domain.number_search import NumberQuery, number_query
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.logs.rows import FIELD_BY_COLUMN, SELECT_COLUMNS, from_us
from gwdesk.store.reader import Reading as Reading  # what every query here is handed

SELECT_LIST: Final = ", ".join(SELECT_COLUMNS)
#: Columns with an index whose order a sort can walk instead of sorting.
INDEXED_SORTS: Final = frozenset(
    {"date_lodged", "date_sent", "status", "type", "to_number", "from_number", "message_id"}
)
#: Below this many matches, a text filter reads its matches and sorts them; above it,
#: it walks the sort column's index and keeps the rows that match.
FEW_MATCHES: Final = 20_000
QUARTER_HOUR_US: Final = 15 * 60 * 1_000_000
#: The chart shows at most this many days (the most recent ones of the view).
MAX_CHART_DAYS: Final = 400


@dataclass(frozen=True, slots=True)
class LogFilter:
    text: str = ""
    status: str | None = None
    type: str | None = None
    recipient: str = ""
    """The recipient's number as typed: national or international (its start) or a piece
    of it (`gwdesk.domain.number_search`)."""
    lodged_from: int | None = None
    """UTC µs, inclusive."""
    lodged_to: int | None = None
    """UTC µs, exclusive."""
    region: str = DEFAULT_REGION
    """Where a national number typed in `recipient` or `text` is read."""

    @property
    def is_empty(self) -> bool:
        return replace(self, region=DEFAULT_REGION) == LogFilter()


@dataclass(frozen=True, slots=True)
class LogSort:
    column: str = "date_lodged"
    descending: bool = True

    def __post_init__(self) -> None:
        if self.column not in FIELD_BY_COLUMN:
            raise ValueError(f"unknown log column {self.column!r}")


@dataclass(frozen=True, slots=True)
class LogQuery:
    filter: LogFilter = field(default_factory=LogFilter)
    sort: LogSort = field(default_factory=LogSort)


# ---- text -----------------------------------------------------------------------------------


def _is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def split_text(text: str) -> tuple[list[str], list[str]]:
    """(words for FTS prefix terms, pieces to match as substrings) of a search text."""
    words: list[str] = []
    substrings: list[str] = []
    for piece in text.split():
        tokens: list[str] = []
        current: list[str] = []
        literal = False
        for ch in piece:
            if ch.isalnum():
                if _is_wide(ch):
                    literal = True
                current.append(ch)
                continue
            if unicodedata.category(ch) in ("So", "Sk", "Co", "Cn"):
                literal = True  # emoji and the like: FTS's tokenizer drops them
            if current:
                tokens.append("".join(current))
                current = []
        if current:
            tokens.append("".join(current))
        if literal:
            substrings.append(piece)
        else:
            words.extend(tokens)
    return words, substrings


def fts_expression(words: list[str]) -> str:
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words)


def _like(piece: str) -> str:
    escaped = piece.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# ---- conditions ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Where:
    sql: str
    params: tuple[Any, ...]
    fts: str | None
    """The FTS expression, when the filter has words."""

    @property
    def text_only(self) -> bool:
        return self.fts is not None and self.sql == _FTS_DRIVE


_FTS_DRIVE: Final = "id IN (SELECT rowid FROM log_text WHERE log_text MATCH ?)"
_FTS_PROBE: Final = "+id IN (SELECT rowid FROM log_text WHERE log_text MATCH ?)"


def _to_number(query: NumberQuery) -> tuple[str, list[Any]]:
    """The recipient condition: the start of the stored digits by the index's range, or a
    piece anywhere in them."""
    if query.anchored:
        return ("(to_number >= ? AND to_number < ?)", [query.digits, query.digits + ":"])
    return ("to_number LIKE ?", [query.like])  # ':' above follows '9'; digits are no wildcard


def where(flt: LogFilter, *, probe_text: bool = False) -> Where:
    """The filter as SQL. `probe_text`: test rows against the FTS matches (many matches)
    rather than start from them (few)."""
    parts: list[str] = []
    params: list[Any] = []
    words, substrings = split_text(flt.text)
    fts = fts_expression(words) if words else None
    typed_number = number_query(flt.text, flt.region)
    if typed_number is not None and fts is not None:
        # A number typed where text goes: the recipient's number, or those digits in a message.
        number_sql, number_params = _to_number(typed_number)
        parts.append(f"({_FTS_PROBE} OR {number_sql})")
        params += [fts, *number_params]
        fts = None
    elif fts is not None:
        parts.append(_FTS_PROBE if probe_text else _FTS_DRIVE)
        params.append(fts)
    for piece in substrings:
        parts.append("(message LIKE ? ESCAPE '\\' OR subject LIKE ? ESCAPE '\\')")
        params += [_like(piece), _like(piece)]
    recipient = number_query(flt.recipient, flt.region, min_digits=1)
    if recipient is not None:
        number_sql, number_params = _to_number(recipient)
        parts.append(number_sql)
        params += number_params
    for condition, value in (
        ("status = ?", flt.status),
        ("type = ?", flt.type),
        ("date_lodged >= ?", flt.lodged_from),
        ("date_lodged < ?", flt.lodged_to),
    ):
        if value is not None:
            parts.append(condition)
            params.append(value)
    return Where(" AND ".join(parts) if parts else "1", tuple(params), fts)


def _order_columns(sort: LogSort) -> list[str]:
    if sort.column == "date_lodged":
        return ["date_lodged", "id"]
    return [sort.column, "date_lodged", "id"]


def order_by(sort: LogSort, *, reverse: bool = False) -> str:
    descending = sort.descending != reverse
    direction = " DESC" if descending else ""
    return ", ".join(c + direction for c in _order_columns(sort))


# ---- reading ---------------------------------------------------------------------------------


def count(reading: Reading, flt: LogFilter) -> int:
    """How many records the filter lets through."""
    cond = where(flt)
    if cond.text_only:
        row = reading.sql.execute(
            "SELECT COUNT(*) FROM log_text WHERE log_text MATCH ?", cond.params
        )
    else:
        row = reading.sql.execute(f"SELECT COUNT(*) FROM log_records WHERE {cond.sql}", cond.params)  # noqa: S608
    return int(row.fetchone()[0])


def _view_where(query: LogQuery, total: int) -> Where:
    probe = total > FEW_MATCHES and query.sort.column in INDEXED_SORTS
    return where(query.filter, probe_text=probe)


def fetch_window(
    reading: Reading, query: LogQuery, start: int, size: int, total: int
) -> list[tuple[Any, ...]]:
    """Rows `start … start+size-1` of the view (`SELECT_COLUMNS` order) of `total` rows."""
    size = min(size, total - start)
    if start < 0 or size <= 0:
        return []
    cond = _view_where(query, total)
    tail = total - (start + size)
    reverse = tail < start
    sql = (
        f"SELECT {SELECT_LIST} FROM log_records WHERE {cond.sql} "  # noqa: S608
        f"ORDER BY {order_by(query.sort, reverse=reverse)} LIMIT ? OFFSET ?"
    )
    rows = reading.sql.execute(sql, (*cond.params, size, tail if reverse else start)).fetchall()
    if reverse:
        rows.reverse()
    return rows


def _before(column: str, value: Any, descending: bool) -> tuple[str, tuple[Any, ...]] | None:
    """SQL for 'sorts strictly before `value`' on one column (NULLs sort first)."""
    if value is None:
        return None if not descending else (f"{column} IS NOT NULL", ())
    if descending:
        return (f"{column} > ?", (value,))
    return (f"({column} IS NULL OR {column} < ?)", (value,))


def _equal(column: str, value: Any) -> tuple[str, tuple[Any, ...]]:
    return (f"{column} IS NULL", ()) if value is None else (f"{column} = ?", (value,))


def position(reading: Reading, query: LogQuery, message_id: str, total: int) -> int | None:
    """The row of a record in the view, or None when the filter hides it (or it is gone)."""
    cond = _view_where(query, total)
    columns = _order_columns(query.sort)
    found = reading.sql.execute(
        f"SELECT {', '.join(columns)} FROM log_records "  # noqa: S608
        f"WHERE message_id = ? AND {cond.sql}",
        (message_id, *cond.params),
    ).fetchone()
    if found is None:
        return None
    terms: list[str] = []
    params: list[Any] = []
    prefix: list[tuple[str, tuple[Any, ...]]] = []
    for column, value in zip(columns, found, strict=True):
        before = _before(column, value, query.sort.descending)
        if before is not None:
            conditions = [cond.sql, *(p[0] for p in prefix), before[0]]
            terms.append(
                f"(SELECT COUNT(*) FROM log_records WHERE {' AND '.join(conditions)})"  # noqa: S608
            )
            params += [*cond.params]
            for p in prefix:
                params += p[1]
            params += before[1]
        prefix.append(_equal(column, value))
    if not terms:
        return 0
    return int(reading.sql.execute("SELECT " + " + ".join(terms), params).fetchone()[0])


def iter_view(
    reading: Reading, query: LogQuery, chunk: int = 5000
) -> Iterator[list[tuple[Any, ...]]]:
    """Every row of the view in order, a chunk at a time, from one statement (export)."""
    cond = where(query.filter, probe_text=query.sort.column in INDEXED_SORTS)
    cursor = reading.sql.execute(
        f"SELECT {SELECT_LIST} FROM log_records WHERE {cond.sql} "  # noqa: S608
        f"ORDER BY {order_by(query.sort)}",
        cond.params,
    )
    while True:
        rows = cursor.fetchmany(chunk)
        if not rows:
            return
        yield rows


def distinct(reading: Reading, column: str) -> list[tuple[str, int]]:
    """The values of `status` or `type` held, with how many records have each."""
    if column not in ("status", "type"):
        raise ValueError(f"no value list for column {column!r}")
    rows = reading.sql.execute(
        f"SELECT {column}, COUNT(*) FROM log_records WHERE {column} IS NOT NULL "  # noqa: S608
        f"GROUP BY {column} ORDER BY {column}"
    ).fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


#: Message ids asked about in one statement (SQLite's default limit is far above it).
STATUS_CHUNK: Final = 500


def statuses(reading: Reading, message_ids: Iterable[str]) -> dict[str, str]:
    """The status the cache holds of each of `message_ids` that it holds (one statement
    per `STATUS_CHUNK` ids): what views showing sends read after each sync."""
    wanted = sorted({m for m in message_ids if m})
    found: dict[str, str] = {}
    for start in range(0, len(wanted), STATUS_CHUNK):
        chunk = wanted[start : start + STATUS_CHUNK]
        marks = ", ".join("?" * len(chunk))
        for message_id, status in reading.sql.execute(
            f"SELECT message_id, status FROM log_records WHERE message_id IN ({marks})",  # noqa: S608
            chunk,
        ):
            if status:
                found[str(message_id)] = str(status)
    return found


# ---- chart -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DayCounts:
    """Records per local day and status over a view (days without records count 0)."""

    days: list[date]
    series: dict[str, list[int]]
    truncated: bool = False
    """True when the view spans more than `MAX_CHART_DAYS`: only the last ones are here."""

    def total(self, status: str | None = None) -> int:
        if status is not None:
            return sum(self.series.get(status, []))
        return sum(sum(v) for v in self.series.values())


def per_day(reading: Reading, flt: LogFilter, zone: tzinfo | None) -> DayCounts:
    """Messages per day (in `zone`; None: the system's) by status, one GROUP BY over quarter hours.

    Every zone's day starts on a UTC quarter hour, so quarter-hour groups fold into
    local days exactly, across daylight-saving changes, without a per-row date call.
    """
    cond = where(flt, probe_text=True)
    rows = reading.sql.execute(
        f"SELECT date_lodged / {QUARTER_HOUR_US} AS q, status, COUNT(*) "  # noqa: S608
        f"FROM log_records WHERE {cond.sql} GROUP BY q, status",
        cond.params,
    ).fetchall()
    by_day: dict[date, dict[str, int]] = {}
    for quarter, status, n in rows:
        day = from_us(int(quarter) * QUARTER_HOUR_US).astimezone(zone).date()
        counts = by_day.setdefault(day, {})
        counts[status] = counts.get(status, 0) + int(n)
    if not by_day:
        return DayCounts([], {})
    first, last = min(by_day), max(by_day)
    truncated = (last - first).days + 1 > MAX_CHART_DAYS
    if truncated:
        first = last - timedelta(days=MAX_CHART_DAYS - 1)
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    statuses = sorted({s for counts in by_day.values() for s in counts})
    series = {s: [by_day.get(d, {}).get(s, 0) for d in days] for s in statuses}
    return DayCounts(days, series, truncated)
