"""A list's recipients in words, as the Batch tab shows them: the list as checked, a file as read.

`250 recipients ready · 2 contacts of the group Patients · 1 duplicate dropped`; a
file's name (shortened in the middle) and size beside its import, and how it was
read (encoding, separator, header) on a line of its own. File names and group names
come from outside: whoever shows these shows them as plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from gwdesk.app.questions import plural
from gwdesk.importing.recipients import RecipientList
from gwdesk.importing.table import DELIMITER_NAMES, Table
from gwdesk.store.contacts import Contact


def summary_text(
    result: RecipientList, groups: dict[str, tuple[Contact, ...]] | None = None
) -> str:
    """What the list comes to: ready, from the groups, dropped, invalid, skipped."""
    parts = [plural(len(result.numbers), "recipient") + " ready"]
    for name, members in (groups or {}).items():
        parts.append(f"{plural(len(members), 'contact')} of the group {name}")
    if result.duplicates:
        parts.append(plural(result.duplicates, "duplicate") + " dropped")
    if result.invalid:
        parts.append(plural(len(result.invalid), "invalid row"))
    if result.blank:
        parts.append(plural(result.blank, "blank row") + " skipped")
    return " · ".join(parts)


#: Longer file names are shortened in the middle (the tooltip has the whole path).
FILE_NAME_CHARS: Final = 40


def short_name(name: str, limit: int = FILE_NAME_CHARS) -> str:
    """A long file name shortened in the middle (its end tells files apart)."""
    if len(name) <= limit:
        return name
    tail = limit // 3
    return f"{name[: limit - tail - 1]}…{name[-tail:]}"


def file_title(path: Path, table: Table) -> str:
    """The file and its size, beside the import button."""
    return f"{short_name(path.name)} · {plural(table.data_rows, 'row')}"


def file_details(table: Table) -> str:
    """How the file was read, on a line of its own so that it never wraps mid-phrase."""
    delimiter = DELIMITER_NAMES.get(table.delimiter, "?")
    layout = "one column" if table.delimiter is None else f"{delimiter}-separated"
    header = " · header row" if table.has_header else ""
    nuls = f" · {plural(table.nuls_removed, 'NUL character')} ignored" if table.nuls_removed else ""
    return f"Read as {table.encoding} · {layout}{header}{nuls}"
