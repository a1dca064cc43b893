"""The Replies tab's table model: every stored reply, read from SQLite a window at a time.

Like the Logs tab's model (`windowed.WindowedModel`: fixed row count from an SQL
`COUNT`, windows of rows read on a worker thread, placeholders until they land),
plus live growth: a
`ReplyDelivery` whose replies all sort after the newest row shown (the live
case: replies received now) is appended in place with one `beginInsertRows`,
its rows put straight into the windows held, without reading anything back.
Only a delivery that lands among older rows (a backfill, a late retry) or one
that overflowed the feed asks for a re-read (`apply` says so), which keeps the
operator's place (`Anchor`) and costs one job and one reset however many rows
changed.

The Opt-out column reads each reply by the profile's keywords (STOP, START, or a
keyword later in the text: "mentions STOP", for the operator to read), and a number
on the opt-out list now is marked: both from memory (the reply's text, and one set
of opted-out numbers the tab refreshes when replies arrive), never a query per row.

A sender that is one of the profile's contacts shows the contact's name beside the
number. Names are remembered per number; the numbers a paint shows whose names are
not known yet are read together, once the paint is done (`ContactStore.names`, one
batched read on the reader thread), and land with one `dataChanged` over the rows of
those that are contacts (none for strangers: a flood from new numbers repaints nothing).

A paint under a flood must stay short: every call into Python from the view waits for
the GIL the listener's threads hold. So a row's cells (texts, colours) are worked out
once and looked up by the paints after it, until the row, the day, a name, the keywords
or the opt-out list change; and `index` is answered in one call, not Qt's two.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from enum import Enum
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from gwdesk.app.contact_editing import ContactStore
from gwdesk.app.handoff import Reading
from gwdesk.app.optouts import list_number
from gwdesk.app.profile_data import SharedData
from gwdesk.app.reply_inbox import (
    Listing,
    ReplyRow,
    ReplySearch,
    fetch_window,
    listing,
    position,
    row_of,
)
from gwdesk.domain.numbers import DEFAULT_REGION, display
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.optout_words import Reading as KeywordReading
from gwdesk.ui.formatting import local_time
from gwdesk.ui.models.windowed import WindowedModel
from gwdesk.ui.plain_text import tooltip, visible
from gwdesk.ui.replies.cells import OPTED_OUT_COLOUR, badge, badge_colour, one_line, row_texts
from gwdesk.ui.replies.cells import received_text as received_text  # where tests look
from gwdesk.ui.reply_state import ReplyDelivery
from gwdesk.ui.tasks import Read
from gwdesk.ui.timers import single_shot

Index = QModelIndex | QPersistentModelIndex
WINDOW: Final = 200
MAX_WINDOWS: Final = 30
PLACEHOLDER: Final = "…"
ROW_ROLE: Final = Qt.ItemDataRole.UserRole + 1
COLUMNS: Final = ("Received", "From", "To", "Message", "Opt-out", "In reply to")
COLUMN_TIPS: Final = (
    "When the gateway received the reply (your time)",
    "The customer's number, and their name when they are a contact (red: opted out now)",
    "The number they replied to (yours)",
    "What they wrote",
    'STOP or START: the reply opted the number out or back in; "mentions": a keyword '
    'later in the reply changed nothing, but read it; "opted out": the number is now',
    "The message they answered, when it is known (a backfill or keyword forward says)",
)
RECEIVED, FROM, TO, MESSAGE, OPT_OUT, IN_REPLY_TO = range(len(COLUMNS))
ROLES: Final = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.ForegroundRole,
        ROW_ROLE,
    }
)
DISPLAY_CACHE: Final = 4096
DISPLAY: Final = Qt.ItemDataRole.DisplayRole
FOREGROUND: Final = Qt.ItemDataRole.ForegroundRole
Painted = tuple[tuple[Any, Any], ...]
"""A row's cells as a paint asks for them: (text, colour) by column."""


class Applied(Enum):
    NOTHING = "nothing"
    APPENDED = "appended"
    REREAD = "reread"
    """The delivery does not fit at the end: call `refresh` (with the view's anchor)."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where the operator is, to be kept by a re-read."""

    at_bottom: bool = True
    top: tuple[str, int] | None = None
    """The key of the first visible row."""
    visible_rows: int = 40


@dataclass(frozen=True, slots=True)
class Refreshed:
    first_row: int
    at_bottom: bool


class RepliesTableModel(WindowedModel[ReplyRow]):
    """Stored replies matching a `ReplySearch`, oldest first, newest at the bottom."""

    loaded = Signal(int)
    """A new search's count and newest rows are in (the count)."""
    refreshed = Signal(object)
    """A re-read landed (`Refreshed`): where the view should be."""

    window_rows = WINDOW
    max_windows = MAX_WINDOWS
    partial_windows = True  # live deliveries grow the last window
    what = "The replies"

    def __init__(
        self, path: Path | str, parent: QObject | None = None, *, shared: SharedData | None = None
    ) -> None:
        super().__init__(path, "replies-table", parent, shared=shared)
        self.search = ReplySearch()
        self._last: tuple[str, int] | None = None
        self._numbers: dict[str, str] = {}
        self._painted_rows: dict[int, tuple[ReplyRow, Painted]] = {}
        """Each row's cells as painted, by reply id, with the row they were worked out for."""
        self._painted_day = date.min
        self._day = (0.0, date.min)
        self.muted: QColor | QBrush | None = None
        """The colour of the In reply to column (quieter than the reply itself)."""
        self.region = DEFAULT_REGION
        """How a national sender number is read (to find it on the opt-out list)."""
        self._keywords = Keywords()
        self._readings: dict[int, KeywordReading | None] = {}
        self._opted: frozenset[str] = frozenset()
        self._listed: dict[str, str] = {}
        self.pending = False
        """A search or a re-read is on its way (deliveries meanwhile are re-read after it)."""
        self._held: list[ReplyDelivery] = []
        self._again = False
        self.anchor: Callable[[], Anchor] = Anchor
        """Where the view is now (the tab sets it): what a re-read keeps in place."""
        self.contacts: ContactStore | None = None
        """The address book whose names show beside the senders' numbers."""
        self._names: dict[str, str] = {}
        """Contact name by sender number as the reply has it ("" for no contact)."""
        self._wanted_names: set[str] = set()
        self._asking: set[str] = set()
        self._names_timer = single_shot(self, 0, self._read_names)

    # ---- Qt ----------------------------------------------------------------------------------

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role not in ROLES:
            return None
        column = index.column()
        wanted = role != Qt.ItemDataRole.ForegroundRole or column in (FROM, OPT_OUT)
        row = self.row(index.row()) if wanted else None
        return self._value(row, column, role)

    def painted(self, row: ReplyRow) -> Painted:
        """What a paint shows of each cell of `row` (text, colour): worked out once per
        row and kept until the row, the day, a name or the opt-out marks change, so a
        repaint under a flood only looks them up."""
        today = self._today
        if today != self._painted_day:
            self._painted_day = today
            self._painted_rows.clear()  # yesterday's times gain their date
        held = self._painted_rows.get(row.id)
        if held is not None and held[0] is row:
            return held[1]
        if len(self._painted_rows) > DISPLAY_CACHE:
            self._painted_rows.clear()
        texts = row_texts(row, today, self._number)
        name = self.name(row.from_number)
        painted: Painted = (
            (texts[RECEIVED], None),
            (
                f"{one_line(name, 60)} · {texts[FROM]}" if name else texts[FROM],
                OPTED_OUT_COLOUR if self.opted_out_now(row) else None,
            ),
            (texts[TO], None),
            (texts[MESSAGE], None),
            (self._badge(row, False) or None, self._badge_colour(row)),
            (texts[IN_REPLY_TO], self.muted),
        )
        self._painted_rows[row.id] = (row, painted)  # a row read again (answers known) anew
        return painted

    def placeholder(self) -> Painted:
        """What a paint shows of a row not read yet."""
        return tuple(
            (self._value(None, column, DISPLAY), self._value(None, column, FOREGROUND))
            for column in range(len(COLUMNS))
        )

    def tip(self, row: ReplyRow, column: int) -> str | None:
        """A cell's tooltip (plain text shown as such, whatever the customer wrote)."""
        found = self._value(row, column, Qt.ItemDataRole.ToolTipRole)
        return found if isinstance(found, str) and found else None

    def _repaint_all(self) -> None:
        """Names, keywords or opt-out marks changed: every row's cells are worked out again."""
        self._painted_rows.clear()

    def _value(self, row: ReplyRow | None, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == IN_REPLY_TO:
                return self.muted
            if row is None:
                return None
            if column == FROM:
                return OPTED_OUT_COLOUR if self.opted_out_now(row) else None
            return self._badge_colour(row) if column == OPT_OUT else None
        if row is None:
            return PLACEHOLDER if role == Qt.ItemDataRole.DisplayRole and column == 0 else None
        if role == ROW_ROLE:
            return row
        if column == OPT_OUT:
            return self._badge(row, role == Qt.ItemDataRole.ToolTipRole) or None
        if role == Qt.ItemDataRole.ToolTipRole:
            # Customers and the gateway write these: never rich text (an <img> would load).
            if column == RECEIVED:
                return local_time(row.received_at)
            if column == MESSAGE:
                return tooltip(row.text[:2000])
            if column == IN_REPLY_TO:
                answered = row.answers or (f"MessageId {row.message_id}" if row.message_id else "")
                return tooltip(answered[:2000]) or None
            if column == FROM:
                name = self.name(row.from_number)
                contact = tooltip(f"{name} (a contact)") if name else ""
                if self.opted_out_now(row):
                    return (contact + " " if contact else "") + (
                        "This number is on the opt-out list now (Opt-outs tab: how and when)."
                    )
                return contact or None
            return None
        shown = row_texts(row, self._today, self._number)
        if column == FROM:
            name = self.name(row.from_number)
            return f"{one_line(name, 60)} · {shown[FROM]}" if name else shown[FROM]
        return shown[column]

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMN_TIPS[section]
        return None

    @property
    def _today(self) -> date:
        """The local date, looked up at most once a second (not once per cell painted)."""
        checked, today = self._day
        now = time.monotonic()
        if now - checked > 1.0:
            today = datetime.now().astimezone().date()
            self._day = (now, today)
        return today

    def _number(self, number: str) -> str:
        shown = self._numbers.get(number)
        if shown is None:
            if len(self._numbers) > DISPLAY_CACHE:
                self._numbers.clear()
            shown = self._numbers[number] = visible(display(number))
        return shown

    # ---- contacts' names --------------------------------------------------------------------

    def name(self, number: str) -> str:
        """The contact name beside a sender's number ("" while unknown or for none); an
        unknown one is read with the others of this paint."""
        found = self._names.get(number)
        if found is not None:
            return found
        if self.contacts is not None and number not in self._asking:
            self._wanted_names.add(number)
            if not self._names_timer.isActive():
                self._names_timer.start()
        return ""

    def forget_names(self) -> None:
        """The address book changed: the names are read again as rows are shown."""
        self._names.clear()
        self._asking.clear()
        self._repaint_all()
        if self._total:
            self.dataChanged.emit(self.index(0, FROM), self.index(self._total - 1, FROM))

    def _read_names(self) -> None:
        wanted, self._wanted_names = self._wanted_names, set()
        contacts = self.contacts
        if not wanted or contacts is None:
            return
        self._asking |= wanted
        region = self.region

        def read(_reading: Reading) -> dict[str, str]:
            # Each number read in list form here, off the GUI thread (a phonenumbers parse each).
            listed = {number: list_number(number, region) for number in wanted}
            names = contacts.names(set(listed.values()))
            return {number: names.get(key, "") for number, key in listed.items()}

        def done(result: Any, error: BaseException | None) -> None:
            self._asking -= wanted
            if error is not None:
                self._report(error)
            found: dict[str, str] = {} if error is not None else result
            if len(self._names) > DISPLAY_CACHE:
                self._names.clear()
            named = set()
            for number in wanted:
                self._names[number] = name = found.get(number, "")
                if name:
                    named.add(number)
            self._named(named)

        self._reads.submit(read, done)

    def _named(self, numbers: set[str]) -> None:
        """Names were found for `numbers`: repaint the From cells of the rows held from
        them (none for strangers: a flood of new numbers repaints nothing more)."""
        if not numbers:
            return
        self._repaint_all()
        found = [
            window * WINDOW + offset
            for window, rows in self._windows.items()
            for offset, row in enumerate(rows)
            if row.from_number in numbers
        ]
        if found:
            self.dataChanged.emit(self.index(min(found), FROM), self.index(max(found), FROM))

    def _supersede(self) -> None:
        super()._supersede()
        self._asking.clear()  # a names read dropped with the rest is asked again
        self._repaint_all()  # ... when the rows that wanted it are worked out again

    # ---- opt-outs -----------------------------------------------------------------------------

    def set_keywords(self, keywords: Keywords) -> None:
        """The profile's keywords (changed in the Opt-outs tab): read every reply again."""
        self._keywords = keywords
        self._readings.clear()
        self._opt_out_changed()

    def set_opted_out(self, numbers: frozenset[str]) -> None:
        """The numbers on the opt-out list now (list form: international digits)."""
        if numbers != self._opted:
            self._opted = numbers
            self._opt_out_changed()

    def reading(self, row: ReplyRow) -> KeywordReading | None:
        """What the reply says about consent (read once per reply, then remembered)."""
        if row.id in self._readings:
            return self._readings[row.id]
        if len(self._readings) > DISPLAY_CACHE:
            self._readings.clear()
        found = self._readings[row.id] = self._keywords.read(row.text)
        return found

    def opted_out_now(self, row: ReplyRow) -> bool:
        if not self._opted:
            return False
        listed = self._listed.get(row.from_number)
        if listed is None:
            if len(self._listed) > DISPLAY_CACHE:
                self._listed.clear()
            listed = self._listed[row.from_number] = list_number(row.from_number, self.region)
        return listed in self._opted

    def _badge(self, row: ReplyRow, tip: bool) -> str:
        return badge(self.reading(row), self.opted_out_now(row), tip)

    def _badge_colour(self, row: ReplyRow) -> QColor | None:
        return badge_colour(self.reading(row), self.opted_out_now(row))

    def _opt_out_changed(self) -> None:
        self._repaint_all()
        if self._total:
            last = self.index(self._total - 1, OPT_OUT)
            self.dataChanged.emit(self.index(0, FROM), last)

    # ---- rows --------------------------------------------------------------------------------

    def window_read(self, window: int) -> Read[list[ReplyRow]]:
        search = self.search

        def read(reading: Reading) -> list[ReplyRow]:
            return fetch_window(reading, search, window * WINDOW, WINDOW)

        return read

    def _store(self, window: int, rows: list[ReplyRow]) -> None:
        # A window read while replies were being stored may hold rows the model has not
        # been handed yet: they come with the delivery, in their place.
        room = self._total - window * WINDOW
        super()._store(window, rows[: max(room, 0)])

    # ---- live growth ---------------------------------------------------------------------------

    def apply(self, delivery: ReplyDelivery) -> Applied:
        """Show what a drain delivered: appended when it fits at the end, else re-read."""
        if self.pending:
            self._held.append(delivery)  # sorted out against the read when it lands
            return Applied.NOTHING
        return self._apply(delivery, 0)

    def _apply(self, delivery: ReplyDelivery, read_up_to: int) -> Applied:
        """`read_up_to`: replies with ids up to it are in the rows just read."""
        if delivery.dropped:
            self.refresh()
            return Applied.REREAD
        applied = self._append(delivery, read_up_to)
        if applied is not Applied.REREAD:  # a re-read holds the updates already
            for reply in delivery.updated:  # after the new rows: it may be one of them
                self._update(reply.id)
        return applied

    def _append(self, delivery: ReplyDelivery, read_up_to: int) -> Applied:
        search = self.search
        last = self._last
        rows = sorted(
            (row_of(r) for r in delivery.new if r.id > read_up_to and search.matches_reply(r)),
            key=_key,
        )
        if last is not None:
            # The newest row shown, delivered after a read that had it already: not again.
            rows = [row for row in rows if row.key != last]
        if not rows:
            return Applied.NOTHING
        if self._last is not None and rows[0].key < self._last:
            self.refresh()
            return Applied.REREAD
        first = self._total
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._total += len(rows)
        self._last = rows[-1].key
        for number, row in enumerate(rows, start=first):
            self._place(number, row)
        self.endInsertRows()
        answered = {(first + i) // WINDOW for i, row in enumerate(rows) if row.message_id}
        for window in answered - self._in_flight.keys():
            self._in_flight[window] = self._fetch(window)  # to show the message they answer
        return Applied.APPENDED

    def _place(self, number: int, row: ReplyRow) -> None:
        window, offset = divmod(number, WINDOW)
        rows = self._windows.get(window)
        if rows is None:
            if offset == 0:
                self._store(window, [row])
        elif len(rows) == offset:
            rows.append(row)
        elif len(rows) < offset or rows[offset].id != row.id:
            del self._windows[window]  # read again when shown

    def _update(self, reply_id: int) -> None:
        """A reply already listed gained a field (its MessageId): re-read its window."""
        for window, rows in self._windows.items():
            if any(r.id == reply_id for r in rows):
                if window not in self._in_flight:
                    self._in_flight[window] = self._fetch(window)
                return

    # ---- searches and re-reads -----------------------------------------------------------------

    def set_search(self, search: ReplySearch) -> None:
        """Show another search: the table changes when its count and newest rows are in."""
        self.search = search
        visible = self.anchor().visible_rows
        self._read(Anchor(True, None, visible), new_search=True)

    def refresh(self) -> None:
        """Re-read count and rows, keeping the view's place (one job, then one reset)."""
        if self.pending:
            self._again = True
            return
        self._read(self.anchor(), new_search=False)

    def _read(self, anchor: Anchor, *, new_search: bool) -> None:
        self._supersede()
        search = self.search
        self.pending = True
        self._again = False

        def read(reading: Reading) -> tuple[Listing, int, dict[int, list[ReplyRow]]]:
            with reading.snapshot():  # the count, the rows and `read_up_to` agree
                found = listing(reading, search)
                if anchor.at_bottom or anchor.top is None:
                    first = max(0, found.total - anchor.visible_rows)
                else:
                    first = min(position(reading, search, anchor.top), max(found.total - 1, 0))
                last = min(found.total - 1, first + anchor.visible_rows)
                windows = {
                    window: fetch_window(reading, search, window * WINDOW, WINDOW)
                    for window in range(first // WINDOW, last // WINDOW + 1)
                }
            return found, first, windows if found.total else {}

        def done(result: Any, error: BaseException | None) -> None:
            self.pending = False
            again, self._again = self._again, False
            held, self._held = self._held, []
            if error is not None:
                self._report(error)
                return
            found, first, windows = result
            self._last = found.last
            self._reset(found.total, windows)
            if new_search:
                self.loaded.emit(found.total)
            self.refreshed.emit(Refreshed(first, anchor.at_bottom))
            if again:
                self.refresh()
                return
            for delivery in held:
                if self._apply(delivery, found.read_up_to) is Applied.REREAD:
                    break  # the new read holds the rest

        self._reads.submit(read, done)


def _key(row: ReplyRow) -> tuple[str, int]:
    return row.key
