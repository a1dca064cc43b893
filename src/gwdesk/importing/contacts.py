"""A contacts file (CSV or vCard) to checked contact cards, every unusable row with its reason.

A CSV file is decoded and split as a recipient list is (`decoding`, `table`: BOMs,
code pages, delimiters, quoting), and needs a header row naming its columns:
the name (`Name`, or `First name` and `Last name`), the numbers (`Mobile`, `Phone`,
`Number`...: each such column, each cell perhaps several numbers split by `;`),
the groups (`Groups`, `Categories`, split by `;` or `,`), the notes; every other
column is a field, under its header (first and last names are fields too, so
`{first name}` works in a template). A vCard file (`vcard.py`) is told by its
`BEGIN:VCARD`, whatever its name.

Cells stay text: a cell such as `=HYPERLINK(...)` is kept as written and exported
with its formula defused (`domain.spreadsheet.safe_cell`); the apostrophes an export
put in come off again on import (`restored`), so an export imports back as it was.
A row is refused whole (never half imported) when a number in it is unusable, a
value holds control characters or is too long, or a number of it was on an earlier
row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gwdesk.domain.contacts import ContactCard, card_problem, unique_fields, unique_groups
from gwdesk.domain.numbers import is_region
from gwdesk.domain.spreadsheet import restored
from gwdesk.domain.templates import field_key
from gwdesk.importing.decoding import ImportFailed, decode, read_file_bytes
from gwdesk.importing.fastnumbers import CachedNormaliser, Unusable
from gwdesk.importing.recipients import InvalidRow
from gwdesk.importing.table import ALL_COLUMNS, DELIMITER_NAMES, Table, read_table
from gwdesk.importing.vcard import read_vcards

NAME_HEADERS: Final = frozenset(
    {"name", "full name", "fullname", "display name", "contact", "contact name"}
)
FIRST_HEADERS: Final = frozenset({"first name", "firstname", "given name", "first"})
LAST_HEADERS: Final = frozenset({"last name", "lastname", "surname", "family name", "last"})
NUMBER_HEADERS: Final = frozenset({"number", "numbers", "phone number", "phone numbers"})
NUMBER_WORDS: Final = ("phone", "mobile", "mob", "cell", "tel", "msisdn", "sms")
GROUP_HEADERS: Final = frozenset({"group", "groups", "category", "categories", "list", "lists"})
NOTE_HEADERS: Final = frozenset({"note", "notes", "comment", "comments"})
_SPLIT: Final = re.compile(r"[;,]")
_WORDS: Final = re.compile(r"[^\W\d_]+")
#: How much of an unusable row is shown with its reason.
SHOWN: Final = 200


@dataclass(frozen=True, slots=True)
class ContactSheet:
    """A file's usable cards (with the row or line each came from) and unusable rows."""

    cards: tuple[ContactCard, ...]
    rows: tuple[int, ...]
    invalid: tuple[InvalidRow, ...]
    kind: str
    """What the file was read as, in words (`vCard`, `CSV, UTF-8, comma-separated`)."""


@dataclass(frozen=True, slots=True)
class Columns:
    """What each column of a contacts CSV is."""

    name: int | None
    first: int | None
    last: int | None
    numbers: tuple[int, ...]
    groups: tuple[int, ...]
    notes: tuple[int, ...]
    fields: tuple[tuple[int, str], ...]
    """(column, header) of the columns kept as fields."""


def _is_number_header(key: str) -> bool:
    if key in NUMBER_HEADERS:
        return True
    return any(w.startswith(word) for w in _WORDS.findall(key) for word in NUMBER_WORDS)


def columns_of(table: Table) -> Columns:
    """Each column's role, read from the header (`ImportFailed` without a usable one)."""
    if not table.has_header:
        raise ImportFailed(
            "A contacts file needs a header row naming its columns (Name, Mobile, Groups, "
            "Notes, and any field such as Clinic)."
        )
    titles = table.titles()
    keys = [field_key(t) for t in titles]
    name = next((i for i, k in enumerate(keys) if k in NAME_HEADERS), None)
    first = next((i for i, k in enumerate(keys) if k in FIRST_HEADERS), None)
    last = next((i for i, k in enumerate(keys) if k in LAST_HEADERS), None)
    numbers = tuple(i for i, k in enumerate(keys) if i != name and _is_number_header(k))
    if not numbers and table.column not in (ALL_COLUMNS, name):
        numbers = (table.column,)
    if not numbers:
        raise ImportFailed(
            "No column of the file holds phone numbers: name one Mobile, Phone or Number."
        )
    groups = tuple(i for i, k in enumerate(keys) if k in GROUP_HEADERS)
    notes = tuple(i for i, k in enumerate(keys) if k in NOTE_HEADERS)
    taken = {name, *numbers, *groups, *notes}
    fields = tuple((i, titles[i]) for i in range(len(titles)) if i not in taken and titles[i])
    return Columns(name, first, last, numbers, groups, notes, fields)


def _cell(row: list[str], column: int | None) -> str:
    """A cell's text, trimmed; the apostrophes an export put before formula-like text
    (`'=SUM(...)`, `x;'=1`: `spreadsheet.safe_cell`) taken off again, so a round trip
    keeps it."""
    return restored(row[column]).strip() if column is not None and column < len(row) else ""


def card_from_row(
    row: list[str], columns: Columns, titles: list[str], reader: CachedNormaliser
) -> ContactCard | str:
    """One row's card, or why it cannot be kept."""
    numbers: list[str] = []
    for column in columns.numbers:
        for text in _SPLIT.split(_cell(row, column)):
            if not text.strip():
                continue
            found = reader.read(text.strip())
            if isinstance(found, Unusable):
                where = titles[column] or f"column {column + 1}"
                return f"{where}: {text.strip()[:40]!r} is not a usable number: {found.reason}"
            numbers.append(found)
    name = _cell(row, columns.name) or " ".join(
        part for part in (_cell(row, columns.first), _cell(row, columns.last)) if part
    )
    card = ContactCard(
        name=name,
        numbers=tuple(dict.fromkeys(numbers)),
        fields=unique_fields((title, _cell(row, column)) for column, title in columns.fields),
        groups=unique_groups(g for c in columns.groups for g in _SPLIT.split(_cell(row, c))),
        notes="\n".join(n for n in (_cell(row, c) for c in columns.notes) if n),
    )
    return card_problem(card) or card


def contacts_from_table(table: Table, region: str) -> ContactSheet:
    """The cards of a parsed contacts CSV."""
    columns = columns_of(table)
    titles = table.titles()
    reader = CachedNormaliser(region)
    delimiter = table.delimiter or ""
    cards: list[ContactCard] = []
    rows: list[int] = []
    invalid: list[InvalidRow] = []
    seen: dict[str, int] = {}
    for index in range(table.data_start, len(table.rows)):
        row, number = table.rows[index], index + 1
        if not any(cell.strip() for cell in row):
            continue
        made = card_from_row(row, columns, titles, reader)
        shown = delimiter.join(row)[:SHOWN]
        if isinstance(made, str):
            invalid.append(InvalidRow(number, shown, made))
            continue
        again = next((seen[n] for n in made.numbers if n in seen), None)
        if again is not None:
            invalid.append(InvalidRow(number, shown, f"a number of it is on row {again} too"))
            continue
        seen.update(dict.fromkeys(made.numbers, number))
        cards.append(made)
        rows.append(number)
    return ContactSheet(tuple(cards), tuple(rows), tuple(invalid), "")


def contacts_from_bytes(data: bytes, region: str) -> ContactSheet:
    """A contacts file's bytes read as vCard or CSV, whichever they are."""
    if not is_region(region):
        raise ImportFailed(f"The profile's region {region[:8]!r} is not a known region.")
    text = decode(data)
    if text.text.lstrip("\ufeff \t\r\n")[:11].upper() == "BEGIN:VCARD":
        found = read_vcards(text.text, region)
        return ContactSheet(found.cards, found.rows, found.invalid, f"vCard, {text.encoding}")
    table = read_table(text)
    sheet = contacts_from_table(table, region)
    delimiter = DELIMITER_NAMES.get(table.delimiter, repr(table.delimiter))
    return ContactSheet(
        sheet.cards, sheet.rows, sheet.invalid, f"CSV, {text.encoding}, {delimiter}-separated"
    )


def read_contacts(path: Path, region: str) -> ContactSheet:
    """Read a contacts file (blocking: call it off the GUI thread)."""
    return contacts_from_bytes(read_file_bytes(path), region)
