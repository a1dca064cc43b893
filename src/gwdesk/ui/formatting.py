"""How values look in the console: status colours, times in the operator's zone."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtGui import QColor

from gwdesk.domain.models import ACTIVE, DELIVERED, FAILED

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
