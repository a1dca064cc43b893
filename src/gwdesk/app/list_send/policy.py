"""When a list send asks first: the one place that decides it, for the console and the CLI.

A list send asks, in one question, when some recipients cannot be sent to (and the
others can), when the last run of the list shown already reached some recipients
(a new send would text them again), when it goes to more than `ASK_ABOVE`
recipients, when the same text went to most of them a short while ago, and when
the account's credits do not cover it. Each concern says itself in words
(`gwdesk.app.questions`); the console shows them as one dialog, the command line
answers them with flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from gwdesk.app.list_send.duplicates import Duplicate
from gwdesk.app.personal import Cost
from gwdesk.app.questions import (
    SendQuestion,
    already_lodged,
    credits_short,
    invalid_rows,
    list_send,
    plural,
    question,
)

ASK_ABOVE: Final = 1000
"""Lists of more recipients are asked about with their totals (0: every list asks)."""
TITLE: Final = "Send the batch?"


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
    totals: str = ""
    """The send's figures in words (what a big send's question shows)."""


def question_for(
    facts: SendFacts, now: datetime, *, ask_above: int = ASK_ABOVE
) -> SendQuestion | None:
    """The question the send asks first; None: it goes without one."""
    return question(
        TITLE,
        facts.recipients,
        facts.parts,
        facts.cost,
        (
            invalid_rows(facts.invalid, facts.recipients)
            if facts.invalid and facts.recipients
            else None,
            already_lodged(facts.lodged_before) if facts.lodged_before else None,
            list_send(facts.totals) if facts.recipients > ask_above else None,
            facts.duplicate.ask(now) if facts.duplicate is not None else None,
            credits_short(facts.cost),
        ),
        f"Send to {plural(facts.recipients, 'recipient')}",
    )
