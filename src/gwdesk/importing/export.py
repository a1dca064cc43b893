"""Writing rows back out as CSV that a spreadsheet opens safely.

Every cell goes through `domain.spreadsheet.SpreadsheetCsv`, the writer of every
export: quoted, and with an apostrophe before every formula (`=`, `+`, `-`, `@`) a
spreadsheet could run, at the cell's start or after a `,`, `;`, tab or line break in
it, whichever delimiter the file is read with ("CSV injection": `=cmd|' /C calc'!A0`
from a hostile import would run when the operator opens the exported list).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from gwdesk.domain.spreadsheet import SpreadsheetCsv
from gwdesk.importing.recipients import InvalidRow
from gwdesk.private_files import open_private

INVALID_HEADER: Final = ("Row", "Entry", "Reason")


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> int:
    """Write rows (UTF-8 with a BOM, which Excel needs to read it as UTF-8); returns the count."""
    count = 0
    with open_private(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = SpreadsheetCsv(handle)
        writer.row(header)
        for row in rows:
            writer.row(row)
            count += 1
    return count


def write_invalid_rows(path: Path, rows: Iterable[InvalidRow]) -> int:
    """The unusable entries of an import, to fix at their source and import again."""
    return write_csv(path, INVALID_HEADER, ((r.row, r.text, r.reason) for r in rows))
