"""What a personal plan is made from, and making it: each recipient's own text, before any is sent.

`PlanInputs` is what the console has composed (the template, which column or contact
field fills each placeholder, the file or pasted numbers, the contact groups,
Marketing or Purely factual, the profile's instruction); `gather` reads the
recipients with their values from it (blocking: the contacts are read), and the
flow's `plan` renders and checks every text (`Sending.plan_personal`, which leaves
out who opted out). A plan is compared with another by what it was made from, big
lists by identity (100,000 rows are never compared row by row).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from gwdesk.app.merge import personal_recipients
from gwdesk.app.personal import PersonalPlan, Recipients
from gwdesk.app.sms import Channel, SmsForm, SmsMessage
from gwdesk.domain.templates import Template
from gwdesk.importing.recipients import RecipientList
from gwdesk.importing.table import Table
from gwdesk.store.contacts import Contact, ContactStore

Groups = tuple[tuple[str, tuple[Contact, ...]], ...]
"""Contact groups chosen as recipients: (name, members) each."""


@dataclass(frozen=True, eq=False)
class PlanInputs:
    """What a plan is made from."""

    template: Template
    mapping: tuple[tuple[str, str | None], ...]
    table: Table | None
    column: int
    file_name: str
    pasted: RecipientList | None
    groups: Groups
    marketing: bool
    factual: bool
    instruction: str

    def same(self, other: PlanInputs | None) -> bool:
        return (
            other is not None
            and self.template.source == other.template.source
            and self.mapping == other.mapping
            and self.table is other.table
            and self.column == other.column
            and self.pasted is other.pasted
            and len(self.groups) == len(other.groups)
            and all(
                a[0] == b[0] and a[1] is b[1]
                for a, b in zip(self.groups, other.groups, strict=True)
            )
            and (self.marketing, self.factual, self.instruction)
            == (other.marketing, other.factual, other.instruction)
        )

    def form(self) -> SmsForm:
        """The options rendering depends on (the rest are checked when the send goes)."""
        return SmsForm(channel=Channel.REST_SMS, marketing=self.marketing, factual=self.factual)


@dataclass(frozen=True, slots=True)
class PlanFailure:
    """Why no plan could be made (shown in the totals; at its field when sending)."""

    message: str
    field: str | None = None


@dataclass(frozen=True, slots=True)
class Planned:
    """A plan made from `inputs`, or why none could be (the recipients stay when they
    were gathered: the merge fields offer their sources)."""

    inputs: PlanInputs
    recipients: Recipients | None
    plan: PersonalPlan | None
    failure: PlanFailure | None = None


def gather(inputs: PlanInputs, region: str, contacts: ContactStore | None) -> Recipients:
    """The recipients with their values. Blocking: a worker thread."""
    return personal_recipients(
        inputs.template,
        dict(inputs.mapping),
        region,
        contacts,
        table=inputs.table,
        column=inputs.column,
        file_name=inputs.file_name,
        pasted=inputs.pasted,
        groups=inputs.groups,
    )


def with_options(plan: PersonalPlan, options: SmsMessage) -> PersonalPlan:
    """The plan carrying the options as checked when the send goes (From, Send at,
    replies, tags): its texts stay as they were rendered."""
    return replace(plan, message=replace(options, text=plan.template.source))


def group_members(groups: Mapping[str, tuple[Contact, ...]]) -> Groups:
    return tuple(groups.items())
