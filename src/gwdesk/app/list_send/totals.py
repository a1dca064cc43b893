"""What a list send comes to before it goes: the figures and lines the Batch tab shows.

A message that is the same for all: the valid recipients, duplicates dropped, rows
that are not numbers, those the opt-out list leaves out, parts each, messages and
requests. A personal send's plan: the same figures with the parts as a range
(`1–2`) and their total, a line saying what the plan is, and the recipients whose
own values turn the message into UCS-2 ("Zoë") or give it more parts than most,
named (the first few in the line, more in its tip). The figures in words
(`Totals.text`) are what a big send's question shows. Names and values come from a
file or the address book: whoever shows them shows them as plain text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from gwdesk.app.list_send.run import Tone
from gwdesk.app.optouts import Screened
from gwdesk.app.personal import Personal, PersonalPlan
from gwdesk.app.questions import plural
from gwdesk.app.send_values import MAX_RECIPIENTS_PER_REQUEST
from gwdesk.domain.numbers import display
from gwdesk.domain.templates import TemplateError
from gwdesk.importing.recipients import InvalidRow, RecipientList
from gwdesk.store.optouts import OptOut

FIGURES: Final = (
    ("valid", "Valid recipients", "Usable numbers, each once"),
    ("duplicates", "Duplicates dropped", "Entries that repeat an earlier number"),
    ("invalid", "Invalid", "Entries that are not usable numbers (listed on the left)"),
    (
        "excluded",
        "Opted out: excluded",
        "Valid recipients on the account's opt-out list: the batch leaves them out "
        "(unless the message is marked purely factual)",
    ),
    (
        "parts",
        "SMS parts each",
        "Parts one message needs (GSM 03.38): for personal messages, "
        "the fewest to the most any recipient's needs",
    ),
    (
        "total_parts",
        "SMS parts in all",
        "Recipients × parts (each recipient's own, for personal messages): what the batch "
        "costs, in credits. One message to each recipient, each message in this many parts",
    ),
    ("requests", "Requests", "Requests of up to 100 recipients the batch is sent in"),
)
"""(key, caption, what it counts) of each figure, in the order they are shown."""
#: Recipients named in a line before "and N more" (the tip names more).
NAMED: Final = 4
NAMED_IN_TIP: Final = 40
VALUE_CHARS: Final = 24
PENDING: Final = "…"
FAILED: Final = "–"


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the totals ('' when there is nothing to say)."""

    text: str = ""
    tone: Tone = "hint"
    tip: str = ""


@dataclass(frozen=True, slots=True)
class Totals:
    """Everything the totals show of the send as composed."""

    figures: Mapping[str, str]
    """Each figure by its `FIGURES` key, as shown (`…` while it is being worked out)."""
    plan: Line = Line()
    """The personal plan in one line, why there is none, or why the template is broken."""
    ucs2: Line = Line()
    longer: Line = Line()
    optouts: Line = Line()
    opted_out: int = 0
    """Recipients on the opt-out list (left out, or kept for a purely factual message)."""
    excluded: tuple[OptOut, ...] = ()
    """Those the send leaves out (what "Export the opted out" writes)."""
    invalid: tuple[InvalidRow, ...] | None = None
    """The recipients that cannot be sent to, with why (None: not known yet, the list
    shown stays)."""
    parts: int | None = 0
    """The parts the send costs (0: nothing to cost; None: not known yet, the cost shown
    stays)."""

    def text(self) -> str:
        """The figures in words, one a line: `SMS parts in all: 12`."""
        names = {key: caption for key, caption, _tip in FIGURES}
        return "\n".join(f"{names[k]}: {v}" for k, v in self.figures.items())


def _figures(**values: int | str) -> dict[str, str]:
    return {
        key: (f"{values[key]:,}" if isinstance(values[key], int) else str(values[key]))
        for key, _caption, _tip in FIGURES
    }


def optouts_line(screened: Screened | None) -> Line:
    """Who the opt-out list leaves out (or a factual message keeps)."""
    count = len(screened.excluded) if screened is not None else 0
    if not count or screened is None:
        return Line()
    people = plural(count, "recipient")
    if screened.factual:
        return Line(
            f"Opted out: {people}, kept: the message is marked purely factual "
            "(the mark is recorded).",
            "warning",
        )
    return Line(
        f"Opted out: {count:,} excluded. The batch will not text {people} on the opt-out list."
    )


def list_totals(
    recipients: RecipientList | None,
    screened: Screened | None,
    parts_each: int,
    *,
    checking: bool = False,
    has_text: bool = True,
    broken: TemplateError | None = None,
) -> Totals:
    """A message that is the same for all, to `recipients` as checked so far
    (`checking`: a check runs; `screened`: None while the list is being screened)."""
    plan = Line(f"Not a usable template: {broken}", "error") if broken is not None else Line()
    invalid = tuple(recipients.invalid) if recipients is not None else ()
    if checking:
        figures = {key: PENDING for key, _caption, _tip in FIGURES}
        figures["parts"] = str(parts_each)
        return Totals(figures, plan=plan, invalid=invalid, parts=None)
    valid = len(recipients.numbers) if recipients is not None else 0
    left_out = () if screened is None or screened.factual else screened.excluded
    sent = valid - len(left_out)
    figures = _figures(
        valid=valid,
        duplicates=recipients.duplicates if recipients is not None else 0,
        invalid=len(invalid),
        excluded=len(left_out),
        parts=parts_each,
        total_parts=sent * parts_each,
        requests=math.ceil(sent / MAX_RECIPIENTS_PER_REQUEST),
    )
    if screened is None and valid:
        figures["excluded"] = PENDING  # being screened: the figures follow
    return Totals(
        figures,
        plan=plan,
        optouts=optouts_line(screened),
        opted_out=len(screened.excluded) if screened is not None else 0,
        excluded=left_out,
        invalid=invalid,
        parts=sent * parts_each if has_text else 0,
    )


def plan_totals(
    plan: PersonalPlan | None, failure: str | None = None, *, updating: bool = False
) -> Totals:
    """A personal send: its plan's figures (`updating`: a newer plan is on its way), or
    why there is none (`failure`), or that it is being made."""
    if plan is None or failure is not None:
        figures = {key: FAILED if failure is not None else PENDING for key, _c, _t in FIGURES}
        line = (
            Line(failure, "error")
            if failure is not None
            else Line("Making every recipient's message…")
        )
        return Totals(figures, plan=line, parts=0)
    figures = _figures(
        valid=plan.recipients + len(plan.excluded),
        duplicates=plan.duplicates,
        invalid=len(plan.invalid),
        excluded=len(plan.excluded),
        parts=parts_range(plan) if plan.recipients else "0",
        total_parts=plan.parts[2],
        requests=plan.request_count,
    )
    ucs2, ucs2_tip = ucs2_line(plan)
    longer, longer_tip = longer_line(plan)
    screened = Screened((), plan.excluded) if plan.excluded else None
    return Totals(
        figures,
        plan=Line(plan_line(plan) + (" Updating…" if updating else "")),
        ucs2=Line(ucs2, "warning", ucs2_tip),
        longer=Line(longer, "hint", longer_tip),
        optouts=optouts_line(screened),
        opted_out=len(plan.excluded),
        excluded=plan.excluded,
        invalid=plan.invalid,
        parts=plan.parts[2],
    )


# ---- a personal plan in words ------------------------------------------------------------


def parts_range(plan: PersonalPlan) -> str:
    low, high, _total = plan.parts
    return f"{low}" if low == high else f"{low}–{high}"


def who(message: Personal) -> str:
    recipient = message.recipient
    return recipient.who or display(recipient.number)


def _clip(value: str) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= VALUE_CHARS else flat[: VALUE_CHARS - 1] + "…"


def _listed(head: str, items: Sequence[str]) -> tuple[str, str]:
    """(the line: its head and the first few, the tip: more of them)."""
    if not items:
        return ("", "")
    shown = "; ".join(items[:NAMED])
    more = f"; and {len(items) - NAMED:,} more" if len(items) > NAMED else ""
    tip = "\n".join(items[:NAMED_IN_TIP])
    if len(items) > NAMED_IN_TIP:
        tip += f"\n… and {len(items) - NAMED_IN_TIP:,} more (the preview shows each)"
    return (f"{head}: {shown}{more}.", tip)


def ucs2_line(plan: PersonalPlan) -> tuple[str, str]:
    """The recipients a value of their own turns into UCS-2, named."""
    turned = plan.turned_ucs2()
    items = [
        f"row {m.recipient.row}, {who(m)}: "
        + ", ".join(
            f"{{{v.name}}} “{_clip(v.value)}” has {''.join(v.non_gsm)}" for v in plan.why_ucs2(m)
        )
        for m in turned
    ]
    noun = "recipient" if len(turned) == 1 else "recipients"
    return _listed(
        f"UCS-2 (70 characters a part) for {len(turned):,} {noun}, because of their own values",
        items,
    )


def longer_line(plan: PersonalPlan) -> tuple[str, str]:
    """The recipients whose values give the message more parts than most have."""
    longer = plan.longer()
    items = [f"row {m.recipient.row}, {who(m)}: {m.parts} parts" for m in longer]
    noun = "recipient needs" if len(longer) == 1 else "recipients need"
    return _listed(
        f"{len(longer):,} {noun} more than the usual {plan.usual_parts} part"
        f"{'s' if plan.usual_parts != 1 else ''}",
        items,
    )


def plan_line(plan: PersonalPlan) -> str:
    """`247 messages, 1–2 parts each, 262 parts in all, in 30 requests (…)`."""
    total = plan.parts[2]
    return (
        f"{plan.recipients:,} personal messages, {parts_range(plan)} parts each, {total:,} "
        f"parts in all, in {plan.request_count:,} requests ({plan.shared_requests:,} shared "
        "by identical texts). Every text is made and checked: nothing is sent yet."
    )
