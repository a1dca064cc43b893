"""What a send asks the operator before it goes: one typed question, decided in the core.

A send's flow (`app/` decides it, for the console and the command line alike) says
whether a send must be asked about and why: each `Ask` names one concern (the credits
do not cover it, rows that cannot be sent to, an earlier run of the list already
lodged, the same text sent to most of the list a short while ago) in words an
operator reads. Every list send asks: its first paragraph says what goes, to how
many, in how many parts, what it costs and the credits left (`list_send`). The console renders a
`SendQuestion` as a dialog and answers yes or no; the command line, which cannot ask
when it is not at a terminal, refuses it unless a flag answers it (`--yes`, or
`--force` for the credits), saying which flag.

The words are the core's so the console and the command line say the same thing; the
console only lays them out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Final

from gwdesk.app.personal import Cost

PREVIEW_LIMIT: Final = 120
"""The characters of a message the question quotes (the rest is counted)."""
WORD_LIMIT: Final = 32
"""The longest run without a space the question quotes: a label wraps only at spaces."""
_LONG_WORD: Final = re.compile(rf"\S{{{WORD_LIMIT + 1}}}")


class Concern(StrEnum):
    """Why a send asks first."""

    CREDITS_SHORT = "credits short"
    """The account's credits do not cover it: the gateway may refuse part of it."""
    INVALID_ROWS = "invalid rows"
    """Some recipients cannot be sent to (listed, with why); the others can."""
    ALREADY_LODGED = "already lodged"
    """The last run of this list already reached some recipients."""
    LIST = "list"
    """A send to a list: it goes to many at once, so every one is asked about with its
    figures (no send the operator did not confirm)."""
    OUTSIDE_HOURS = "outside hours"
    """Some recipients would be texted outside the office's sending hours, on their clock."""
    SCHEDULED = "scheduled"
    """A send for later: when it goes, and who must be running then."""
    DUPLICATE = "duplicate"
    """The same text went to most of these recipients a short while ago: a send made
    twice by mistake (the Ctrl+Enter pressed again)."""


@dataclass(frozen=True, slots=True)
class Ask:
    """One concern of a question, in words."""

    concern: Concern
    text: str


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 recipient`, `2,000 recipients`."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def credits_short(cost: Cost | None) -> Ask | None:
    """The concern a send the balance does not cover raises (None when it is covered, or
    the gateway reports no credits)."""
    if cost is None or cost.covered is not False:
        return None
    return Ask(
        Concern.CREDITS_SHORT,
        f"This send needs {cost.credits or 0:,} credits and the account has "
        f"{cost.balance or 0:,}: the gateway may refuse part of it. Send anyway?",
    )


def invalid_rows(invalid: int, sendable: int) -> Ask:
    return Ask(
        Concern.INVALID_ROWS,
        f"{plural(invalid, 'recipient')} cannot be sent to (listed under Invalid, with why). "
        f"Send to the other {plural(sendable, 'recipient')}?",
    )


def already_lodged(lodged: int) -> Ask:
    return Ask(
        Concern.ALREADY_LODGED,
        f"The last batch already reached {plural(lodged, 'recipient')}; Send remaining "
        "sends only to the others. Send this batch to every recipient again?",
    )


def shown_text(text: str, limit: int = PREVIEW_LIMIT) -> str:
    """A message as the question quotes it: one line, cut at `limit` characters or where
    a run without a space passes `WORD_LIMIT` (the question then says how long it is), so
    a long text cannot make the dialog wider or taller than a small screen."""
    flat = " ".join(text.split())
    cut = min(limit - 1, *(w.end() - 1 for w in _LONG_WORD.finditer(flat)), len(flat) + 1)
    if cut >= len(flat):
        return f"“{flat}”"
    return f"“{flat[:cut].rstrip()}…” ({len(text):,} characters)"


def credits_line(cost: Cost | None) -> str:
    """`Cost: 200 credits; 9,800 credits left of 10,000` (or why it is not known)."""
    if cost is None:
        return "Cost: not known"
    if cost.credits is None or cost.balance is None:
        return f"Cost: not known ({cost.note})" if cost.note else "Cost: not known"
    left = cost.balance - cost.credits
    if left < 0:
        return (
            f"Cost: {plural(cost.credits, 'credit')}; the account has {cost.balance:,}, "
            f"{-left:,} short"
        )
    spent = plural(cost.credits, "credit")
    return f"Cost: {spent}; {plural(left, 'credit')} left of {cost.balance:,}"


def list_send(recipients: int, parts: int, cost: Cost | None, text: str = "") -> Ask:
    """Every list send, asked once: what goes, to how many, in how many parts, what it
    costs and what the account has left after it (issue: no send the operator did not
    confirm)."""
    lines = [f"Message: {shown_text(text)}"] if text else []
    lines += [
        f"Recipients: {recipients:,}",
        f"SMS parts: {parts:,}",
        credits_line(cost),
    ]
    return Ask(Concern.LIST, "\n".join(lines))


def scheduled_for(at: datetime, how: str = "") -> Ask:
    """A send gwdesk holds until `at`: when it goes on the operator's clock (`how`: its
    repeat or its pace, in words), that it can change until then, and what must be
    running for it to go."""
    local = at.astimezone()
    return Ask(
        Concern.SCHEDULED,
        f"It goes at {local:%a %d %b %Y %H:%M} ({local.tzname() or 'your time'}). "
        f"{how + ' ' if how else ''}gwdesk keeps it until then: change or cancel it in the "
        "Scheduled tab or with gwdesk scheduled. It goes only if a console of this profile, "
        "the office's receiver or gwdesk scheduled run is running at that time.",
    )


def outside_hours(count: int, recipients: int, opens: datetime, hours: str) -> Ask:
    """`count` of a send now's `recipients` are outside the sending hours (`hours`, in
    words) on their own clock; the first of them may be reached at `opens`."""
    these = f"All {recipients:,}" if count == recipients else f"{count:,} of the {recipients:,}"
    return Ask(
        Concern.OUTSIDE_HOURS,
        f"{these} recipients are outside the office's sending hours ({hours}, on each "
        f"recipient's clock); the first may be reached at {opens.astimezone():%a %d %b %H:%M} "
        "(your time). Send now anyway? To wait for their hours, schedule the batch "
        "instead: each recipient then gets it when their hours begin.",
    )


def sent_before(ago: str, reached: int, recipients: int, sends: int = 1) -> Ask:
    """The same text already went to `reached` of these `recipients` (`ago`: when the
    last of those `sends` was made, in words: "2 hours ago")."""
    these = (
        f"all {recipients:,} of these recipients"
        if reached == recipients
        else f"{reached:,} of these {plural(recipients, 'recipient')}"
    )
    when = ago if sends == 1 else f"in {sends:,} sends, the last {ago}"
    return Ask(
        Concern.DUPLICATE,
        f"This text was sent {when} to {these}. Send it to them again?",
    )


@dataclass(frozen=True, slots=True)
class SendQuestion:
    """A send's one question: what it is, what it costs, and each concern."""

    title: str
    """`Send the batch?`"""
    recipients: int
    parts: int
    cost: Cost | None
    asks: tuple[Ask, ...]
    yes: str
    """The button that sends: `Send to 200 recipients`."""

    @property
    def concerns(self) -> frozenset[Concern]:
        return frozenset(ask.concern for ask in self.asks)

    def text(self) -> str:
        """Every concern in words, one paragraph each."""
        return "\n\n".join(ask.text for ask in self.asks)


def question(
    title: str,
    recipients: int,
    parts: int,
    cost: Cost | None,
    asks: Iterable[Ask | None],
    yes: str,
) -> SendQuestion | None:
    """The question for these concerns (those that are None left out); None when there is
    nothing to ask."""
    kept = tuple(ask for ask in asks if ask is not None)
    return SendQuestion(title, recipients, parts, cost, kept, yes) if kept else None
