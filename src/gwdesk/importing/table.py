"""Text to rows: the delimiter, the quoting, the header row and the phone-number column.

Every cell stays text, exactly as written: a leading zero or `+` is part of the
number, and a cell such as `=cmd|' /C calc'!A0` is only ever a string (it is
refused later as not a number, never evaluated).
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from gwdesk.importing.decoding import Decoded, ImportCancelled, ImportFailed

DELIMITERS: Final = (",", ";", "\t", "|")
DELIMITER_NAMES: Final = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", None: "none"}
#: More data rows than this are refused: far beyond one batch an operator checks by eye.
MAX_ROWS: Final = 1_000_000
#: A single cell longer than this is not a recipient list (csv's own default limit).
MAX_CELL: Final = 131_072
#: Rows looked at to guess the delimiter, the header and the column.
SAMPLE_ROWS: Final = 200
#: A one-line file with more cells than this is a list written across, not a table.
WIDE_LINE: Final = 20
_PHONE_LIKE: Final = re.compile(r"\s*\+?[\d\s\-().\/]{6,40}\s*")
_PHONE_WORDS: Final = (
    "phone", "mobile", "mob", "cell", "msisdn", "tel", "sms", "gsm", "handy", "telefon",
    "portable", "móvil", "movil", "whatsapp",
)  # fmt: skip
#: Words that hint at a number column less surely ("Customer number" is not a phone).
_WEAK_WORDS: Final = ("number", "recipient", "contact", "to", "destination", "dest")
_WORD: Final = re.compile(r"[^\W\d_]+")
_LETTER: Final = re.compile(r"[^\W\d_]")
ALL_COLUMNS: Final = -1
"""The column choice meaning "every cell is a recipient" (a grid of numbers)."""

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]
IsNumber = Callable[[str], bool]


@dataclass(frozen=True)
class Table:
    """A file's rows, all text, and what was guessed about them."""

    rows: list[list[str]]
    """Every record, header included, blank lines as empty lists."""
    encoding: str
    delimiter: str | None
    has_header: bool
    column: int
    """The column that looks most like phone numbers, or `ALL_COLUMNS`."""
    width: int
    """The most cells any row has."""
    nuls_removed: int = 0

    @property
    def data_start(self) -> int:
        return 1 if self.has_header else 0

    @property
    def data_rows(self) -> int:
        return len(self.rows) - self.data_start

    def column_names(self) -> list[str]:
        """A label per column: its number and the header text when there is one."""
        return [
            f"{index + 1}: {title}" if title else f"Column {index + 1}"
            for index, title in enumerate(self.titles())
        ]

    def titles(self) -> list[str]:
        """The header text of each column ("" without a header row)."""
        header = self.rows[0] if self.has_header and self.rows else []
        return [header[i].strip() if i < len(header) else "" for i in range(self.width)]

    def preview(self, count: int = 5) -> list[list[str]]:
        start = self.data_start
        return self.rows[start : start + count]


def looks_like_phone(cell: str) -> bool:
    return _PHONE_LIKE.fullmatch(cell) is not None and sum(c.isdigit() for c in cell) >= 6


def _count_outside_quotes(line: str, delimiter: str) -> int:
    count, quoted = 0, False
    for char in line:
        if char == '"':
            quoted = not quoted
        elif char == delimiter and not quoted:
            count += 1
    return count


def sniff_delimiter(text: str) -> str | None:
    """The candidate that splits the first lines most consistently into a number column.

    Consistency alone is fooled by a stray separator in every row ("Smith, John" in a
    semicolon file), so a split that yields a column of phone numbers scores higher.
    """
    lines = [line for line in text[: 256 * 1024].splitlines()[:SAMPLE_ROWS] if line.strip()]
    if len(lines) > 1 and len(text) > 256 * 1024:
        lines = lines[:-1]  # the last sampled line may be cut short
    best: tuple[float, int, str] | None = None
    for delimiter in DELIMITERS:
        if not any(delimiter in line for line in lines):
            continue
        counts = [_count_outside_quotes(line, delimiter) for line in lines]
        mode, frequency = Counter(counts).most_common(1)[0]
        if mode == 0:
            continue
        present = sum(1 for c in counts if c) / len(counts)
        score = (frequency / len(counts)) * present * (1 + _phone_column_share(lines, delimiter))
        candidate = (score, mode, delimiter)
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    return None if best is None else best[2]


def _phone_column_share(lines: Sequence[str], delimiter: str) -> float:
    """The largest share of lines whose cell in one column (of the first 16) is a number."""
    rows = list(csv.reader(lines, delimiter=delimiter, strict=False))
    if not rows:
        return 0.0
    hits = [0] * 16
    for row in rows:
        for column, cell in enumerate(row[:16]):
            if looks_like_phone(cell):
                hits[column] += 1
    return max(hits) / len(rows)


def _header_weight(cell: str) -> float:
    """How surely a header cell names a phone-number column (0 when it does not)."""
    words = [w.lower() for w in _WORD.findall(cell)]
    if any(w.startswith(p) for w in words for p in _PHONE_WORDS):
        return 0.3
    if any(w == p or (len(p) > 3 and w.startswith(p)) for w in words for p in _WEAK_WORDS):
        return 0.1
    return 0.0


def _is_header_word(cell: str) -> bool:
    return _header_weight(cell) > 0


def detect_header(rows: Sequence[Sequence[str]]) -> bool:
    """A first row with no number in it, above rows that have some, is a header."""
    if not rows or not rows[0]:
        return False
    first = rows[0]
    if any(looks_like_phone(cell) for cell in first):
        return False
    below = [row for row in rows[1:SAMPLE_ROWS] if row]
    if any(_is_header_word(cell) for cell in first):
        return True
    has_letters = any(_LETTER.search(cell) for cell in first)
    return has_letters and any(looks_like_phone(c) for row in below for c in row)


def guess_column(
    rows: Sequence[Sequence[str]],
    has_header: bool,
    width: int,
    is_number: IsNumber = looks_like_phone,
) -> int:
    """The column whose cells are most often usable numbers (header words help)."""
    sample = [row for row in rows[1 if has_header else 0 :][:SAMPLE_ROWS] if row]
    if width <= 1 or not sample:
        return 0
    if not has_header and _every_cell_a_number(sample):
        return ALL_COLUMNS
    header = rows[0] if has_header else []
    scores = []
    for column in range(min(width, 64)):
        cells = [row[column] for row in sample if column < len(row) and row[column].strip()]
        usable = sum(1 for c in cells if is_number(c)) / len(sample)
        named = _header_weight(header[column]) if column < len(header) else 0.0
        scores.append((usable + named, -column))
    return -max(scores)[1]


def _every_cell_a_number(sample: Sequence[Sequence[str]]) -> bool:
    """Numbers written across as well as down (`a, b, c` lines): each cell is a recipient."""
    widths = {len(row) for row in sample}
    if len(widths) == 1 and len(sample) > 1:
        return False  # a regular table: one column is the recipients
    cells = [c for row in sample for c in row if c.strip()]
    return bool(cells) and all(looks_like_phone(c) for c in cells)


def parse_rows(
    text: str,
    delimiter: str | None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> list[list[str]]:
    """Every record as a list of text cells; quoting per RFC 4180 (doubled quotes inside)."""
    total = text.count("\n") + 1
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=delimiter or "\x1f",  # no delimiter: one cell per line
        quotechar='"',
        doublequote=True,
        strict=False,
    )
    rows: list[list[str]] = []
    try:
        for row in reader:
            rows.append(row)
            if len(rows) % 4096 == 0:
                if cancelled is not None and cancelled():
                    raise ImportCancelled
                if progress is not None:
                    progress(min(reader.line_num, total), total)
                if len(rows) > MAX_ROWS + 1:
                    raise ImportFailed(
                        f"The file has more than {MAX_ROWS:,} rows; split it into smaller files."
                    )
    except csv.Error as exc:
        where = f"Row {len(rows) + 1}"
        if "field larger than field limit" in str(exc):
            raise ImportFailed(
                f"{where} has a value longer than {MAX_CELL:,} characters, so this is not a "
                'recipient list (an unclosed quote " can also cause this).'
            ) from None
        raise ImportFailed(f"{where} cannot be read as CSV: {exc}.") from None
    if progress is not None:
        progress(total, total)
    return rows


def read_table(
    decoded: Decoded,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    is_number: IsNumber = looks_like_phone,
) -> Table:
    """Rows of a decoded file, with the delimiter, header and column guessed."""
    text = decoded.text
    delimiter = sniff_delimiter(text)
    rows = parse_rows(text, delimiter, progress, cancelled)
    while rows and not any(cell.strip() for cell in rows[-1]):
        rows.pop()  # trailing blank lines are not rows anyone meant
    if not rows:
        raise ImportFailed("The file is empty: there is no recipient in it.")
    width = max(len(row) for row in rows)
    has_header = detect_header(rows)
    if has_header and len(rows) == 1:
        raise ImportFailed("The file has a header row but no rows of recipients below it.")
    if len(rows) == 1 and width > WIDE_LINE:
        has_header = False
    column = guess_column(rows, has_header, width, is_number)
    return Table(rows, decoded.encoding, delimiter, has_header, column, width, decoded.nuls_removed)
