"""A contact as the address book keeps it, and what a contact may hold.

A contact has a name, one or more numbers (international digits, as the gateway
writes them: the first is the one a group send uses), custom fields (any names:
they are the merge fields of a personal message, matched as `field_key` matches
them), groups and notes. Its opt-out state is not part of it: the account's
opt-out list says it, whenever it is asked.

Every import path and every change by hand ends in a `ContactCard` that
`card_problem` accepts, so a hostile file cannot put control characters, endless
values or thousands of fields into the store. Line breaks are allowed in notes and
field values (an address), never in a name, a field's name or a group's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from gwdesk.domain.hidden_chars import describe_hidden
from gwdesk.domain.templates import field_key

MAX_NAME: Final = 200
MAX_NUMBERS: Final = 20
MAX_NUMBER: Final = 64
"""Characters of one number (a normalised one has at most 15 digits; as typed, 64)."""
MAX_FIELDS: Final = 100
MAX_FIELD_NAME: Final = 64
MAX_VALUE: Final = 1_000
MAX_NOTES: Final = 5_000
MAX_GROUPS: Final = 50
MAX_GROUP: Final = 100
#: Control characters (C0, DEL, C1), the Unicode line separators and the bidi embeddings,
#: overrides and isolates (which make text display as something else); tab, LF and CR aside.
_CONTROL_KEEPING_LINES: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Fields whose names the address book itself gives a value to when a message is merged.
NAME_FIELD: Final = "name"
NUMBER_FIELD: Final = "number"


@dataclass(frozen=True, slots=True)
class ContactCard:
    """A contact as imported or typed: its numbers already normalised."""

    name: str
    numbers: tuple[str, ...]
    fields: tuple[tuple[str, str], ...] = ()
    """(field name as written, value), each name once (by `field_key`)."""
    groups: tuple[str, ...] = ()
    notes: str = ""


def control_in(text: str, *, lines: bool = False) -> str | None:
    """The first control character of `text` (line breaks allowed when `lines`), or None."""
    found = (_CONTROL_KEEPING_LINES if lines else _CONTROL).search(text)
    return found.group() if found else None


def _text_problem(what: str, text: str, limit: int, *, lines: bool = False) -> str | None:
    if len(text) > limit:
        return f"{what} is longer than {limit:,} characters"
    bad = control_in(text, lines=lines)
    if bad is not None:
        return f"{what} holds {describe_hidden(bad)}"
    return None


def unique_fields(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Fields with names trimmed, empty values dropped, each name once (the last value
    given for it wins, under the spelling it was given last)."""
    found: dict[str, tuple[str, str]] = {}
    for name, value in pairs:
        name, value = name.strip(), value.strip()
        if name and value:
            found.pop(field_key(name), None)
            found[field_key(name)] = (name, value)
    return tuple(found.values())


def unique_groups(names: Iterable[str]) -> tuple[str, ...]:
    """Group names trimmed, each once whatever its letter case (first spelling kept)."""
    found: dict[str, str] = {}
    for name in names:
        name = " ".join(name.split())
        if name:
            found.setdefault(name.casefold(), name)
    return tuple(found.values())


def card_problem(card: ContactCard) -> str | None:
    """Why the card cannot be kept (in words for the operator), or None."""
    if not card.numbers:
        return "it has no phone number"
    if len(card.numbers) > MAX_NUMBERS:
        return f"it has {len(card.numbers)} numbers; a contact keeps at most {MAX_NUMBERS}"
    for number in card.numbers:  # normalised by every import path; a caller's may not be
        problem = _text_problem(f"the number {number[:30]!r}", number, MAX_NUMBER)
        if problem:
            return problem
    problem = _text_problem("the name", card.name, MAX_NAME)
    if problem:
        return problem
    if len(card.fields) > MAX_FIELDS:
        return f"it has {len(card.fields)} fields; a contact keeps at most {MAX_FIELDS}"
    for name, value in card.fields:
        if not name.strip():
            return "a field has no name"
        problem = _text_problem(f"the field name {name[:30]!r}", name, MAX_FIELD_NAME)
        problem = problem or _text_problem(f"field {name[:30]!r}", value, MAX_VALUE, lines=True)
        if problem:
            return problem
    if len(card.groups) > MAX_GROUPS:
        return f"it is in {len(card.groups)} groups; a contact is in at most {MAX_GROUPS}"
    for group in card.groups:
        problem = _text_problem(f"the group {group[:30]!r}", group, MAX_GROUP)
        if problem:
            return problem
    return _text_problem("the notes", card.notes, MAX_NOTES, lines=True)
