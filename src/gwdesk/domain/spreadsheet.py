"""CSV that no spreadsheet runs as a formula, whichever delimiter it splits the file on.

A cell that starts with `=`, `+`, `-` or `@` is a formula to Excel, LibreOffice and
Google Sheets ("CSV injection"): `=cmd|' /C calc'!A0` from an imported file or a
customer's reply runs when the operator opens the export. A spreadsheet splits a
file on `,`, `;` or tab, as its locale or its guess says, and a file whose quoting it
misreads is split inside its cells; so a cell's start is not the only place a cell
can start: `x;=cmd|' /C calc'!A0`, one cell to a comma reader, is two to a semicolon
reader, the second a formula.

So every export follows OWASP's CSV-injection advice at every place a cell may start:
the cell's own start and the character after each `,`, `;`, tab or line break in it.
Where that segment holds a formula character first (after any spaces and quotes), an
apostrophe goes before it: a spreadsheet reads `'=...` as text and does not show the
apostrophe. (A tab or line break before a formula, which OWASP lists too, starts a
segment of its own: the formula after it is caught there.) And every cell is written
in double quotes (`QUOTE_ALL`, quotes inside doubled), so a reader that honours
quoting keeps it one cell.

Numbers get the apostrophe too: `+61400000001` shows as `+61400000001` (as text,
not as the number 61400000001), and a number left bare would start a formula in a
reader that misreads the quotes and joins it to the cells after it
(`+1,2+cmd|' /C calc'!A0` to a semicolon reader in a decimal-comma locale).

The apostrophes come off again exactly (`restored`), so an import of an export reads
what was exported: a segment that began with an apostrophe before a formula
character already gets a second one.

`SpreadsheetCsv` is the one writer of every export; it writes to a handle its caller
opened (and made private), so this module itself opens no file.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Final, Protocol

#: Where a spreadsheet may start a cell: the text's start, after a delimiter or line break.
_SEGMENT_START: Final = r"(?:^|(?<=[,;\t\r\n]))"
#: A formula character ahead, after any spaces (not breaks) and quotes a spreadsheet skips.
_FORMULA_AHEAD: Final = r"(?=(?:[^\S\t\r\n]|[\"'])*[=+\-@])"
_DEFUSE: Final = re.compile(_SEGMENT_START + _FORMULA_AHEAD)
_DEFUSED: Final = re.compile(_SEGMENT_START + "'" + _FORMULA_AHEAD)
_ANY_FORMULA_CHAR: Final = re.compile(r"[=+\-@]")


def safe_cell(text: str) -> str:
    """`text` with an apostrophe before every segment a spreadsheet would run (see above);
    text with no formula character where a cell may start comes back unchanged."""
    if _ANY_FORMULA_CHAR.search(text) is None:
        return text  # most cells
    return _DEFUSE.sub("'", text)


def restored(text: str) -> str:
    """A cell as it was before `safe_cell`: the apostrophes it put in taken out again."""
    return _DEFUSED.sub("", text) if "'" in text else text


class _Writable(Protocol):
    def write(self, text: str, /) -> object: ...


class SpreadsheetCsv:
    """Rows written as CSV to `handle` (a text file opened with `newline=""`): every cell
    made text with `str`, defused with `safe_cell` and quoted."""

    def __init__(self, handle: _Writable) -> None:
        self._writer = csv.writer(handle, quoting=csv.QUOTE_ALL)

    def row(self, cells: Iterable[object]) -> None:
        self._writer.writerow([safe_cell(str(cell)) for cell in cells])

    def rows(self, rows: Iterable[Iterable[object]]) -> None:
        for cells in rows:
            self.row(cells)
