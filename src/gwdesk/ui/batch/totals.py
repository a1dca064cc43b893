"""What a personal plan says in the Batch tab's totals, and the preview's list of recipients.

The parts are a range (`1–2`) with their total; the recipients whose own values turn
the message into UCS-2 ("Zoë") or give it more parts than most are named, the first
few in the line and more in its tooltip. Names and values come from a file or the
address book: the labels showing them are plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from gwdesk.app.personal import Personal, PersonalPlan
from gwdesk.domain.numbers import display
from gwdesk.ui.widgets.phone_preview import PreviewItem

#: Recipients named in a line before "and N more" (the tooltip names more).
NAMED: Final = 4
NAMED_IN_TIP: Final = 40
VALUE_CHARS: Final = 24


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
    """(the line: its head and the first few, the tooltip: more of them)."""
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


def preview_items(plan: PersonalPlan) -> list[PreviewItem]:
    """Every recipient in row order: its message, or why it cannot be sent."""
    items = [
        PreviewItem(
            m.recipient.row,
            m.recipient.number,
            m.recipient.who,
            m.text,
            m.parts,
            m.encoding.value,
        )
        for m in plan.messages
    ]
    items.extend(PreviewItem(r.row, r.text, "", None, reason=r.reason) for r in plan.invalid)
    items.sort(key=lambda item: item.row)
    return items


def same_text_items(numbers: Sequence[str], text: str) -> list[PreviewItem]:
    """A message that is the same for all, as the preview steps through it."""
    return [PreviewItem(place, number, "", text) for place, number in enumerate(numbers, 1)]
