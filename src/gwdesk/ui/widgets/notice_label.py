"""The status bar's notices: the latest shown on one line, the last few in its tooltip.

A notice tells of something that happened elsewhere and that the operator should know
(a team setting changed at another desk, a reply this gwdesk could not read). It is
shown whole for `FRESH_MS` (shortened with "…" to the width the bar gives it: it gives
way first, as the profile and balance items do), then only as "Team notices: 2 · last 10:42",
so the items beside it get their room back. The tooltip holds the last `KEPT` notices
whole, newest first, so one that was shortened, replaced or faded can still be read.
Their words come from other desks (an operator's name, a keyword): plain text only, on
one line, control codes made visible.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from gwdesk.ui.plain_text import tooltip, visible
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.elided_label import ElidedLabel
from gwdesk.ui.widgets.validity import set_role

KEPT: Final = 10
"""Notices the tooltip keeps."""
FRESH_MS: Final = 120_000
"""How long a notice is shown whole before it fades to a count."""
HEADING: Final = "Recent notices, newest first:"


def one_line(text: str) -> str:
    """`text` on one line: control codes visible, every run of spaces and breaks one space."""
    return " ".join(visible(text).split())


@dataclass(frozen=True, slots=True)
class Notice:
    at: datetime
    """When it happened (aware)."""
    text: str
    role: str = ""
    """`warning` for trouble, "" for news (the stylesheet's label roles)."""
    detail: str = ""
    """More, for the tooltip only (where to look)."""


class NoticeLabel(ElidedLabel):
    """The latest notice, shortened to its width; the last `KEPT` in the tooltip."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__("", Qt.TextElideMode.ElideRight, parent)
        self.setAccessibleName(name)
        self._notices: deque[Notice] = deque(maxlen=KEPT)
        self._told = 0
        """Notices since the last clear (the tooltip keeps only the last `KEPT`)."""
        self._fading = single_shot(self, FRESH_MS, self.fade)
        self.hide()

    @property
    def notices(self) -> list[Notice]:
        """The notices kept, newest first."""
        return list(self._notices)

    def notify(
        self, text: str, *, role: str = "", at: datetime | None = None, detail: str = ""
    ) -> None:
        """Show `text` (from outside: shown as plain text) and keep it in the tooltip."""
        moment = (at or datetime.now().astimezone()).astimezone()
        notice = Notice(moment, one_line(text), role, one_line(detail))
        self._notices.appendleft(notice)
        self._told += 1
        self.setText(f"{notice.text} ({moment:%H:%M})")
        set_role(self, role)
        self.setToolTip(tooltip(self.history()))
        self.show()
        self._fading.start()

    @property
    def fresh(self) -> bool:
        """Whether the latest notice is shown whole (it has not faded yet)."""
        return self._fading.isActive()

    def fade(self) -> None:
        """Show the notices as a count only (the tooltip still has them)."""
        self._fading.stop()
        if not self._notices:
            return
        latest = self._notices[0]
        self.setText(f"{self.accessibleName()}: {self._told} · last {latest.at:%H:%M}")

    def history(self) -> str:
        """The notices kept, newest first, each with its time (and detail)."""
        lines = [HEADING]
        for notice in self._notices:
            lines.append(f"{notice.at:%H:%M:%S}  {notice.text}")
            if notice.detail:
                lines.append(f"    {notice.detail}")
        return "\n".join(lines)

    def clear_notices(self) -> None:
        self._fading.stop()
        self._told = 0
        self._notices.clear()
        self.setText("")
        self.setToolTip("")
        set_role(self, "")
        self.hide()
