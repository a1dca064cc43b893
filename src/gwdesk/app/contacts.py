"""The address book's use cases: importing a contacts file, exporting it, names for numbers.

An import reads the file (`gwdesk.importing.contacts`: CSV or vCard), then merges
its cards into the profile's contacts in one transaction (`ContactStore.merge`),
and says what it did: contacts added, contacts updated (a number already known),
and every row or card left out, with its row and reason. An export writes CSV a
spreadsheet opens safely (no cell is run as a formula) and that an import reads
back as it was. Blocking, both: call them off the GUI thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gwdesk.domain.templates import field_key
from gwdesk.importing.contacts import read_contacts
from gwdesk.importing.export import write_csv
from gwdesk.importing.recipients import InvalidRow
from gwdesk.store.contacts import Contact, ContactStore

EXPORT_HEADER: Final = ("Name", "Numbers", "Groups", "Notes")
#: Contacts read per page by an export.
PAGE: Final = 5000


@dataclass(frozen=True, slots=True)
class ContactImport:
    """What importing a contacts file did."""

    added: int
    updated: int
    invalid: tuple[InvalidRow, ...]
    kind: str
    """What the file was read as (`vCard, UTF-8`, `CSV, UTF-8, comma-separated`)."""

    def summary(self) -> str:
        parts = [f"{self.added:,} added", f"{self.updated:,} updated"]
        if self.invalid:
            parts.append(f"{len(self.invalid):,} left out")
        return ", ".join(parts)


def import_contacts(store: ContactStore, path: Path, region: str) -> ContactImport:
    """Read `path` (CSV or vCard) and merge its contacts into `store`; `ImportFailed`
    when the file cannot be read at all (nothing is then changed)."""
    sheet = read_contacts(path, region)
    merged = store.merge(sheet.cards)
    refused = [
        InvalidRow(sheet.rows[r.index], sheet.cards[r.index].name, r.reason) for r in merged.refused
    ]
    invalid = tuple(sorted((*sheet.invalid, *refused), key=lambda row: row.row))
    return ContactImport(merged.added, merged.updated, invalid, sheet.kind)


def _pages(store: ContactStore, group: str | None) -> Iterable[Contact]:
    offset = 0
    while True:
        page = store.listing(group=group, limit=PAGE, offset=offset)
        yield from page
        if len(page) < PAGE:
            return
        offset += PAGE


def export_contacts(store: ContactStore, path: Path, *, group: str | None = None) -> int:
    """Every contact (or a group's) as CSV: name, numbers (international digits, as the
    gateway writes them) and groups (`;`-separated), notes, then one column per field
    name; the number of contacts written."""
    contacts = list(_pages(store, group))
    fields: dict[str, str] = {}
    for contact in contacts:
        for name, _ in contact.fields:
            fields.setdefault(field_key(name), name)
    columns = list(fields)
    header = (*EXPORT_HEADER, *fields.values())
    rows = (
        (
            contact.name,
            "; ".join(contact.numbers),
            "; ".join(contact.groups),
            contact.notes,
            *(contact.values().get(c, "") for c in columns),
        )
        for contact in contacts
    )
    return write_csv(path, header, rows)
