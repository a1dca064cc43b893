"""Editing the address book: what the Contacts view decides, Qt-free.

The contacts are the profile's own (`gwdesk.store.contacts`): a name, numbers, the fields
a template's placeholders take ({clinic}), groups (a group can be a list send's
recipients) and notes. Here they are listed (a search, a group; the counts and the
groups as they are now), added and edited (what the operator typed becomes a card only
when every number reads as one in the profile's region, every value has a field name
and the domain's rules accept it, `card_from`; the store has the last word, a number
another contact holds), deleted, imported (a CSV or vCard file merged in one
transaction: added, updated, and every row left out with why) and exported.

Whether a contact's number opted out is read from the account's opt-out list when the
contact is shown (`opt_outs`), never kept here. What to read again: after a change
here the listing (with the changed contact chosen) and every view of names beside
numbers (the session's `contacts_changed`); when another desk changed the address
book (`CONTACT_TABLES`) or a reply arrived, the listing. Every method that reads or
writes blocks: the console runs them off its GUI thread, the command line as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gwdesk.app.contacts import ContactImport, export_contacts, import_contacts
from gwdesk.app.team import CONTACT_TABLES
from gwdesk.domain.contacts import ContactCard, card_problem, unique_groups
from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.importing.decoding import ImportFailed
from gwdesk.store.contacts import Contact, ContactStore
from gwdesk.store.database import StoreError
from gwdesk.store.optouts import OptOut, OptOutStore

__all__ = [
    "CONTACT_TABLES",
    "SHOWN",
    "CardRefused",
    "Contact",
    "ContactCard",
    "ContactEditing",
    "ContactImport",
    "ContactListing",
    "ContactStore",
    "ImportFailed",
    "OptOut",
    "StoreError",
    "TypedContact",
    "card_from",
]
SHOWN: Final = 5000
"""Contacts listed at once; the search narrows a bigger book."""
VALUE_SHOWN: Final = 30
"""Characters of a value without a field name repeated in the refusal."""


class CardRefused(ValueError):
    """What was typed cannot be kept as a contact; `message` says what to fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class TypedContact:
    """A contact as the operator typed it, before it is checked."""

    name: str
    numbers: str
    """One number per line."""
    fields: Sequence[tuple[str, str]]
    groups: str
    """Separated by commas."""
    notes: str


def card_from(typed: TypedContact, region: str) -> ContactCard:
    """What was typed as a card (numbers read in `region`, the first kept first, each once;
    groups each once whatever their letter case; empty field rows dropped), or
    `CardRefused` saying what to fix."""
    numbers = []
    for place, line in enumerate((line.strip() for line in typed.numbers.splitlines()), 1):
        if not line:
            continue
        try:
            numbers.append(normalise(line, region))
        except NumberError as exc:
            raise CardRefused(f"Number on line {place}: {exc.reason}.") from None
    for name, value in typed.fields:
        if value.strip() and not name.strip():
            raise CardRefused(f"The value {value[:VALUE_SHOWN]!r} needs a field name.")
    card = ContactCard(
        name=" ".join(typed.name.split()),
        numbers=tuple(dict.fromkeys(numbers)),
        fields=tuple((n, v) for n, v in typed.fields if n.strip() or v.strip()),
        groups=unique_groups(typed.groups.split(",")),
        notes=typed.notes.strip(),
    )
    problem = card_problem(card)
    if problem:
        raise CardRefused(f"The contact cannot be kept: {problem}.")
    return card


@dataclass(frozen=True, slots=True)
class ContactListing:
    """One read of the address book as the view shows it."""

    rows: list[Contact]
    found: int
    """Contacts the search and group match (more than `rows` past `SHOWN`)."""
    total: int
    groups: list[tuple[str, int]]
    """Every group and how many contacts it holds."""
    narrowed: bool
    """A search or a group narrowed it (an empty list then means no match)."""

    @property
    def counts(self) -> str:
        more = (
            f" (the first {SHOWN:,} shown: search to narrow)" if self.found > len(self.rows) else ""
        )
        if self.found != self.total:
            contacts = f"{self.found:,} of {self.total:,} contacts"
        else:
            contacts = f"{self.total:,} contacts"
        return f"{contacts} · {len(self.groups):,} groups{more}"

    @property
    def empty(self) -> bool:
        """No contacts at all: the view explains how to add or import them."""
        return not self.rows and not self.narrowed


class ContactEditing:
    """One profile's address book, as an operator edits it (blocking methods)."""

    def __init__(self, contacts: ContactStore, optouts: OptOutStore, region: str) -> None:
        self._contacts = contacts
        self._optouts = optouts
        self.region = region
        """Where a national number typed or imported is read (the profile's region)."""

    def listing(self, search: str = "", group: str | None = None) -> ContactListing:
        contacts = self._contacts
        rows = contacts.listing(search, group=group, limit=SHOWN)
        found = contacts.count(search, group=group)
        narrowed = bool(search.strip()) or group is not None
        return ContactListing(rows, found, contacts.count(), contacts.groups(), narrowed)

    def check(self, typed: TypedContact) -> ContactCard:
        return card_from(typed, self.region)

    def save(self, contact: Contact | None, card: ContactCard) -> Contact:
        """Add the card (`contact` None) or replace the contact with it; a `StoreError`
        (`ContactError`: a number another contact holds) changes nothing. Then the
        listing and every name beside a number are read again."""
        if contact is None:
            return self._contacts.add(card)
        return self._contacts.update(contact.id, card)

    def remove(self, contact: Contact) -> None:
        """Delete the contact (its numbers' history and opt-out state stay)."""
        self._contacts.remove(contact.id)

    def opt_outs(self, contact: Contact) -> list[OptOut]:
        """How and when each of the contact's opted-out numbers opted out, in its order."""
        if not contact.opted_out:
            return []
        found = self._optouts.opted_out(contact.opted_out)
        return [found[number] for number in contact.opted_out if number in found]

    def import_file(self, path: Path) -> ContactImport:
        """Merge a CSV or vCard file (`ImportFailed` when it cannot be read at all:
        nothing changed); the rows left out, with why, are in the report."""
        return import_contacts(self._contacts, path, self.region)

    def export_file(self, path: Path, group: str | None = None) -> int:
        return export_contacts(self._contacts, path, group=group)
