"""What a reply's cells in the Replies table show, as plain functions of the reply.

A customer's text is made one line, its control codes visible and clipped; a time is
as short as stays unambiguous; a number is shown the way the operator writes it; the
Opt-out cell badges what the reply said about consent. The table works a row's cells
out once (`RepliesTableModel._painted`) and a repaint under a flood only looks them up.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Final

from PySide6.QtGui import QColor

from gwdesk.app.reply_inbox import ReplyRow
from gwdesk.domain.optout_words import Intent
from gwdesk.domain.optout_words import Reading as KeywordReading
from gwdesk.ui.plain_text import visible

SHOWN_TEXT: Final = 300
UNKNOWN: Final = "–"
"""In reply to, when the call did not say (reply webhooks never do; a backfill fills it in)."""
Shown = tuple[str, str, str, str, str, str]
"""A row's cell texts by column: the From number without a name, no Opt-out badge
(names and the opt-out list change while the row stays)."""
OPTED_OUT_COLOUR: Final = QColor("#d32f2f")
OPTED_IN_COLOUR: Final = QColor("#2e7d32")
MENTION_COLOUR: Final = QColor("#e65100")
BADGE_COLOURS: Final = {
    Intent.OPT_OUT: OPTED_OUT_COLOUR,
    Intent.OPT_IN: OPTED_IN_COLOUR,
    Intent.MENTION: MENTION_COLOUR,
}
BADGE_TIPS: Final = {
    Intent.OPT_OUT: "The reply opted the number out: every send from this account leaves it out.",
    Intent.OPT_IN: "The reply opted the number back in.",
    Intent.MENTION: "A keyword stands later in the reply: nothing changed, but read it (the "
    "customer may want to opt out).",
}
NOW_OPTED_OUT: Final = "opted out"


def received_text(moment: datetime, today: date | None = None) -> str:
    """Local time, as short as stays unambiguous: today's by the clock, older with the date."""
    local = moment.astimezone()
    today = today or datetime.now().astimezone().date()
    if local.date() == today:
        return local.strftime("%H:%M:%S")
    return local.strftime("%d %b %H:%M" if local.year == today.year else "%Y-%m-%d %H:%M")


def one_line(text: str, limit: int = SHOWN_TEXT) -> str:
    """A customer's text for a cell: one line, control codes made visible, clipped."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def row_texts(row: ReplyRow, today: date, number: Callable[[str], str]) -> Shown:
    """The cell texts of `row` that depend on the row alone (`number`: how one is shown)."""
    if row.answers:
        answered = one_line(row.answers, 120)
    else:
        answered = one_line(f"MessageId {row.message_id}", 120) if row.message_id else UNKNOWN
    return (
        received_text(row.received_at, today),
        number(row.from_number),
        number(row.to_number),
        one_line(row.text),
        "",
        answered,
    )


def badge(found: KeywordReading | None, now: bool, tip: bool) -> str:
    """The Opt-out cell (`tip`: its tooltip): what the reply said about consent (`found`)
    and whether the number is on the opt-out list `now`."""
    if found is None:
        if not now:
            return ""
        return "The number is on the opt-out list now." if tip else NOW_OPTED_OUT
    if tip:
        return BADGE_TIPS[found.intent] + (" The number is opted out now." if now else "")
    return f"mentions {found.keyword}" if found.intent is Intent.MENTION else found.keyword


def badge_colour(found: KeywordReading | None, now: bool) -> QColor | None:
    if found is None:
        return OPTED_OUT_COLOUR if now else None
    return BADGE_COLOURS[found.intent]
