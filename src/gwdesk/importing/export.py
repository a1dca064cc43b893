"""Writing rows back out as CSV that a spreadsheet opens safely.

A cell that starts with `=`, `+`, `-` or `@` is a formula to Excel and LibreOffice
("CSV injection"): `=cmd|' /C calc'!A0` from a hostile import would run when the
operator opens the exported list. Such cells get a leading apostrophe, which the
spreadsheet shows as text. A plain phone number (`+61 412 345 678`, `-`-separated
digits) cannot be a formula, so it is left as written rather than mangled.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from gwdesk.importing.recipients import InvalidRow
from gwdesk.private_files import open_private

_TRIGGERS: Final = ("=", "+", "-", "@", "\t", "\r", "\n")
_PLAIN_NUMBER: Final = re.compile(r"[+\-]?[\d\s().\-/]*")
INVALID_HEADER: Final = ("Row", "Entry", "Reason")


def safe_cell(value: str) -> str:
    """`value` as a spreadsheet will show it, never as a formula it would evaluate."""
    if value.startswith(_TRIGGERS) and _PLAIN_NUMBER.fullmatch(value) is None:
        return "'" + value
    return value


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> int:
    """Write rows (UTF-8 with a BOM, which Excel needs to read it as UTF-8); returns the count."""
    count = 0
    with open_private(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL)
        writer.writerow([safe_cell(str(v)) for v in header])
        for row in rows:
            writer.writerow([safe_cell(str(v)) for v in row])
            count += 1
    return count


def write_invalid_rows(path: Path, rows: Iterable[InvalidRow]) -> int:
    """The unusable entries of an import, to fix at their source and import again."""
    return write_csv(path, INVALID_HEADER, ((r.row, r.text, r.reason) for r in rows))
