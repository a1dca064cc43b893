"""The status bar: which gateway, whether it answers, the balance, and the token's life.

For a team profile it also says whether the team's server is connected (and how many
consoles are), or since when it is not, and what that means for the operator; and, on
its left, the team's notices (`widgets/notice_label.py`): a team setting changed at any
desk, in words (`gwdesk.app.setting_changes`), or replies passed over because this
gwdesk cannot read them; shown whole for two minutes, then as a count, the last few
kept in the tooltip. The notice, the profile, the latest activity and the balance give
way (shortened with …, whole in their tooltips) so the other items stay in view.

When the gateway stops answering (the watch on its client, `GatewayService.health`, says
so a few seconds after a request went unanswered), the connection item says so in the
error colour, counting the seconds, until an answer arrives; then it shows the latest
activity again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStatusBar, QToolButton, QWidget

from gwdesk.app.profile_data import Answering
from gwdesk.app.setting_changes import SettingChange
from gwdesk.domain.errors import GatewayError
from gwdesk.logs.sync import SyncReport
from gwdesk.ui.log_sync import session_sync
from gwdesk.ui.plain_text import tooltip, visible
from gwdesk.ui.replies.listener_status import ListenerStatusWidget
from gwdesk.ui.reply_state import unreadable_text
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.team_hub import TeamHub
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import repeating, single_shot
from gwdesk.ui.widgets.elided_label import ElidedLabel
from gwdesk.ui.widgets.message_history import MessageHistory
from gwdesk.ui.widgets.notice_label import NoticeLabel
from gwdesk.ui.widgets.validity import set_role

MESSAGE_MIN_WIDTH: Final = 160
"""What a status message keeps of the bar at least (px): the permanent items give way."""
ACTIVITY_CHARS = 40
"""Longest activity text shown in the bar; the whole text is in its tooltip."""
CREDITS_AFTER_MS = 300
"""The balance is read again this long after a send ended, or a log sync brought new
messages (sent elsewhere, or a batch the gateway went on creating): a burst, one read."""


def team_text(team: TeamHub) -> tuple[str, str, str]:
    """(text, role, tooltip) of the team indicator; ("", "", "") without a team server."""
    if not team.active:
        return ("", "", "")
    server = team.server
    if team.connected is None:
        return (f"Team store {server}: connecting…", "hint", f"Connecting to {server}.")
    if not team.connected:
        since = team.lost_at.strftime("%H:%M:%S") if team.lost_at else "now"
        text = f"Team store disconnected since {since} · sends refused, drafts kept"
        tip = (
            f"The team's server {server} does not answer. Sends that need the team's opt-out "
            "list are refused, saying why; what you type stays on this desk. Replies, sends and "
            "changes made meanwhile show here once the server is back."
        )
        return (text, "warning", tip)
    count = len(team.consoles)
    text = f"Team store {server} · {count} console{'' if count == 1 else 's'}"
    lines = [f"Connected to the team's server {server}. Consoles connected:"]
    lines += [f"{console.operator} ({console.host})" for console in team.consoles]
    return (text, "", "\n".join(lines))


def silence_text(state: Answering, seconds: float) -> str:
    """`Gateway HOST is not answering (no answer for N s)`; '' while it answers."""
    if state.answering:
        return ""
    host = " ".join(state.host.split()) or "the gateway"
    return f"Gateway {host} is not answering (no answer for {int(seconds)} s)"


def describe_expiry(expires_at: float | None, now: float) -> str:
    if expires_at is None:
        return "no token yet"
    left = int(expires_at - now)
    if left <= 0:
        return "token expired (renewed on next call)"
    if left < 120:
        return f"token {left} s left"
    return f"token {left // 60} min left"


class GatewayStatusBar(QStatusBar):
    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._session = session
        self._tasks = tasks
        self.sandbox_badge = QLabel("SANDBOX")
        self.sandbox_badge.setObjectName("SandboxBadge")
        self.sandbox_badge.setToolTip("A local simulated gateway: nothing reaches real phones.")
        # These two give way (shortened with …) when the line is full, so the items
        # after them, the reply listener's above all, always stay in view.
        self.profile_label = ElidedLabel("No profile", Qt.TextElideMode.ElideMiddle)
        self.connection_label = ElidedLabel("Not connected")
        # The gateway's words (account name, type, currency): plain text, tooltip too; it
        # gives way too (its tooltip says it all), so a notice has room on a small screen.
        self.balance_label = ElidedLabel("Balance: –")
        self.balance_label.setAccessibleName("Balance")
        self.balance_button = QToolButton()
        self.balance_button.setIcon(theme.icon("refresh"))
        self.balance_button.setToolTip("Refresh the account's balance or credits")
        self.balance_button.setAccessibleName("Refresh balance")
        self.balance_button.setAutoRaise(True)
        self.balance_button.clicked.connect(self.refresh_balance)
        self.token_label = ElidedLabel("")  # gives way too on a narrow window
        # Plain text: operators' and hosts' names come from the other consoles.
        self.team_label = ElidedLabel("")  # gives way too; its tooltip says it all
        self.team_label.setAccessibleName("Team store")
        self.team_label.hide()
        self.listener = ListenerStatusWidget(session.replies, tasks, theme)
        self.listener.message.connect(lambda text: self.showMessage(text, 5000))
        self.notice_label = NoticeLabel("Team notices")
        self.history = MessageHistory()
        self.message_label = ElidedLabel("")
        self.message_label.setAccessibleName("Status message")
        self.message_label.setMinimumWidth(MESSAGE_MIN_WIDTH)
        self.message_label.hide()
        self.addWidget(self.message_label, 1)
        self._message_timer = single_shot(self, 0, self.clearMessage)
        self._message = ""
        # All permanent: a temporary message (showMessage) hides the normal widgets, and
        # which gateway this is, the SANDBOX badge above all, must never disappear.
        permanent: tuple[QWidget, ...] = (
            self.history,
            self.notice_label,
            self.sandbox_badge,
            self.profile_label,
            self.connection_label,
            self.balance_label,
            self.balance_button,
            self.token_label,
            self.team_label,
            self.listener,
        )
        for widget in permanent:
            self.addPermanentWidget(widget)
        self._timer = repeating(self, 5000, self.update_token)
        self._activity: tuple[str, str, str] = ("Not connected", "", "")
        """The latest activity's (text, role, tooltip), shown again once the gateway answers."""
        self._silence_timer = repeating(self, 1000, self.show_silence, running=False)
        self._credits_timer = single_shot(self, CREDITS_AFTER_MS, self._reread_credits)
        session.sent.connect(lambda _outcome: self.credits_changed())
        session_sync(session, tasks).synced.connect(self._synced)
        session.changed.connect(self.on_session_changed)
        session.activity.connect(self.on_activity)
        session.answering_changed.connect(self.on_answering)
        session.team.connection_changed.connect(self.update_team)
        session.team.consoles_changed.connect(self.update_team)
        session.team.settings_changed.connect(self.on_setting_changes)
        session.replies.unreadable_passed.connect(self.on_unreadable_replies)
        self.on_session_changed()

    def showMessage(self, text: str, timeout: int | None = 0) -> None:
        """A message for a while (`timeout` ms, 0: until the next), in a label of its own
        that takes the room the permanent items leave and gives way to them, shortened
        with … (whole in its tooltip and in the recent messages). It often quotes an
        error from outside: plain text, no control codes.

        Not QStatusBar's own temporary message: that is painted only left of the
        permanent items, which fill the bar, so it was not seen at all."""
        whole = visible(text)
        self.history.record(text)
        self._message = whole
        self.message_label.setText(" ".join(whole.split()))
        self.message_label.setToolTip(tooltip(whole))
        self.message_label.setVisible(bool(whole.strip()))
        if timeout:
            self._message_timer.start(timeout)
        else:
            self._message_timer.stop()
        self.messageChanged.emit(whole)

    def clearMessage(self) -> None:
        self._message_timer.stop()
        self._message = ""
        self.message_label.clear()
        self.message_label.setToolTip("")
        self.message_label.hide()
        self.messageChanged.emit("")

    def currentMessage(self) -> str:
        """The message shown, whole (the label paints it shortened to fit)."""
        return self._message

    def on_session_changed(self) -> None:
        session = self._session
        self.sandbox_badge.setVisible(session.is_sandbox)
        if session.profile is None:
            self.profile_label.setText("No profile")
            self._set_activity("Not connected", "", "")
        else:
            profile = session.profile
            who = f"{profile.name} ({profile.username} @ {profile.rest_url})"
            self.profile_label.setText(who)
            self.profile_label.setToolTip(tooltip(who))
            self._set_activity("Connecting…", "", "")
            self.refresh_balance()
        self.on_answering(session.answering)
        self.balance_button.setEnabled(session.active)
        self.notice_label.clear_notices()  # they were the previous profile's
        self.update_token()
        self.update_team()

    def update_team(self, *_args: object) -> None:
        text, role, tip = team_text(self._session.team)
        self.team_label.setText(text)
        self.team_label.setToolTip(tooltip(tip))
        set_role(self.team_label, role)
        self.team_label.setVisible(bool(text))

    def on_setting_changes(self, changes: Sequence[SettingChange]) -> None:
        """Team settings changed (at this desk or another): each said, the newest shown."""
        for change in changes:
            self.notice_label.notify(change.text, at=change.at)

    def on_unreadable_replies(self, count: int) -> None:
        log_file = self._session.paths.log_file
        self.notice_label.notify(
            unreadable_text(count), role="warning", detail=f"The log: {log_file}"
        )

    def on_activity(self, what: str, ok: bool) -> None:
        """Show the latest call's outcome, shortened so the permanent items stay in view."""
        stamp = time.strftime("%H:%M:%S")
        full = f"{'Connected' if ok else 'Trouble'}: {what} ({stamp})"
        shown = " ".join(what.split())
        if len(shown) > ACTIVITY_CHARS:
            shown = shown[: ACTIVITY_CHARS - 1].rstrip() + "…"
        text = f"{'Connected' if ok else 'Trouble'}: {shown} ({stamp})"
        self._set_activity(text, "ok" if ok else "error", tooltip(full))  # the gateway's words
        self.update_token()

    def _set_activity(self, text: str, role: str, tip: str) -> None:
        """The latest activity, shown unless the gateway is not answering (which says more)."""
        self._activity = (text, role, tip)
        if self._session.answering.answering:
            self._show_activity()

    def _show_activity(self) -> None:
        text, role, tip = self._activity
        self.connection_label.setText(text)
        self.connection_label.setToolTip(tip)
        set_role(self.connection_label, role)

    def on_answering(self, state: Answering) -> None:
        """The gateway stopped answering (said in the error colour, the seconds counted),
        or answers again (the latest activity shown again)."""
        if state.answering:
            self._silence_timer.stop()
            self.connection_label.setMinimumWidth(0)
            self._show_activity()
            return
        self._silence_timer.start()
        self.show_silence()

    def show_silence(self) -> None:
        """The not-answering line, its seconds brought up to date."""
        state = self._session.answering
        text = silence_text(state, self._session.silent_for())
        if not text:
            self._silence_timer.stop()
            return
        label = self.connection_label
        label.setText(text)
        # Shown whole (up to half the bar): the profile and the balance give way instead.
        wanted = label.fontMetrics().horizontalAdvance(text) + 2 * label.margin() + 4
        label.setMinimumWidth(min(wanted, max(self.width() // 2, 0)))
        label.setToolTip(
            tooltip(
                f"{text}. A request has waited without an answer; sends wait too. A send on "
                "the Send or Fax / MMS tab can be cancelled: the outbox then asks the gateway "
                "whether it took it, and never sends it again by itself."
            )
        )
        set_role(self.connection_label, "error")

    def update_token(self) -> None:
        service = self._session.service
        if service is None:
            self.token_label.setText("")
            return
        if service.profile.auth == "basic":
            self.token_label.setText("Basic auth")
            return
        self.token_label.setText(describe_expiry(service.token_expires_at, time.time()))

    def refresh_balance(self) -> None:
        if self._session.service is not None:
            self._tasks.run(self._load_balance(), key="balance", owner=self, context="balance")

    def credits_changed(self) -> None:
        """The account's credits may have changed: read them again shortly (once for a
        burst: changes while a read is due join it)."""
        if self._session.service is not None and not self._credits_timer.isActive():
            self._credits_timer.start()

    def _synced(self, report: SyncReport) -> None:
        if report.new:
            self.credits_changed()

    def _reread_credits(self) -> None:
        if self._session.service is not None:
            self._tasks.run(
                self._load_balance(quiet=True), key="balance", owner=self, context="balance"
            )

    async def _load_balance(self, *, quiet: bool = False) -> None:
        """Money or credits, from whichever account resource the gateway answers; the
        text names the source and the tooltip says what it means."""
        service = self._session.service
        if service is None:
            return
        if not quiet:
            self.balance_label.setText("Balance: …")
        try:
            funds = await service.funds()
        except GatewayError as exc:
            self.balance_label.setText("Balance: unavailable")
            self.balance_label.setToolTip(tooltip(exc.message))
            self._session.report(f"balance: {exc.message}", False)
            return
        if service is not self._session.service:
            return  # the profile switched while we waited
        self.balance_label.setText(funds.summary())
        self.balance_label.setToolTip(tooltip(funds.details()))
        if not quiet:  # a read after a send leaves the send's own words in the bar
            self._session.report("balance refreshed", True)
