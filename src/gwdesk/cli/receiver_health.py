"""The receiver's watchdog: `WATCHDOG=1` to systemd only while the receiver works.

The main thread calls `tick()` at the supervisor's interval (`SystemdNotifier`): the
main loop ran (it called), the listener's loop turns, the writer thread runs and the
store answers within its bound (`replies/health.py`). A receiver failing any of these
is not pinged, so systemd restarts it once `WatchdogSec` passes; each change of health
is said once (a note, and the supervisor's `STATUS=`), never the failure's details
twice over.
"""

from __future__ import annotations

from collections.abc import Callable

from gwdesk.cli.systemd_notify import SystemdNotifier
from gwdesk.replies.health import Health, HealthCheck
from gwdesk.replies.listener import ReplyListener


class ReceiverWatch:
    def __init__(
        self,
        notifier: SystemdNotifier,
        health: HealthCheck,
        listener: ReplyListener,
        say: Callable[[str], None],
    ) -> None:
        self.notifier = notifier
        self.health = health
        self.listener = listener
        self.say = say
        self._last = Health()

    def check(self) -> Health:
        health = self.health.check()
        if health.ok and not self.listener.responsive(self.health.bound):
            return Health("listener")
        return health

    def tick(self) -> Health:
        """Look once; ping the watchdog when all works; say a change of health."""
        health = self.check()
        if health.ok:
            self.notifier.watchdog()
        if health != self._last:
            self._last = health
            self.say(f"health: {health.text}")
            self.notifier.notify(f"STATUS={'listening' if health.ok else health.text}")
        return health
