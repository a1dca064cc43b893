"""When a list send asks first: the one place that decides it, for the console and the CLI.

Every list send asks, once, before anything goes: its first paragraph says what
goes, to how many recipients, in how many parts, what it costs and the credits left
(no send the operator did not confirm: a Ctrl+Enter pressed twice sends nothing the
second time without a yes). The same question then names each concern there is:
recipients that cannot be sent to (and the others can), a list the last run of the
list shown already reached (a new send would text them again), the same text sent
to most of them within the profile's repeat window (`duplicates.py`), and credits
that do not cover it. Each concern says itself in words (`gwdesk.app.questions`);
the console shows them as one dialog, the command line answers them with flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from gwdesk.app.list_send.duplicates import Duplicate
from gwdesk.app.personal import Cost
from gwdesk.app.questions import (
    Ask,
    SendQuestion,
    already_lodged,
    credits_short,
    invalid_rows,
    list_send,
    outside_hours,
    plural,
    question,
    scheduled_for,
)
from gwdesk.app.scheduled import Later
from gwdesk.app.sending_hours import Outside

TITLE: Final = "Send the batch?"
SCHEDULE_TITLE: Final = "Schedule the batch?"


@dataclass(frozen=True, slots=True)
class SendFacts:
    """What a list send comes to, as the policy weighs it."""

    recipients: int
    """Those it will text (after the opt-out list)."""
    parts: int
    invalid: int = 0
    """Recipients that cannot be sent to (listed with why)."""
    lodged_before: int = 0
    """Recipients the last run of the list shown reached while some are left."""
    duplicate: Duplicate | None = None
    cost: Cost | None = None
    text: str = ""
    """The message (a personal send's template), as the question quotes it."""
    later: Later | None = None
    """Scheduled: gwdesk holds it until then (the question says when, how it repeats or
    is spread, and asks to schedule rather than send)."""
    outside: Outside | None = None
    """Sent now: those it would reach outside the sending hours, on their clock."""


def question_for(facts: SendFacts, now: datetime) -> SendQuestion | None:
    """The question the send asks first; None only when it reaches nobody (recording it
    then refuses, naming why)."""
    if facts.recipients <= 0:
        return None
    later = facts.later
    return question(
        TITLE if later is None else SCHEDULE_TITLE,
        facts.recipients,
        facts.parts,
        facts.cost,
        (
            list_send(facts.recipients, facts.parts, facts.cost, facts.text),
            _scheduled(later, facts.recipients) if later is not None else None,
            _outside(facts.outside, facts.recipients) if facts.outside is not None else None,
            invalid_rows(facts.invalid, facts.recipients) if facts.invalid else None,
            already_lodged(facts.lodged_before) if facts.lodged_before else None,
            facts.duplicate.ask(now) if facts.duplicate is not None else None,
            credits_short(facts.cost),
        ),
        f"{'Send to' if later is None else 'Schedule for'} {plural(facts.recipients, 'recipient')}",
    )


def _outside(outside: Outside, recipients: int) -> Ask:
    return outside_hours(len(outside.numbers), recipients, outside.opens, outside.hours.describe())


def _scheduled(later: Later, recipients: int) -> Ask:
    """When a send for later goes: its time, and its rule or its pace in words."""
    how = ""
    if later.every is not None:
        how = f"Then {later.every.describe()}, each time a scheduled send of its own."
    elif later.pace is not None:
        parts = -(-recipients // later.pace.chunk)
        last = later.at + later.pace.interval * max(parts - 1, 0)
        how = (
            f"Spread at {later.pace.describe()}: {parts:,} parts, the last about "
            f"{last.astimezone():%a %d %b %H:%M} (your time; later if sending hours pause it)."
        )
    return scheduled_for(later.at, how)
