"""Merge fields as the console maps them: where each placeholder's value comes from.

A placeholder takes, by default, the value of the CSV column or contact field of the
same name in any letter case (`field_key`: `{First Name}` is the column `first
name`), as `gwdesk.app.personal` reads them. The operator may point a placeholder
at another column or contact field (`{first name}` filled from `Given`), or at none
(the placeholder's fallback then stands, or the recipient cannot be sent to): a
`Mapping` of placeholder key to source key, or None. Recipients are gathered with
the values of every source the mapping names (`gathering`), then given to the
template under the placeholders' own keys (`remapped`), so `plan_personal` checks
and renders them as it does any list.

A console send may take its recipients from several places at once (a file or
pasted numbers, and contact groups): `combined` makes one list of them, each number
once. A single message to one number (the Send tab, a conversation's reply) is
filled from that number's contact (`fill_for_number`), or refused with the reason:
never a message with a hole in it. Blocking, all of it: a worker thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Final

from gwdesk.app.personal import (
    Recipients,
    column_keys,
    contact_recipients,
    number_recipients,
    table_recipients,
)
from gwdesk.app.sms import refuse
from gwdesk.domain.contacts import control_in
from gwdesk.domain.hidden_chars import describe_hidden
from gwdesk.domain.numbers import display
from gwdesk.domain.templates import MissingValue, Placeholder, Template
from gwdesk.importing.recipients import RecipientList
from gwdesk.importing.table import Table
from gwdesk.store.contacts import Contact, ContactStore

FieldMap = Mapping[str, str | None]
"""Placeholder key -> the key of the column or contact field that fills it (None: no
value, the fallback stands). A placeholder not named takes the source of its own key."""
MESSAGE_FIELD: Final = "Message"


def source_of(key: str, mapping: FieldMap) -> str | None:
    """The source key that fills placeholder `key`."""
    return mapping.get(key, key)


def gathering(template: Template, mapping: FieldMap) -> Template:
    """A template asking for every value the mapping reads (the placeholders' own keys
    and the sources they are pointed at): what recipients are gathered with."""
    keys = dict.fromkeys(template.fields)
    keys.update(dict.fromkeys(s for s in mapping.values() if s is not None))
    return Template("", tuple(Placeholder(k, k, None, 1) for k in keys))


def remapped(recipients: Recipients, template: Template, mapping: FieldMap) -> Recipients:
    """Recipients gathered by `gathering`, their values under the placeholders' keys."""
    if all(source_of(k, mapping) == k for k in template.fields):
        return recipients
    sources = {k: source_of(k, mapping) for k in template.fields}

    def values(given: Mapping[str, str]) -> dict[str, str]:
        return {k: given[s] for k, s in sources.items() if s is not None and s in given}

    items = tuple(replace(r, values=values(r.values)) for r in recipients.items)
    offered = frozenset(k for k, s in sources.items() if s is not None and s in recipients.offered)
    return replace(recipients, items=items, offered=offered)


def combined(parts: Sequence[Recipients]) -> Recipients:
    """One list from several sources, in order, each number once (its first source
    keeps it). Rows are numbered on across sources, so each stays one recipient's."""
    if len(parts) == 1:
        return parts[0]
    items, invalid = [], []
    seen: set[str] = set()
    duplicates, base = 0, 0
    offered: set[str] = set()
    for part in parts:
        top = 0
        for recipient in part.items:
            top = max(top, recipient.row)
            if recipient.number in seen:
                duplicates += 1
                continue
            seen.add(recipient.number)
            items.append(replace(recipient, row=recipient.row + base) if base else recipient)
        for row in part.invalid:
            top = max(top, row.row)
            invalid.append(replace(row, row=row.row + base) if base else row)
        duplicates += part.duplicates
        offered |= part.offered
        base += top
    sources = " and ".join(p.source for p in parts if p.source)
    return Recipients(tuple(items), tuple(invalid), duplicates, frozenset(offered), sources)


def personal_recipients(
    template: Template,
    mapping: FieldMap,
    region: str,
    contacts: ContactStore | None,
    *,
    table: Table | None = None,
    column: int = 0,
    file_name: str = "",
    pasted: RecipientList | None = None,
    groups: Iterable[tuple[str, Sequence[Contact]]] = (),
) -> Recipients:
    """A console send's recipients, valued for `template` as `mapping` says: a file's
    rows (its columns, then the contacts holding their numbers), or pasted numbers
    (their contacts), then each contact group's members (their fields)."""
    gather = gathering(template, mapping)
    parts: list[Recipients] = []
    if table is not None:
        parts.append(
            table_recipients(
                table, column, region, gather, contacts, source=file_name or "the file"
            )
        )
    elif pasted is not None and (pasted.numbers or pasted.invalid):
        found = number_recipients(pasted.numbers, gather, contacts)
        parts.append(
            replace(
                found,
                invalid=pasted.invalid,
                duplicates=pasted.duplicates,
                source="the pasted numbers",
            )
        )
    for name, members in groups:
        if members:
            parts.append(contact_recipients(members, gather, source=f"the group {name!r}"))
    if not parts:
        raise refuse(
            "There is no recipient yet: paste numbers, import a file or choose a group.",
            "Recipients",
        )
    return remapped(combined(parts), template, mapping)


def offered_sources(table: Table | None, recipients: Recipients) -> tuple[list[str], list[str]]:
    """(column keys, contact field keys) a placeholder may be pointed at, in order."""
    columns = column_keys(table) if table is not None else []
    known = set(columns)
    fields = sorted(k for k in recipients.offered if k not in known)
    return columns, fields


def fill_for_number(template: Template, number: str, contacts: ContactStore | None) -> str:
    """The text of a single message to `number` (international digits), its placeholders
    filled from the contact holding the number; `ValidationError` naming the Message
    field when one cannot be (no such contact, no such field, a value that holds a
    control character)."""
    if not template.personal:
        return template.render({})
    (recipient,) = number_recipients([number], template, contacts).items
    try:
        text = template.render(recipient.values)
    except MissingValue as missing:
        shown = missing.placeholder.shown
        if not recipient.who:
            why = f"{display(number)} is not one of your contacts (a list's row would give it)"
        else:
            why = f"the contact {recipient.who} has no field {missing.placeholder.name!r}"
        raise refuse(
            f"No value for {shown}: {why}. Give a fallback ({{name|there}}) or fill the field in.",
            MESSAGE_FIELD,
        ) from None
    for placeholder, value in template.merged(recipient.values):
        bad = control_in(value, lines=True)
        if bad is not None:
            raise refuse(
                f"The value for {placeholder.shown} holds {describe_hidden(bad)}: "
                "correct the contact first.",
                MESSAGE_FIELD,
            )
    return text


def with_group_numbers(
    base: RecipientList | None, groups: Iterable[Sequence[Contact]]
) -> RecipientList | None:
    """A checked list with the members of contact groups added (each at its first
    number, each number once): the recipients of a message that is the same for all."""
    members = [c for group in groups for c in group]
    if not members:
        return base
    numbers = list(base.numbers) if base is not None else []
    seen = set(numbers)
    duplicates = base.duplicates if base is not None else 0
    for contact in members:
        if contact.number in seen:
            duplicates += 1
            continue
        seen.add(contact.number)
        numbers.append(contact.number)
    invalid = base.invalid if base is not None else ()
    blank = base.blank if base is not None else 0
    return RecipientList(tuple(numbers), invalid, duplicates, blank)
