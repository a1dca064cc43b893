"""Exporting a view of the log cache to CSV: streamed, cancellable, safe to open in Excel.

The rows come from one statement in the view's order (`iter_view`), a chunk at a
time, so a million-row export holds a few thousand rows at once. The file is
written beside the target and renamed into place only when complete, so a
cancelled or failed export leaves no half file behind. Cells are written by
`domain.spreadsheet.SpreadsheetCsv`, the writer of every export: quoted, with a `'`
before every formula a spreadsheet could run (`= + - @` at a cell's start or after a
`,`, `;`, tab or line break in it: OWASP's CSV-injection advice, whichever delimiter
the file is read with). The file is UTF-8 with a BOM so Excel reads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Any, Final

from gwdesk.domain.spreadsheet import SpreadsheetCsv
from gwdesk.logs.query import LogQuery, iter_view
from gwdesk.logs.rows import FIELD_BY_COLUMN, FIELDS, RECEIPT_RAW_INDEX, from_us
from gwdesk.private_files import open_private
from gwdesk.store.reader import Reading, StoreReader

_INDEX: Final = {f.column: i for i, f in enumerate(FIELDS)}


class ExportCancelled(Exception):
    """The operator stopped the export; nothing was written."""


def cell_text(column: str, row: Sequence[Any], zone: tzinfo | None) -> str:
    """A stored value as the export writes it; times in `zone` (None: the system's)."""
    value = row[_INDEX[column]]
    kind = FIELD_BY_COLUMN[column].kind
    if kind in ("time", "receipt") and isinstance(value, int):
        return from_us(value).astimezone(zone).isoformat()
    if kind == "receipt" and value is None:
        raw = row[RECEIPT_RAW_INDEX]
        return "" if raw is None else str(raw)
    return "" if value is None else str(value)


def export_csv(
    reading: Reading,
    query: LogQuery,
    target: Path,
    *,
    columns: Sequence[str],
    zone: tzinfo | None,
    progress: Callable[[int], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> int:
    """Write the view's rows to `target`; the number of rows. `ExportCancelled` if stopped."""
    unknown = [c for c in columns if c not in FIELD_BY_COLUMN]
    if unknown or not columns:
        raise ValueError(f"cannot export columns {unknown or columns!r}")
    partial = target.with_name(target.name + ".partial")
    written = 0
    try:
        with open_private(partial, "w", encoding="utf-8-sig", newline="") as handle:
            out = SpreadsheetCsv(handle)
            out.row(FIELD_BY_COLUMN[c].title for c in columns)
            for chunk in iter_view(reading, query):
                if cancelled():
                    raise ExportCancelled
                out.rows([cell_text(c, row, zone) for c in columns] for row in chunk)
                written += len(chunk)
                if progress is not None:
                    progress(written)
        if cancelled():
            raise ExportCancelled
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return written


def export_view(
    db: Path | str,
    query: LogQuery,
    target: Path,
    *,
    columns: Sequence[str],
    zone: tzinfo | None,
    progress: Callable[[int], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> int:
    """`export_csv` over a reader of the profile's file `db` of the export's own (opened
    and closed on the calling thread, a worker's), so a long export holds no view's reader."""
    with StoreReader(db) as reader:
        return reader.run(
            lambda reading: export_csv(
                reading,
                query,
                target,
                columns=columns,
                zone=zone,
                progress=progress,
                cancelled=cancelled,
            )
        )
