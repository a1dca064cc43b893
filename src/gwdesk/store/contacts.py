"""The address book of a profile: contacts, their numbers, fields and groups.

A number belongs to one contact at most (`contact_numbers` is keyed by it), so a
number always shows one name beside it, and an import that brings a number back
updates the contact holding it instead of making a second one. Group and contact
names are compared by their letter-case-folded form (`name_key`), kept beside them
because SQLite's own case folding knows ASCII only.

Whether a contact's number opted out is asked of the opt-out list each time the
contact is read (`Contact.opted_out`), never copied here, so a STOP shows at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from gwdesk.domain.contacts import ContactCard, card_problem, unique_fields, unique_groups
from gwdesk.domain.templates import field_key
from gwdesk.store.database import StoreError, connect, store_methods, transaction
from gwdesk.store.optouts import OptOutStore

_SPACES: Final = re.compile(" {2,}")
#: Numbers or ids per statement (SQLite's variable limit is far above; this bounds one read).
IN_BATCH: Final = 500


class ContactError(StoreError):
    """A change the address book refuses (a number another contact holds); nothing changed."""


@dataclass(frozen=True, slots=True)
class Contact:
    id: int
    name: str
    numbers: tuple[str, ...]
    fields: tuple[tuple[str, str], ...] = ()
    groups: tuple[str, ...] = ()
    notes: str = ""
    opted_out: tuple[str, ...] = ()
    """Of its numbers, those on the account's opt-out list when it was read."""

    @property
    def number(self) -> str:
        """The number a group send uses: the first."""
        return self.numbers[0]

    def values(self) -> dict[str, str]:
        """Its fields keyed by `field_key`: a personal message's merge values."""
        return {field_key(name): value for name, value in self.fields}

    def card(self) -> ContactCard:
        return ContactCard(self.name, self.numbers, self.fields, self.groups, self.notes)


@dataclass(frozen=True, slots=True)
class Refused:
    index: int
    """The card's place in what was given (0-based)."""
    reason: str


@dataclass(frozen=True, slots=True)
class Merged:
    """What merging cards into the address book did."""

    added: int = 0
    updated: int = 0
    refused: tuple[Refused, ...] = ()


def name_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


_SELECT: Final = """
SELECT c.id, c.name, c.notes, c.fields,
    (SELECT json_group_array(number) FROM
        (SELECT number FROM contact_numbers WHERE contact_id = c.id ORDER BY position))
        AS numbers,
    (SELECT json_group_array(name) FROM
        (SELECT g.name FROM contact_members m JOIN contact_groups g ON g.id = m.group_id
         WHERE m.contact_id = c.id ORDER BY g.name_key)) AS groups
FROM contacts c
"""


def _fields(text: str) -> tuple[tuple[str, str], ...]:
    """A row's fields; a damaged value reads as none rather than stopping a listing."""
    try:
        value = json.loads(text)
    except ValueError:
        return ()
    if not isinstance(value, dict):
        return ()
    return tuple((str(k), str(v)) for k, v in value.items())


def _texts(text: str | None) -> tuple[str, ...]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return ()
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _contact(row: Any) -> Contact:
    return Contact(
        id=row["id"],
        name=row["name"],
        numbers=_texts(row["numbers"]),
        fields=_fields(row["fields"]),
        groups=_texts(row["groups"]),
        notes=row["notes"],
    )


@store_methods
class ContactStore:
    """A profile's contacts; safe to use from any thread (its own connection and lock)."""

    def __init__(self, path: Path | str, optouts: OptOutStore | None = None) -> None:
        self.path = path
        self.optouts = optouts
        """The opt-out list a contact's numbers are looked up in as it is read."""
        self._conn = connect(path)
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ContactStore({str(self.path)!r})"

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ---- reading -----------------------------------------------------------------------

    def _where(self, search: str, group: str | None) -> tuple[str, list[object]]:
        clauses: list[str] = []
        values: list[object] = []
        if group is not None:
            clauses.append(
                "c.id IN (SELECT m.contact_id FROM contact_members m JOIN contact_groups g "
                "ON g.id = m.group_id WHERE g.name_key = ?)"
            )
            values.append(name_key(group))
        needle = " ".join(search.split())
        if needle:
            digits = "".join(ch for ch in needle if ch.isdigit())
            if digits and digits == needle.replace(" ", "").lstrip("+"):
                clauses.append(
                    "c.id IN (SELECT contact_id FROM contact_numbers WHERE number LIKE ? "
                    "ESCAPE '\\')"
                )
                values.append(_like(digits))
            else:
                clauses.append("(c.name_key LIKE ? ESCAPE '\\' OR c.notes LIKE ? ESCAPE '\\')")
                values.extend([_like(needle.casefold()), _like(needle)])
        return (" WHERE " + " AND ".join(clauses) if clauses else "", values)

    def _read(self, query: str, values: Sequence[object]) -> list[Contact]:
        with self._lock:
            rows = self._conn.execute(query, values).fetchall()
        return self._with_optouts([_contact(row) for row in rows])

    def _with_optouts(self, contacts: list[Contact]) -> list[Contact]:
        if self.optouts is None or not contacts:
            return contacts
        opted = self.optouts.opted_out(n for c in contacts for n in c.numbers)
        if not opted:
            return contacts
        marked = []
        for contact in contacts:
            out = tuple(n for n in contact.numbers if n in opted)
            marked.append(replace(contact, opted_out=out) if out else contact)
        return marked

    def count(self, search: str = "", *, group: str | None = None) -> int:
        where, values = self._where(search, group)
        with self._lock:
            row = self._conn.execute(f"SELECT COUNT(*) FROM contacts c{where}", values).fetchone()  # noqa: S608 - built from constant clauses
        return int(row[0])

    def listing(
        self, search: str = "", *, group: str | None = None, limit: int = 1000, offset: int = 0
    ) -> list[Contact]:
        """Contacts by name; `search` matches digits of a number, or words of the name or
        the notes; `group` keeps that group's members."""
        where, values = self._where(search, group)
        return self._read(
            f"{_SELECT}{where} ORDER BY c.name_key, c.id LIMIT ? OFFSET ?",
            (*values, limit, offset),
        )

    def get(self, contact_id: int) -> Contact | None:
        found = self._read(f"{_SELECT} WHERE c.id = ?", (contact_id,))
        return found[0] if found else None

    def members(self, group: str) -> list[Contact]:
        """Every contact of a group, by name (an unknown group has none)."""
        return self.listing(group=group, limit=-1)

    def groups(self) -> list[tuple[str, int]]:
        """Each group's name and how many contacts it has, by name."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT g.name, COUNT(m.contact_id) FROM contact_groups g LEFT JOIN "
                "contact_members m ON m.group_id = g.id GROUP BY g.id ORDER BY g.name_key"
            ).fetchall()
        return [(row[0], int(row[1])) for row in rows]

    def _owners(self, numbers: Iterable[str]) -> dict[str, int]:
        """number -> contact id, for those of `numbers` a contact holds (lock held)."""
        wanted = list(dict.fromkeys(numbers))
        found: dict[str, int] = {}
        for start in range(0, len(wanted), IN_BATCH):
            part = wanted[start : start + IN_BATCH]
            marks = ", ".join("?" * len(part))
            query = f"SELECT number, contact_id FROM contact_numbers WHERE number IN ({marks})"  # noqa: S608 - placeholders only
            found.update((row[0], int(row[1])) for row in self._conn.execute(query, part))
        return found

    def by_numbers(self, numbers: Iterable[str]) -> dict[str, Contact]:
        """The contact holding each of `numbers` that one holds (one batched read)."""
        with self._lock:
            owners = self._owners(numbers)
        contacts: dict[int, Contact] = {}
        ids = list(dict.fromkeys(owners.values()))
        for start in range(0, len(ids), IN_BATCH):
            part = ids[start : start + IN_BATCH]
            marks = ", ".join("?" * len(part))
            for contact in self._read(f"{_SELECT} WHERE c.id IN ({marks})", part):
                contacts[contact.id] = contact
        return {number: contacts[owner] for number, owner in owners.items() if owner in contacts}

    def names(self, numbers: Iterable[str]) -> dict[str, str]:
        """The name beside each of `numbers` a named contact holds: what conversations,
        the Replies table and history show (one batched read for a whole page)."""
        wanted = list(dict.fromkeys(numbers))
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(wanted), IN_BATCH):
                part = wanted[start : start + IN_BATCH]
                marks = ", ".join("?" * len(part))
                query = (
                    "SELECT n.number, c.name FROM contact_numbers n JOIN contacts c ON "  # noqa: S608
                    f"c.id = n.contact_id WHERE n.number IN ({marks}) AND c.name <> ''"
                )
                found.update((row[0], row[1]) for row in self._conn.execute(query, part))
        return found

    # ---- changes -----------------------------------------------------------------------

    def add(self, card: ContactCard) -> Contact:
        """A new contact (`ContactError` when the card is unusable or another contact holds
        one of its numbers)."""
        card = _cleaned(card)
        problem = card_problem(card)
        if problem:
            raise ContactError(f"The contact cannot be kept: {problem}.")
        with self._lock, transaction(self._conn):
            taken = self._owners(card.numbers)
            if taken:
                raise ContactError(self._taken_message(taken))
            contact_id = self._insert(card, time.time_ns() // 1000)
        found = self.get(contact_id)
        assert found is not None
        return found

    def update(self, contact_id: int, card: ContactCard) -> Contact:
        """Replace what a contact holds with `card` (its numbers, fields and groups too)."""
        card = _cleaned(card)
        problem = card_problem(card)
        if problem:
            raise ContactError(f"The contact cannot be kept: {problem}.")
        with self._lock, transaction(self._conn):
            taken = {n: c for n, c in self._owners(card.numbers).items() if c != contact_id}
            if taken:
                raise ContactError(self._taken_message(taken))
            if not self._conn.execute(
                "SELECT 1 FROM contacts WHERE id = ?", (contact_id,)
            ).fetchone():
                raise ContactError(f"There is no contact {contact_id} (removed meanwhile?).")
            self._write(contact_id, card, time.time_ns() // 1000)
        found = self.get(contact_id)
        assert found is not None
        return found

    def remove(self, contact_id: int) -> bool:
        with self._lock, transaction(self._conn):
            self._conn.execute("DELETE FROM contact_numbers WHERE contact_id = ?", (contact_id,))
            self._conn.execute("DELETE FROM contact_members WHERE contact_id = ?", (contact_id,))
            return bool(
                self._conn.execute("DELETE FROM contacts WHERE id = ?", (contact_id,)).rowcount
            )

    def merge(self, cards: Sequence[ContactCard]) -> Merged:
        """An import, in one transaction: a card none of whose numbers is known is added;
        one whose numbers one contact holds updates it (the card's name, notes and
        field values win; numbers and groups are added); a card whose numbers two
        contacts hold, or that is unusable, is refused with why."""
        added = updated = 0
        refused: list[Refused] = []
        now = time.time_ns() // 1000
        with self._lock, transaction(self._conn):
            for index, given in enumerate(cards):
                card = _cleaned(given)
                problem = card_problem(card)
                if problem:
                    refused.append(Refused(index, problem))
                    continue
                owners = set(self._owners(card.numbers).values())
                if len(owners) > 1:
                    refused.append(Refused(index, self._taken_message(self._owners(card.numbers))))
                    continue
                if not owners:
                    self._insert(card, now)
                    added += 1
                    continue
                (owner,) = owners
                rows = self._conn.execute(f"{_SELECT} WHERE c.id = ?", (owner,)).fetchall()
                combined = _combined(_contact(rows[0]).card(), card)
                problem = card_problem(combined)
                if problem:
                    refused.append(Refused(index, f"merged with the contact it updates, {problem}"))
                    continue
                self._write(owner, combined, now)
                updated += 1
        return Merged(added, updated, tuple(refused))

    def _taken_message(self, taken: Mapping[str, int]) -> str:
        ids = sorted(set(taken.values()))
        marks = ", ".join("?" * len(ids))
        names = [
            row[0] or "(no name)"
            for row in self._conn.execute(
                f"SELECT name FROM contacts WHERE id IN ({marks}) ORDER BY id",  # noqa: S608
                ids,
            )
        ]
        numbers = ", ".join(sorted(taken)[:3])
        return f"{numbers} already belong{'s' if len(taken) == 1 else ''} to {', '.join(names)}"

    def _insert(self, card: ContactCard, now: int) -> int:
        cursor = self._conn.execute(
            "INSERT INTO contacts(name, name_key, notes, fields, created_us, updated_us) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (card.name, name_key(card.name), card.notes, _fields_json(card), now, now),
        )
        contact_id = int(cursor.lastrowid or 0)
        self._links(contact_id, card)
        return contact_id

    def _write(self, contact_id: int, card: ContactCard, now: int) -> None:
        self._conn.execute(
            "UPDATE contacts SET name = ?, name_key = ?, notes = ?, fields = ?, updated_us = ? "
            "WHERE id = ?",
            (card.name, name_key(card.name), card.notes, _fields_json(card), now, contact_id),
        )
        self._conn.execute("DELETE FROM contact_numbers WHERE contact_id = ?", (contact_id,))
        self._conn.execute("DELETE FROM contact_members WHERE contact_id = ?", (contact_id,))
        self._links(contact_id, card)

    def _links(self, contact_id: int, card: ContactCard) -> None:
        self._conn.executemany(
            "INSERT INTO contact_numbers(number, contact_id, position) VALUES (?, ?, ?)",
            [(number, contact_id, position) for position, number in enumerate(card.numbers)],
        )
        for group in card.groups:
            self._conn.execute(
                "INSERT INTO contact_groups(name, name_key) VALUES (?, ?) "
                "ON CONFLICT(name_key) DO NOTHING",
                (group, name_key(group)),
            )
            self._conn.execute(
                "INSERT OR IGNORE INTO contact_members(group_id, contact_id) "
                "SELECT id, ? FROM contact_groups WHERE name_key = ?",
                (contact_id, name_key(group)),
            )

    def remove_group(self, group: str) -> bool:
        """Forget a group (its contacts stay)."""
        with self._lock, transaction(self._conn):
            key = name_key(group)
            self._conn.execute(
                "DELETE FROM contact_members WHERE group_id IN "
                "(SELECT id FROM contact_groups WHERE name_key = ?)",
                (key,),
            )
            return bool(
                self._conn.execute("DELETE FROM contact_groups WHERE name_key = ?", (key,)).rowcount
            )


def _fields_json(card: ContactCard) -> str:
    return json.dumps(dict(card.fields), ensure_ascii=False)


def _cleaned(card: ContactCard) -> ContactCard:
    """Spacing trimmed, numbers and groups each once, fields each once by name."""
    return ContactCard(
        name=_SPACES.sub(" ", card.name.strip()),
        numbers=tuple(dict.fromkeys(n.strip() for n in card.numbers if n.strip())),
        fields=unique_fields(card.fields),
        groups=unique_groups(card.groups),
        notes=card.notes.strip(),
    )


def _combined(kept: ContactCard, new: ContactCard) -> ContactCard:
    """An import's card laid over the contact it updates."""
    return ContactCard(
        name=new.name or kept.name,
        numbers=tuple(dict.fromkeys((*kept.numbers, *new.numbers))),
        fields=unique_fields((*kept.fields, *new.fields)),
        groups=unique_groups((*kept.groups, *new.groups)),
        notes=new.notes or kept.notes,
    )
