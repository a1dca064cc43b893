"""A recipient list checked: usable numbers once each, and every unusable row with its reason.

Rows are numbered as a spreadsheet numbers them (the header is row 1), lines of
pasted text by line, so an operator can find and fix each one at its source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gwdesk.domain.numbers import is_region
from gwdesk.importing.decoding import (
    ImportCancelled,
    ImportFailed,
    decode,
    read_file_bytes,
)
from gwdesk.importing.fastnumbers import CachedNormaliser, Unusable
from gwdesk.importing.table import ALL_COLUMNS, MAX_ROWS, Cancelled, Progress, Table, read_table

_PASTE_SPLIT: Final = re.compile(r"[,;\t]")
_STEP: Final = 2048


@dataclass(frozen=True, slots=True)
class InvalidRow:
    row: int
    """1-based row of the file (header included) or line of the pasted text."""
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class RecipientList:
    numbers: tuple[str, ...]
    """Usable numbers in international digits, first occurrences, in order."""
    invalid: tuple[InvalidRow, ...]
    duplicates: int
    """Entries dropped because an earlier entry was the same number."""
    blank: int = 0
    """Rows with nothing in them at all (skipped, not errors)."""

    @property
    def entries(self) -> int:
        return len(self.numbers) + len(self.invalid) + self.duplicates


Entry = tuple[int, str]
"""(row or line number, text)."""


def pasted_entries(text: str) -> Iterator[Entry]:
    """Numbers one per line, or separated by commas, semicolons or tabs."""
    for number, line in enumerate(text.splitlines(), start=1):
        for part in _PASTE_SPLIT.split(line):
            part = part.strip()
            if part:
                yield (number, part)


Item = Entry | InvalidRow | int
"""What a source yields: an entry to check, a row already known unusable, or a blank row."""


def column_entries(table: Table, column: int) -> Iterator[Item]:
    """The cells of one column (or every cell), row by row."""
    delimiter = table.delimiter or ""
    for index in range(table.data_start, len(table.rows)):
        row = table.rows[index]
        number = index + 1
        if not any(cell.strip() for cell in row):
            yield number
        elif column == ALL_COLUMNS:
            for cell in row:
                if cell.strip():
                    yield (number, cell)
        elif column >= len(row):
            cells = len(row)
            reason = f"the row has {cells} {'cell' if cells == 1 else 'cells'}, so no column {column + 1}"
            yield InvalidRow(number, delimiter.join(row), reason)
        elif not row[column].strip():
            yield InvalidRow(number, delimiter.join(row), f"column {column + 1} is empty")
        else:
            yield (number, row[column])


def check_entries(
    entries: Iterable[Item],
    region: str,
    *,
    total: int,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> RecipientList:
    """Normalise and deduplicate; unusable entries are listed, never dropped silently."""
    reader = _reader(region)
    seen: dict[str, None] = {}
    invalid: list[InvalidRow] = []
    duplicates = blank = 0
    for done, entry in enumerate(entries, start=1):
        if done % _STEP == 0:
            if cancelled is not None and cancelled():
                raise ImportCancelled
            if progress is not None:
                progress(min(done, total), total)
            if done > MAX_ROWS:
                raise ImportFailed(f"There are more than {MAX_ROWS:,} entries; split the list.")
        if isinstance(entry, int):
            blank += 1
        elif isinstance(entry, InvalidRow):
            invalid.append(entry)
        else:
            result = reader.read(entry[1])
            if isinstance(result, Unusable):
                invalid.append(InvalidRow(entry[0], entry[1], result.reason))
            elif result in seen:
                duplicates += 1
            else:
                seen[result] = None
    if progress is not None:
        progress(total, total)
    return RecipientList(tuple(seen), tuple(invalid), duplicates, blank)


def _reader(region: str) -> CachedNormaliser:
    """Numbers read as in `region`; `ImportFailed` when no number can be read there."""
    if not is_region(region):
        raise ImportFailed(f"The profile's region {region[:8]!r} is not a known region.")
    return CachedNormaliser(region)


def check_table(
    table: Table,
    column: int,
    region: str,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> RecipientList:
    """The recipients of one column of `table` (or of every cell, with `ALL_COLUMNS`)."""
    if column != ALL_COLUMNS and not 0 <= column < max(1, table.width):
        raise ImportFailed(f"The file has no column {column + 1}.")
    rows = table.rows[table.data_start :]
    total = sum(max(1, len(row)) for row in rows) if column == ALL_COLUMNS else len(rows)
    return check_entries(
        column_entries(table, column),
        region,
        total=max(1, total),
        progress=progress,
        cancelled=cancelled,
    )


def check_pasted(
    text: str,
    region: str,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> RecipientList:
    return check_entries(
        pasted_entries(text),
        region,
        total=max(1, text.count("\n") + 1),
        progress=progress,
        cancelled=cancelled,
    )


def load_table(
    path: Path,
    region: str,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> Table:
    """Read, decode and parse a recipient file (blocking: call it from a worker thread)."""
    return table_from_bytes(read_file_bytes(path), region, progress, cancelled)


def table_from_bytes(
    data: bytes,
    region: str,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> Table:
    """Decode and parse a file's bytes; the column guess prefers numbers usable in `region`."""
    reader = _reader(region)

    def usable(cell: str) -> bool:
        return not isinstance(reader.read(cell), Unusable)

    return read_table(decode(data), progress, cancelled, usable)


def import_file(
    path: Path,
    region: str,
    column: int | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> tuple[Table, RecipientList]:
    """A file to a checked list in one call (the CLI and the benchmark use this)."""
    table = load_table(path, region, progress, cancelled)
    chosen = table.column if column is None else column
    return table, check_table(table, chosen, region, progress, cancelled)
