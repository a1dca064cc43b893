"""Personal messages: one template, each recipient's own text, all made before any is sent.

"Hi {first name}, your check-up at {clinic} is due" goes to a list whose values come
from the CSV's columns (`table_recipients`), from the contacts holding its numbers,
or from a contact group (`group_recipients`). `plan_personal` renders every
recipient's text and checks each once, by the rules every SMS meets
(`app.sms.counted_text`: not empty, no NUL, at most ten parts; a marketing
message's opt-out instruction appended first), and says what the send will be
before anything is recorded: the parts per message as a range and in total, the
recipients whose own values turn the message into UCS-2 ("Zoë") or add a part,
and every recipient that cannot be sent to, with why (a value missing with no
fallback, a value holding a control character, a text too long). A recipient with
a hole in its message is never sent to.

The plan is what is recorded: identical texts share requests of up to 100
recipients, every other text is a request of its own (`PersonalPlan.requests`),
each an outbox entry keeping its own text, so a resumed send (`gwdesk outbox
resume`, after a crash) sends each recipient exactly their message, once.
Building a plan is blocking CPU work (100,000 rows in well under two seconds):
`Sending.plan_personal` runs it on a worker thread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final

from gwdesk.app.send_values import chunked
from gwdesk.app.sms import (
    Compliance,
    SmsForm,
    SmsMessage,
    check_options,
    counted_text,
    refuse,
    with_instruction,
)
from gwdesk.domain.contacts import NAME_FIELD, NUMBER_FIELD, control_in
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.funds import Funds
from gwdesk.domain.hidden_chars import describe_hidden
from gwdesk.domain.numbers import display
from gwdesk.domain.segments import Encoding, SegmentInfo, count_segments, non_gsm_characters
from gwdesk.domain.templates import MissingValue, Template, field_key
from gwdesk.importing.decoding import ImportFailed
from gwdesk.importing.fastnumbers import CachedNormaliser, Unusable
from gwdesk.importing.recipients import InvalidRow, column_entries
from gwdesk.importing.table import ALL_COLUMNS, Table
from gwdesk.store.contacts import Contact, ContactStore
from gwdesk.store.optouts import OptOut

#: What a report shows of a long list of named recipients before "and N more".
SHOWN: Final = 20


@dataclass(frozen=True, slots=True)
class Recipient:
    """One recipient of a personal send, as its source gave it."""

    row: int
    """The file's row (the header is row 1), or the place in a group or list."""
    number: str
    """International digits."""
    values: Mapping[str, str]
    """Merge values by `field_key` (only those the template asks for)."""
    who: str = ""
    """A contact's name, when a contact is the recipient."""


@dataclass(frozen=True, slots=True)
class Recipients:
    """A personal send's list, before any text is made."""

    items: tuple[Recipient, ...]
    invalid: tuple[InvalidRow, ...] = ()
    duplicates: int = 0
    offered: frozenset[str] = frozenset()
    """The field keys the source has at all (a CSV's headers, contacts' fields)."""
    source: str = ""
    """In words: `people.csv`, `the group Patients`."""


# ---- sources -----------------------------------------------------------------------------


def _contact_values(contact: Contact, number: str, wanted: frozenset[str]) -> dict[str, str]:
    values = {k: v for k, v in contact.values().items() if k in wanted}
    if NAME_FIELD in wanted and contact.name:
        values[NAME_FIELD] = contact.name
    if NUMBER_FIELD in wanted:
        values[NUMBER_FIELD] = display(number)
    return values


def _contact_keys(contacts: Iterable[Contact]) -> frozenset[str]:
    keys = {NAME_FIELD, NUMBER_FIELD}
    for contact in contacts:
        keys.update(field_key(name) for name, _ in contact.fields)
    return frozenset(keys)


def column_keys(table: Table) -> list[str]:
    """Each column's field key: its header, or its number (`{2}`) without a header."""
    titles = table.titles()
    return [field_key(title) or str(index + 1) for index, title in enumerate(titles)]


def table_recipients(
    table: Table,
    column: int,
    region: str,
    template: Template,
    contacts: ContactStore | None = None,
    *,
    source: str = "",
) -> Recipients:
    """The rows of a CSV with the values `template` asks for: the row's own cells, then
    (for what the row leaves blank or has no column for) the fields of the contact
    holding its number. Numbers are checked and deduplicated as a recipient import
    checks them (the first row of a number is kept). Blocking."""
    if column == ALL_COLUMNS or not 0 <= column < max(1, table.width):
        raise ImportFailed("Choose the column of phone numbers: a personal send takes one.")
    keys = column_keys(table)
    wanted = frozenset(template.fields)
    taken = [(index, key) for index, key in enumerate(keys) if key in wanted]
    reader = CachedNormaliser(region)
    rows = table.rows
    items: list[Recipient] = []
    invalid: list[InvalidRow] = []
    seen: set[str] = set()
    duplicates = 0
    for entry in column_entries(table, column):
        if isinstance(entry, int):
            continue
        if isinstance(entry, InvalidRow):
            invalid.append(entry)
            continue
        row_number, text = entry
        number = reader.read(text)
        if isinstance(number, Unusable):
            invalid.append(InvalidRow(row_number, text, number.reason))
            continue
        if number in seen:
            duplicates += 1
            continue
        seen.add(number)
        cells = rows[row_number - 1]
        width = len(cells)
        values = {key: cells[i].strip() for i, key in taken if i < width and cells[i].strip()}
        items.append(Recipient(row_number, number, values))
    offered = frozenset(keys)
    found = contacts.by_numbers(r.number for r in items) if contacts is not None else {}
    if found:
        items = [_filled(r, found.get(r.number), wanted) for r in items]
        offered |= _contact_keys(found.values())
    return Recipients(tuple(items), tuple(invalid), duplicates, offered, source)


def _filled(recipient: Recipient, contact: Contact | None, wanted: frozenset[str]) -> Recipient:
    """The row's values over its contact's: what the row leaves blank, the contact fills."""
    if contact is None:
        return recipient
    values = _contact_values(contact, recipient.number, wanted)
    values.update(recipient.values)
    return replace(recipient, values=values, who=contact.name)


def contact_recipients(
    contacts: Sequence[Contact], template: Template, *, source: str = ""
) -> Recipients:
    """Contacts as recipients, each at its first number, its fields as the values
    (`{name}` and `{number}` too)."""
    wanted = frozenset(template.fields)
    items = tuple(
        Recipient(place, c.number, _contact_values(c, c.number, wanted), c.name)
        for place, c in enumerate(contacts, start=1)
    )
    return Recipients(items, offered=_contact_keys(contacts), source=source)


def group_recipients(store: ContactStore, group: str, template: Template) -> Recipients:
    """A contact group as recipients (blocking: the group is read from the store)."""
    members = store.members(group)
    if not members:
        raise refuse(f"The group {group!r} has no contacts.", "Recipients")
    return contact_recipients(members, template, source=f"the group {group!r}")


def number_recipients(
    numbers: Sequence[str], template: Template, contacts: ContactStore | None = None
) -> Recipients:
    """Checked numbers (`--to`) as recipients, valued by the contacts holding them."""
    wanted = frozenset(template.fields)
    found = contacts.by_numbers(numbers) if contacts is not None and wanted else {}
    items = tuple(
        _filled(Recipient(place, number, {}), found.get(number), wanted)
        for place, number in enumerate(numbers, start=1)
    )
    return Recipients(items, offered=_contact_keys(found.values()) if found else frozenset())


# ---- the plan ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Personal:
    """One recipient's message as it will be sent (the instruction included)."""

    recipient: Recipient
    text: str
    parts: int
    encoding: Encoding


@dataclass(frozen=True, slots=True)
class Merged:
    """A value that changed a message: which placeholder, the value, and its characters
    outside GSM-7 (those that make it UCS-2)."""

    name: str
    value: str
    non_gsm: tuple[str, ...]


@dataclass(frozen=True)
class PersonalPlan:
    """A personal send, every text made and checked: what will be recorded and sent."""

    message: SmsMessage
    """The checked options; its text is the template's (what history and the outbox's
    label show). Each request carries its own text."""
    template: Template
    messages: tuple[Personal, ...]
    invalid: tuple[InvalidRow, ...] = ()
    """Recipients that cannot be sent to, with their row and why."""
    duplicates: int = 0
    excluded: tuple[OptOut, ...] = ()
    """Recipients left out because they opted out."""
    template_encoding: Encoding = Encoding.GSM7
    """What the template's own text (and instruction) needs, whatever the values."""
    source: str = ""
    groups: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), repr=False)
    """(text, its recipients) in order of first appearance."""

    @property
    def recipients(self) -> int:
        return len(self.messages)

    @property
    def parts(self) -> tuple[int, int, int]:
        """(fewest, most, total) parts; (0, 0, 0) when nobody is left."""
        if not self.messages:
            return (0, 0, 0)
        counts = [m.parts for m in self.messages]
        return (min(counts), max(counts), sum(counts))

    @property
    def usual_parts(self) -> int:
        """The part count most messages have (the smaller on a tie)."""
        counts = Counter(m.parts for m in self.messages)
        return min(counts, key=lambda n: (-counts[n], n)) if counts else 0

    def longer(self) -> tuple[Personal, ...]:
        """The messages whose values give them more parts than most have."""
        usual = self.usual_parts
        return tuple(m for m in self.messages if m.parts > usual)

    def turned_ucs2(self) -> tuple[Personal, ...]:
        """The messages a recipient's own value turns into UCS-2 (the template's text is
        GSM-7): "Zoë", "Nguyễn". Each costs more parts for the same length."""
        if self.template_encoding is Encoding.UCS2:
            return ()
        return tuple(m for m in self.messages if m.encoding is Encoding.UCS2 and self.why_ucs2(m))

    def why_ucs2(self, personal: Personal) -> tuple[Merged, ...]:
        """The recipient's values holding characters outside GSM-7."""
        found = []
        for placeholder, value in self.template.merged(personal.recipient.values):
            outside = non_gsm_characters(value)
            if outside:
                found.append(Merged(placeholder.name, value, outside))
        return tuple(found)

    def requests(self) -> list[tuple[SmsMessage, tuple[str, ...]]]:
        """What the outbox records: each distinct text with up to 100 of its recipients."""
        return [
            (replace(self.message, text=text), part)
            for text, numbers in self.groups
            for part in chunked(numbers)
        ]

    @property
    def request_count(self) -> int:
        return sum(-(-len(numbers) // 100) for _, numbers in self.groups)

    @property
    def shared_requests(self) -> int:
        """Requests carrying one text to more than one recipient."""
        return sum(-(-len(numbers) // 100) for _, numbers in self.groups if len(numbers) > 1)

    def history_message(self) -> SmsMessage:
        """What the send's history row shows: the one text, or the template."""
        if len(self.groups) == 1:
            return replace(self.message, text=self.groups[0][0])
        return replace(self.message, text=self.template.source)

    def without(self, excluded: Sequence[OptOut]) -> PersonalPlan:
        """The plan with the recipients who opted out left out (and listed)."""
        if not excluded:
            return self
        gone = {o.number for o in excluded}
        kept = tuple(m for m in self.messages if m.recipient.number not in gone)
        return replace(
            self, messages=kept, excluded=(*self.excluded, *excluded), groups=grouped(kept)
        )


def grouped(messages: Sequence[Personal]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    found: dict[str, list[str]] = {}
    for message in messages:
        found.setdefault(message.text, []).append(message.recipient.number)
    return tuple((text, tuple(numbers)) for text, numbers in found.items())


def _unoffered(template: Template, recipients: Recipients) -> None:
    """Refuse a placeholder (without a fallback) that no column or contact field names:
    a typo would otherwise make every recipient invalid."""
    if not recipients.items:
        return
    offered = recipients.offered or frozenset(key for r in recipients.items for key in r.values)
    missing = [p for p in template.required() if p.key not in offered]
    if missing:
        names = ", ".join(p.shown for p in missing[:5])
        where = recipients.source or "the recipients"
        raise refuse(
            f"The template asks for {names}, but no column or contact field of {where} "
            "has it: check the spelling, or give a fallback ({name|there}).",
            "Message",
        )


def plan_personal(
    form: SmsForm,
    template: Template,
    recipients: Recipients,
    region: str,
    *,
    now: datetime | None = None,
    compliance: Compliance | None = None,
) -> PersonalPlan:
    """Make and check every recipient's text (see the module docstring). The options
    are checked first (`ValidationError`, naming the field, as a single send's are);
    each recipient's failure is listed in the plan, not raised. Blocking CPU work."""
    message = check_options(form, region, now)
    rules = compliance or Compliance()
    marketing = message.marketing
    _unoffered(template, recipients)
    instruction = rules.instruction
    base = template.literal
    if marketing:
        base = with_instruction(base, instruction)
    template_encoding = count_segments(base).encoding
    counted: dict[str, SegmentInfo] = {}
    messages: list[Personal] = []
    invalid: list[InvalidRow] = list(recipients.invalid)
    render = template.render
    for recipient in recipients.items:
        try:
            text = render(recipient.values)
        except MissingValue as missing:
            invalid.append(InvalidRow(recipient.row, _shown(recipient), str(missing)))
            continue
        if control_in(text, lines=True) is not None:
            problem = _control_value(template, recipient)
            if problem:
                invalid.append(InvalidRow(recipient.row, _shown(recipient), problem))
                continue
        if marketing:
            text = with_instruction(text, instruction)
        info = counted.get(text)
        if info is None:
            try:
                info = counted_text(text, "Message")
            except ValidationError as refused:
                invalid.append(InvalidRow(recipient.row, _shown(recipient), refused.message))
                continue
            counted[text] = info
        messages.append(Personal(recipient, text, info.parts, info.encoding))
    if not messages and not invalid:
        raise refuse("There is no recipient to send to.", "Recipients")
    invalid.sort(key=lambda row: row.row)
    return PersonalPlan(
        message=replace(message, text=template.source),
        template=template,
        messages=tuple(messages),
        invalid=tuple(invalid),
        duplicates=recipients.duplicates,
        template_encoding=template_encoding,
        source=recipients.source,
        groups=grouped(messages),
    )


def _shown(recipient: Recipient) -> str:
    return f"{recipient.who} ({recipient.number})" if recipient.who else recipient.number


def _control_value(template: Template, recipient: Recipient) -> str:
    """Why a recipient's value cannot go into a message ('' when no value is to blame:
    the template's own text is checked as every text is)."""
    for placeholder, value in template.merged(recipient.values):
        bad = control_in(value, lines=True)
        if bad is not None:
            return f"its {placeholder.shown} holds {describe_hidden(bad)}"
    return ""


# ---- what it costs -----------------------------------------------------------------------

#: Message credits one SMS part uses: the gateway counts a prepaid account's credits in
#: SMS parts (the sandbox prices them so too).
CREDITS_PER_PART: Final = 1


@dataclass(frozen=True, slots=True)
class Cost:
    """What a send will cost, before it is sent."""

    parts: int
    credits: int | None = None
    """The credits it will use, where the gateway reports credits (prepaid accounts)."""
    balance: int | None = None
    """The credits the account has now."""
    funds: str = ""
    """The account's answer in words (`Funds.summary`)."""
    note: str = ""
    """Why no credits are known (the gateway could not be asked, a postpaid account)."""

    @property
    def covered(self) -> bool | None:
        """Whether the balance covers the send; None when the gateway reports no credits."""
        if self.credits is None or self.balance is None:
            return None
        return self.balance >= self.credits

    def for_parts(self, parts: int) -> Cost:
        """The same account's answer weighed against another number of parts (the text
        was edited): no second question to the gateway."""
        credits = None if self.credits is None else parts * CREDITS_PER_PART
        return Cost(parts, credits, self.balance, self.funds, self.note)

    def summary(self) -> str:
        """`247 parts, 247 credits of the 10,000 the account has` (or what is not known)."""
        text = f"{self.parts:,} part(s)"
        if self.credits is not None and self.balance is not None:
            text += f", {self.credits:,} credit(s) of the {self.balance:,} the account has"
            if not self.covered:
                text += f": {self.credits - self.balance:,} more than the balance"
        elif self.note:
            text += f"; {self.note}"
        return text


def cost_of(parts: int, funds: Funds) -> Cost:
    """The cost of `parts` SMS parts against what the account reported."""
    if funds.credits is None:
        return Cost(parts, funds=funds.summary(), note=f"no credits to count ({funds.summary()})")
    return Cost(parts, parts * CREDITS_PER_PART, funds.credits, funds.summary())


# ---- what a plan says, in lines -----------------------------------------------------------


def _listed(title: str, items: Sequence[str]) -> list[str]:
    """A heading and its first `SHOWN` items, indented, then how many more there are."""
    if not items:
        return []
    more = [f"  ... and {len(items) - SHOWN:,} more"] if len(items) > SHOWN else []
    return [title, *(f"  {item}" for item in items[:SHOWN]), *more]


def _why(plan: PersonalPlan, message: Personal) -> str:
    return "; ".join(
        f"{{{v.name}}} {v.value[:30]!r} has {''.join(v.non_gsm)}" for v in plan.why_ucs2(message)
    )


def totals_lines(plan: PersonalPlan) -> list[str]:
    """The plan's totals as an operator reads them (the console and `--dry-run` alike)."""
    low, high, total = plan.parts
    spread = f"{low}" if low == high else f"{low} to {high}"
    turned, longer = plan.turned_ucs2(), plan.longer()
    lines = [
        f"{plan.recipients:,} message(s), {spread} part(s) each, {total:,} part(s) in all, "
        f"in {plan.request_count:,} request(s) ({plan.shared_requests:,} shared by "
        f"identical texts)",
        *_listed(
            f"{len(turned):,} recipient(s) turn the message into UCS-2 (fewer characters "
            "a part) with their own values:",
            [f"row {m.recipient.row}, {_shown(m.recipient)}: {_why(plan, m)}" for m in turned],
        ),
        *_listed(
            f"{len(longer):,} recipient(s) need more than the usual {plan.usual_parts} "
            "part(s) because of their values:",
            [f"row {m.recipient.row}, {_shown(m.recipient)}: {m.parts} parts" for m in longer],
        ),
        *_listed(
            f"{len(plan.invalid):,} recipient(s) cannot be sent to:",
            [f"row {r.row}, {r.text[:40]!r}: {r.reason}" for r in plan.invalid],
        ),
    ]
    if plan.duplicates:
        lines.append(f"{plan.duplicates:,} repeated number(s) will be sent to once")
    if plan.excluded:
        lines.append(f"{len(plan.excluded):,} recipient(s) opted out and are left out")
    return lines
