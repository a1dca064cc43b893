"""The address book of a profile: contacts, their numbers, fields and groups.

A number belongs to one contact at most (`contact_numbers` is keyed by it), so a
number always shows one name beside it, and an import that brings a number back
updates the contact holding it instead of making a second one. Group and contact
names are compared by their letter-case-folded form (`name_key`), kept beside them
because SQLite's own case folding knows ASCII only.

Whether a contact's number opted out is asked of the opt-out list each time the
contact is read (`Contact.opted_out`), never copied here, so a STOP shows at once.

The address book is shared data (a profile's file, or a team's server): the SQL is
written once for both engines; only the aggregate that lists a contact's numbers
and groups is each engine's own (`json_group_array`, `json_agg`). Searches fold
letter case on both (PostgreSQL's LIKE does not by itself).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from gwdesk.domain.contacts import ContactCard, card_problem, unique_fields, unique_groups
from gwdesk.domain.number_search import number_query
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.templates import field_key
from gwdesk.store.database import StoreError, store_methods
from gwdesk.store.engine import Database, Session, SqliteDatabase
from gwdesk.store.optouts import OptOutStore
from gwdesk.store.shared import SharedData, database_for

_SPACES: Final = re.compile(" {2,}")
#: Numbers or ids per statement (SQLite's variable limit is far above; this bounds one read).
IN_BATCH: Final = 500
NO_LIMIT: Final = 2**62
"""A listing's limit when none is wanted (both engines take it; PostgreSQL refuses -1)."""


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
_SERVER_SELECT: Final = """
SELECT c.id, c.name, c.notes, c.fields,
    (SELECT CAST(COALESCE(json_agg(number ORDER BY position), '[]') AS TEXT)
        FROM contact_numbers WHERE contact_id = c.id) AS numbers,
    (SELECT CAST(COALESCE(json_agg(g.name ORDER BY g.name_key), '[]') AS TEXT)
        FROM contact_members m JOIN contact_groups g ON g.id = m.group_id
        WHERE m.contact_id = c.id) AS groups
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
    """A profile's or a team's contacts; safe to use from any thread.

    `data`: a profile's path (a connection of its own: an import is one long
    transaction, off the GUI thread), its `SharedData`, or a `Database` already open."""

    def __init__(
        self,
        data: Path | str | SharedData | Database,
        optouts: OptOutStore | None = None,
        *,
        region: str = DEFAULT_REGION,
    ) -> None:
        self.database, self._owned = database_for(data)
        self.region = region
        """Where a national number typed in a search is read."""
        self.path = data if isinstance(data, Path | str) else self.database.location
        self.optouts = optouts
        """The opt-out list a contact's numbers are looked up in as it is read."""
        if self._owned and isinstance(self.database, SqliteDatabase):
            self.database.conn.execute("PRAGMA foreign_keys=ON")
        self._select = _SERVER_SELECT if self.database.kind == "postgresql" else _SELECT

    def __repr__(self) -> str:
        return f"ContactStore({str(self.path)!r})"

    def close(self) -> None:
        if self._owned:
            self.database.close()

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
            number = number_query(needle, self.region, min_digits=1)
            if number is not None:
                clauses.append(
                    "c.id IN (SELECT contact_id FROM contact_numbers WHERE number LIKE ?)"
                )
                values.append(number.like)  # digits: no wildcard among them
            else:
                # name_key is folded already; notes are folded by both engines' lower()
                # (SQLite's LIKE ignores ASCII case, PostgreSQL's does not).
                clauses.append(
                    "(c.name_key LIKE ? ESCAPE '\\' OR lower(c.notes) LIKE lower(?) ESCAPE '\\')"
                )
                values.extend([_like(needle.casefold()), _like(needle)])
        return (" WHERE " + " AND ".join(clauses) if clauses else "", values)

    def _read(self, query: str, values: Sequence[object]) -> list[Contact]:
        with self.database.session() as session:
            rows = session.execute(query, values).fetchall()
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
        with self.database.session() as session:
            row = session.execute(f"SELECT COUNT(*) FROM contacts c{where}", values).fetchone()  # noqa: S608 - built from constant clauses
        return int(row[0])

    def listing(
        self, search: str = "", *, group: str | None = None, limit: int = 1000, offset: int = 0
    ) -> list[Contact]:
        """Contacts by name; `search` matches digits of a number, or words of the name or
        the notes; `group` keeps that group's members (`limit` below 0: all of them)."""
        where, values = self._where(search, group)
        return self._read(
            f"{self._select}{where} ORDER BY c.name_key, c.id LIMIT ? OFFSET ?",
            (*values, NO_LIMIT if limit < 0 else limit, offset),
        )

    def get(self, contact_id: int) -> Contact | None:
        found = self._read(f"{self._select} WHERE c.id = ?", (contact_id,))
        return found[0] if found else None

    def members(self, group: str) -> list[Contact]:
        """Every contact of a group, by name (an unknown group has none)."""
        return self.listing(group=group, limit=-1)

    def groups(self) -> list[tuple[str, int]]:
        """Each group's name and how many contacts it has, by name."""
        with self.database.session() as session:
            rows = session.execute(
                "SELECT g.name, COUNT(m.contact_id) FROM contact_groups g LEFT JOIN "
                "contact_members m ON m.group_id = g.id GROUP BY g.id, g.name, g.name_key "
                "ORDER BY g.name_key"
            ).fetchall()
        return [(row[0], int(row[1])) for row in rows]

    def by_numbers(self, numbers: Iterable[str]) -> dict[str, Contact]:
        """The contact holding each of `numbers` that one holds (one batched read)."""
        with self.database.session() as session:
            owners = _owners(session, numbers)
        contacts: dict[int, Contact] = {}
        ids = list(dict.fromkeys(owners.values()))
        for start in range(0, len(ids), IN_BATCH):
            part = ids[start : start + IN_BATCH]
            marks = ", ".join("?" * len(part))
            for contact in self._read(f"{self._select} WHERE c.id IN ({marks})", part):
                contacts[contact.id] = contact
        return {number: contacts[owner] for number, owner in owners.items() if owner in contacts}

    def names(self, numbers: Iterable[str]) -> dict[str, str]:
        """The name beside each of `numbers` a named contact holds: what conversations,
        the Replies table and history show (one batched read for a whole page)."""
        wanted = list(dict.fromkeys(numbers))
        found: dict[str, str] = {}
        with self.database.session() as session:
            for start in range(0, len(wanted), IN_BATCH):
                part = wanted[start : start + IN_BATCH]
                marks = ", ".join("?" * len(part))
                query = (
                    "SELECT n.number, c.name FROM contact_numbers n JOIN contacts c ON "  # noqa: S608
                    f"c.id = n.contact_id WHERE n.number IN ({marks}) AND c.name <> ''"
                )
                found.update((row[0], row[1]) for row in session.execute(query, part))
        return found

    # ---- changes -----------------------------------------------------------------------

    def add(self, card: ContactCard) -> Contact:
        """A new contact (`ContactError` when the card is unusable or another contact holds
        one of its numbers)."""
        card = _cleaned(card)
        problem = card_problem(card)
        if problem:
            raise ContactError(f"The contact cannot be kept: {problem}.")
        with self.database.transaction() as session:
            taken = _owners(session, card.numbers)
            if taken:
                raise ContactError(_taken_message(session, taken))
            contact_id = _insert(session, card, time.time_ns() // 1000)
        found = self.get(contact_id)
        assert found is not None
        return found

    def update(self, contact_id: int, card: ContactCard) -> Contact:
        """Replace what a contact holds with `card` (its numbers, fields and groups too)."""
        card = _cleaned(card)
        problem = card_problem(card)
        if problem:
            raise ContactError(f"The contact cannot be kept: {problem}.")
        with self.database.transaction() as session:
            taken = {n: c for n, c in _owners(session, card.numbers).items() if c != contact_id}
            if taken:
                raise ContactError(_taken_message(session, taken))
            if not session.execute("SELECT 1 FROM contacts WHERE id = ?", (contact_id,)).fetchone():
                raise ContactError(f"There is no contact {contact_id} (removed meanwhile?).")
            _write(session, contact_id, card, time.time_ns() // 1000)
        found = self.get(contact_id)
        assert found is not None
        return found

    def remove(self, contact_id: int) -> bool:
        with self.database.transaction() as session:
            session.execute("DELETE FROM contact_numbers WHERE contact_id = ?", (contact_id,))
            session.execute("DELETE FROM contact_members WHERE contact_id = ?", (contact_id,))
            return bool(
                session.execute("DELETE FROM contacts WHERE id = ?", (contact_id,)).rowcount
            )

    def merge(self, cards: Sequence[ContactCard]) -> Merged:
        """An import, in one transaction: a card none of whose numbers is known is added;
        one whose numbers one contact holds updates it (the card's name, notes and
        field values win; numbers and groups are added); a card whose numbers two
        contacts hold, or that is unusable, is refused with why.

        The cards are taken in order as if each were stored before the next is read
        (a later card may update a contact an earlier one added), but planned in
        memory and written in a few statements per 500 contacts: on a team's server
        a statement is a round trip, and an import of 10,000 contacts must not make
        50,000 of them. Another console adding one of the numbers meanwhile fails the
        import whole (`StoreError`), and nothing of it is kept."""
        refused: list[Refused] = []
        usable: list[tuple[int, ContactCard]] = []
        for index, given in enumerate(cards):
            card = _cleaned(given)
            problem = card_problem(card)
            if problem:
                refused.append(Refused(index, problem))
            else:
                usable.append((index, card))
        with self.database.transaction() as session:
            plan = _Import(session, self._select, [n for _, c in usable for n in c.numbers])
            for index, card in usable:
                reason = plan.take(card)
                if reason is not None:
                    refused.append(Refused(index, reason))
            plan.write(session, time.time_ns() // 1000)
        refused.sort(key=lambda r: r.index)
        return Merged(plan.added, plan.updated, tuple(refused))

    def remove_group(self, group: str) -> bool:
        """Forget a group (its contacts stay)."""
        with self.database.transaction() as session:
            key = name_key(group)
            session.execute(
                "DELETE FROM contact_members WHERE group_id IN "
                "(SELECT id FROM contact_groups WHERE name_key = ?)",
                (key,),
            )
            return bool(
                session.execute("DELETE FROM contact_groups WHERE name_key = ?", (key,)).rowcount
            )


class _Import:
    """An import planned in memory (see `ContactStore.merge`): every contact it touches as
    it will be, keyed by id (a new one by a stand-in below 0 until it is stored)."""

    def __init__(self, session: Session, select: str, numbers: list[str]) -> None:
        self.owners = _owners(session, numbers)
        self.cards: dict[int, ContactCard] = {}
        ids = sorted(set(self.owners.values()))
        for start in range(0, len(ids), IN_BATCH):
            part = ids[start : start + IN_BATCH]
            marks = ", ".join("?" * len(part))
            for row in session.execute(f"{select} WHERE c.id IN ({marks})", part):
                self.cards[int(row["id"])] = _contact(row).card()
        self.new: list[int] = []
        self.changed: dict[int, None] = {}
        self.groups: dict[str, str] = {}
        """Each group's key and its first spelling, in the order the cards named them."""
        self.added = self.updated = 0

    def take(self, card: ContactCard) -> str | None:
        """Add or merge one card; why not, when it is refused."""
        holders = {n: self.owners[n] for n in card.numbers if n in self.owners}
        owners = set(holders.values())
        if len(owners) > 1:
            return self._taken_message(holders)
        if not owners:
            owner = -(len(self.new) + 1)
            self.new.append(owner)
            self.added += 1
            combined = card
        else:
            (owner,) = owners
            combined = _combined(self.cards[owner], card)
            problem = card_problem(combined)
            if problem:
                return f"merged with the contact it updates, {problem}"
            if owner > 0:
                self.changed[owner] = None
            self.updated += 1
        self.cards[owner] = combined
        for number in combined.numbers:
            self.owners[number] = owner
        for group in combined.groups:
            self.groups.setdefault(name_key(group), group)
        return None

    def _taken_message(self, taken: Mapping[str, int]) -> str:
        ids = sorted(set(taken.values()), key=lambda i: (i < 0, abs(i)))  # the stored order
        names = [self.cards[i].name or "(no name)" for i in ids]
        numbers = ", ".join(sorted(taken)[:3])
        return f"{numbers} already belong{'s' if len(taken) == 1 else ''} to {', '.join(names)}"

    def write(self, session: Session, now: int) -> None:
        ids = dict(zip(self.new, self._insert(session, now), strict=True))
        changed = list(self.changed)
        session.executemany(
            "UPDATE contacts SET name = ?, name_key = ?, notes = ?, fields = ?, updated_us = ? "
            "WHERE id = ?",
            [(*_columns(self.cards[i]), now, i) for i in changed],
        )
        for table in ("contact_numbers", "contact_members"):
            session.executemany(
                f"DELETE FROM {table} WHERE contact_id = ?",  # noqa: S608 - two fixed names
                [(i,) for i in changed],
            )
        touched = [(ids[i], self.cards[i]) for i in self.new] + [
            (i, self.cards[i]) for i in changed
        ]
        session.executemany(
            "INSERT INTO contact_numbers(number, contact_id, position) VALUES (?, ?, ?)",
            [(n, i, p) for i, card in touched for p, n in enumerate(card.numbers)],
        )
        session.executemany(
            "INSERT INTO contact_groups(name, name_key) VALUES (?, ?) "
            "ON CONFLICT(name_key) DO NOTHING",
            [(name, key) for key, name in self.groups.items()],
        )
        session.executemany(
            "INSERT INTO contact_members(group_id, contact_id) "
            "SELECT id, ? FROM contact_groups WHERE name_key = ? ON CONFLICT DO NOTHING",
            [(i, name_key(g)) for i, card in touched for g in card.groups],
        )

    def _insert(self, session: Session, now: int) -> list[int]:
        """Store the new contacts, a multi-row statement per `IN_BATCH`; their ids in order
        (each engine numbers one statement's rows as it inserts them, in order)."""
        made: list[int] = []
        for start in range(0, len(self.new), IN_BATCH):
            part = [self.cards[i] for i in self.new[start : start + IN_BATCH]]
            rows = ", ".join("(?, ?, ?, ?, ?, ?)" for _ in part)
            values = [v for card in part for v in (*_columns(card), now, now)]
            found = session.execute(
                "INSERT INTO contacts(name, name_key, notes, fields, created_us, updated_us) "  # noqa: S608
                f"VALUES {rows} RETURNING id",
                values,
            ).fetchall()
            made.extend(sorted(int(row[0]) for row in found))
        return made


def _columns(card: ContactCard) -> tuple[str, str, str, str]:
    return (card.name, name_key(card.name), card.notes, _fields_json(card))


def _owners(session: Session, numbers: Iterable[str]) -> dict[str, int]:
    """number -> contact id, for those of `numbers` a contact holds."""
    wanted = list(dict.fromkeys(numbers))
    found: dict[str, int] = {}
    for start in range(0, len(wanted), IN_BATCH):
        part = wanted[start : start + IN_BATCH]
        marks = ", ".join("?" * len(part))
        query = f"SELECT number, contact_id FROM contact_numbers WHERE number IN ({marks})"  # noqa: S608 - placeholders only
        found.update((row[0], int(row[1])) for row in session.execute(query, part))
    return found


def _taken_message(session: Session, taken: Mapping[str, int]) -> str:
    ids = sorted(set(taken.values()))
    marks = ", ".join("?" * len(ids))
    names = [
        row[0] or "(no name)"
        for row in session.execute(
            f"SELECT name FROM contacts WHERE id IN ({marks}) ORDER BY id",  # noqa: S608
            ids,
        )
    ]
    numbers = ", ".join(sorted(taken)[:3])
    return f"{numbers} already belong{'s' if len(taken) == 1 else ''} to {', '.join(names)}"


def _insert(session: Session, card: ContactCard, now: int) -> int:
    made = session.execute(
        "INSERT INTO contacts(name, name_key, notes, fields, created_us, updated_us) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (card.name, name_key(card.name), card.notes, _fields_json(card), now, now),
    ).fetchall()
    contact_id = int(made[0][0])
    _links(session, contact_id, card)
    return contact_id


def _write(session: Session, contact_id: int, card: ContactCard, now: int) -> None:
    session.execute(
        "UPDATE contacts SET name = ?, name_key = ?, notes = ?, fields = ?, updated_us = ? "
        "WHERE id = ?",
        (card.name, name_key(card.name), card.notes, _fields_json(card), now, contact_id),
    )
    session.execute("DELETE FROM contact_numbers WHERE contact_id = ?", (contact_id,))
    session.execute("DELETE FROM contact_members WHERE contact_id = ?", (contact_id,))
    _links(session, contact_id, card)


def _links(session: Session, contact_id: int, card: ContactCard) -> None:
    session.executemany(
        "INSERT INTO contact_numbers(number, contact_id, position) VALUES (?, ?, ?)",
        [(number, contact_id, position) for position, number in enumerate(card.numbers)],
    )
    for group in card.groups:
        session.execute(
            "INSERT INTO contact_groups(name, name_key) VALUES (?, ?) "
            "ON CONFLICT(name_key) DO NOTHING",
            (group, name_key(group)),
        )
        session.execute(
            "INSERT INTO contact_members(group_id, contact_id) "
            "SELECT id, ? FROM contact_groups WHERE name_key = ? ON CONFLICT DO NOTHING",
            (contact_id, name_key(group)),
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
