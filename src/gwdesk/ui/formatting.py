"""How values look in the console: status colours, times in the operator's zone."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtGui import QColor

from gwdesk.app.optouts import OptedOutError, OptOut, refusal_text
from gwdesk.domain.models import ACTIVE, DELIVERED, FAILED
from gwdesk.domain.numbers import display

STATUS_COLOURS = {
    ACTIVE: QColor("#1e88e5"),
    DELIVERED: QColor("#2e7d32"),
    FAILED: QColor("#d32f2f"),
}


def status_colour(status: str | None) -> QColor | None:
    return STATUS_COLOURS.get((status or "").upper())


def local_time(moment: datetime | None, with_seconds: bool = True) -> str:
    """An aware time in the operator's local zone, or a dash."""
    if moment is None:
        return "–"
    local = moment.astimezone()
    return local.strftime("%Y-%m-%d %H:%M:%S" if with_seconds else "%Y-%m-%d %H:%M")


def sentence_time(moment: datetime) -> str:
    """`3 Mar 2026 14:02 AEDT`: a time inside a sentence (an opt-out's, say), in the
    operator's zone and naming it, where the core's own text says UTC."""
    local = moment.astimezone()
    return f"{local:%-d %b %Y %H:%M} {local.tzname() or ''}".rstrip()


def optout_sentence(optout: OptOut) -> str:
    """`+61 412 345 678 opted out by replying STOP on 3 Mar 2026 14:02 AEDT.`"""
    return f"{display(optout.number)} {optout.describe(sentence_time)}."


def refusal_sentence(exc: OptedOutError) -> str:
    """A send refused for an opted-out number, told in the operator's zone."""
    return refusal_text(exc.optout, sentence_time)
