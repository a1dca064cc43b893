"""The status bar: which gateway, whether it answers, the balance, and the token's life.

For a team profile it also says whether the team's server is connected (and how many
consoles are), or since when it is not, and what that means for the operator; and, on
its left, the team's notices (`widgets/notice_label.py`): a team setting changed at any
desk, in words (`gwdesk.app.setting_changes`), or replies passed over because this
gwdesk cannot read them; shown whole for two minutes, then as a count, the last few
kept in the tooltip. The notice, the profile, the latest activity and the balance give
way (shortened with …, whole in their tooltips) so the other items stay in view.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStatusBar, QToolButton, QWidget

from gwdesk.app.setting_changes import SettingChange
from gwdesk.domain.errors import GatewayError
from gwdesk.ui.plain_text import tooltip, visible
from gwdesk.ui.replies.listener_status import ListenerStatusWidget
from gwdesk.ui.reply_state import unreadable_text
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.team_hub import TeamHub
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import repeating
from gwdesk.ui.widgets.elided_label import ElidedLabel
from gwdesk.ui.widgets.notice_label import NoticeLabel
from gwdesk.ui.widgets.validity import set_role

ACTIVITY_CHARS = 40
"""Longest activity text shown in the bar; the whole text is in its tooltip."""


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
        # All permanent: a temporary message (showMessage) hides the normal widgets, and
        # which gateway this is, the SANDBOX badge above all, must never disappear.
        for widget in (
            self.notice_label,
            self.sandbox_badge,
            self.profile_label,
            self.connection_label,
            self.balance_label,
            self.balance_button,
            self.token_label,
            self.team_label,
            self.listener,
        ):
            self.addPermanentWidget(widget)
        self._timer = repeating(self, 5000, self.update_token)
        session.changed.connect(self.on_session_changed)
        session.activity.connect(self.on_activity)
        session.team.connection_changed.connect(self.update_team)
        session.team.consoles_changed.connect(self.update_team)
        session.team.settings_changed.connect(self.on_setting_changes)
        session.replies.unreadable_passed.connect(self.on_unreadable_replies)
        self.on_session_changed()

    def showMessage(self, text: str, timeout: int | None = 0) -> None:
        """A temporary message; it often quotes an error from outside, so no control codes."""
        super().showMessage(visible(text), timeout or 0)

    def on_session_changed(self) -> None:
        session = self._session
        self.sandbox_badge.setVisible(session.is_sandbox)
        if session.profile is None:
            self.profile_label.setText("No profile")
            self.connection_label.setText("Not connected")
        else:
            profile = session.profile
            who = f"{profile.name} ({profile.username} @ {profile.rest_url})"
            self.profile_label.setText(who)
            self.profile_label.setToolTip(tooltip(who))
            self.connection_label.setText("Connecting…")
            self.refresh_balance()
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
        self.connection_label.setText(f"{'Connected' if ok else 'Trouble'}: {shown} ({stamp})")
        self.connection_label.setToolTip(tooltip(full))  # the gateway's words: plain
        self.connection_label.setProperty("role", "ok" if ok else "error")
        self.connection_label.style().polish(self.connection_label)
        self.update_token()

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

    async def _load_balance(self) -> None:
        """Money or credits, from whichever account resource the gateway answers; the
        text names the source and the tooltip says what it means."""
        service = self._session.service
        if service is None:
            return
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
        self._session.report("balance refreshed", True)
