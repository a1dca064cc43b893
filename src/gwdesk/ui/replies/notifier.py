"""Desktop notifications and the tray icon for replies the operator has not seen.

One notification per reply while they trickle in; under a flood they are gathered
(at most one notification every few seconds: "27 new replies") so the desktop is
not buried. Replies arriving while the operator is looking at the Replies tab in
the active window notify nobody. The tray icon (where the desktop has a tray)
carries this operator's unread replies (their own read marks, `show_unread`) in its
tooltip and as a badge on the icon.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from PySide6.QtCore import QObject, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QIcon, QPainter
from PySide6.QtWidgets import QSystemTrayIcon

from gwdesk.app.reply_inbox import StoredReply
from gwdesk.domain.numbers import display
from gwdesk.ui.plain_text import notification_text
from gwdesk.ui.reply_hub import ReplyHub
from gwdesk.ui.reply_state import ReplyDelivery
from gwdesk.ui.theme import app_icon
from gwdesk.ui.timers import single_shot

GATHER_MS: Final = 3000
"""After a notification, later replies wait this long and are told about together."""
SHOWN_MS: Final = 6000
PREVIEW: Final = 160
BADGE_SIZE: Final = 64


@dataclass(frozen=True, slots=True)
class Notice:
    title: str
    body: str
    count: int


def notice_for(count: int, latest: StoredReply) -> Notice:
    """What to tell: the customer's words made safe for any notification server."""
    text = notification_text(latest.text)
    preview = text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"
    sender = notification_text(display(latest.from_number))
    if count == 1:
        return Notice(f"Reply from {sender}", preview, 1)
    return Notice(f"{count} new replies", f"Latest from {sender}: {preview}", count)


def tray_tooltip(unread: int) -> str:
    if unread == 0:
        return "gwdesk: no unread replies"
    return f"gwdesk: {unread} unread repl{'y' if unread == 1 else 'ies'}"


def badge_icon(base: QIcon, count: int) -> QIcon:
    """`base` with the count in a red disc at its corner (no disc for 0)."""
    pixmap = base.pixmap(BADGE_SIZE, BADGE_SIZE)
    if count <= 0:
        return QIcon(pixmap)
    pixmap = pixmap.copy()
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    disc = QRect(BADGE_SIZE - 36, 0, 36, 36)
    painter.setBrush(QColor("#d32f2f"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(disc)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(20 if count < 100 else 14)
    painter.setFont(font)
    painter.setPen(QColor("#ffffff"))
    painter.drawText(disc, Qt.AlignmentFlag.AlignCenter, str(count) if count < 1000 else "999+")
    painter.end()
    return QIcon(pixmap)


class ReplyNotifier(QObject):
    """Tells the operator about replies they are not looking at."""

    notified = Signal(object)
    """A `Notice` was shown (or would have been, where there is no tray)."""
    open_requested = Signal()
    """The operator clicked the tray icon or a notification: show the replies."""

    def __init__(
        self,
        hub: ReplyHub,
        watching: Callable[[], bool],
        parent: QObject | None = None,
        *,
        use_tray: bool = True,
        gather_ms: int = GATHER_MS,
    ) -> None:
        super().__init__(parent)
        self._watching = watching
        self._count = 0
        self.shown_unread = 0
        """What the tray says this operator has not read."""
        self._latest: StoredReply | None = None
        self._base_icon = app_icon()
        self.tray: QSystemTrayIcon | None = None
        if use_tray and QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = QSystemTrayIcon(self._base_icon, self)
            self.tray.activated.connect(lambda _reason: self.open_requested.emit())
            self.tray.messageClicked.connect(self.open_requested.emit)
            self.tray.setToolTip(tray_tooltip(0))
            self.tray.show()
        self._gather = single_shot(self, gather_ms, self.flush)
        hub.replies_arrived.connect(self.on_delivery)
        hub.unread_changed.connect(self.on_unread)

    def on_delivery(self, delivery: ReplyDelivery) -> None:
        if not delivery.new or self._watching():
            return
        self._count += len(delivery.new)
        self._latest = max(delivery.new, key=lambda r: r.id)
        if not self._gather.isActive():
            self.flush()  # the first at once; whatever follows soon after is gathered

    def flush(self) -> None:
        latest, count = self._latest, self._count
        self._latest, self._count = None, 0
        if latest is None or count == 0:
            return
        notice = notice_for(count, latest)
        if self.tray is not None:
            self.tray.showMessage(
                notice.title, notice.body, QSystemTrayIcon.MessageIcon.Information, SHOWN_MS
            )
        self.notified.emit(notice)
        self._gather.start()

    def on_unread(self, unread: int) -> None:
        """The console's new-since-seen count: 0 once the operator looked."""
        if unread == 0:
            self._count, self._latest = 0, None  # seen meanwhile: nothing left to tell

    def show_unread(self, unread: int) -> None:
        """This operator's own unread replies (their read marks) in the tray's tooltip
        and badge."""
        self.shown_unread = unread
        if self.tray is not None:
            self.tray.setToolTip(tray_tooltip(unread))
            self.tray.setIcon(badge_icon(self._base_icon, unread))

    def close(self) -> None:
        self._gather.stop()
        if self.tray is not None:
            self.tray.hide()
