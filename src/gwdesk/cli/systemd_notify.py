"""Telling a supervisor (systemd) how the receiver is: sd_notify(3) without libsystemd.

Under `Type=notify` systemd hands the service `NOTIFY_SOCKET`, a Unix datagram socket
(a name starting with `@` is in the abstract namespace), and reads `READY=1`,
`WATCHDOG=1`, `STOPPING=1` and `STATUS=…` lines from it. With `WatchdogSec` it also
sets `WATCHDOG_USEC` (and `WATCHDOG_PID`, the process it means): a service that does
not ping within that time is killed and restarted. The receiver pings at half of it,
and only while it works (`receiver_health.py`). Without `NOTIFY_SOCKET` every call
does nothing, so the same command runs under a terminal, Docker or a test.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from typing import Final

log = logging.getLogger("gwdesk.cli.systemd_notify")
PING_FRACTION: Final = 0.5
"""Pings at this fraction of `WATCHDOG_USEC` (as sd_watchdog_enabled(3) advises)."""


def _address(name: str) -> str | bytes:
    """A `NOTIFY_SOCKET` value as `socket.sendto` takes it (`@name`: the abstract `\\0name`)."""
    if name.startswith("@"):
        return b"\0" + name[1:].encode()
    return name


class SystemdNotifier:
    """Sends the supervisor's datagrams; a failure to send is logged, never raised (the
    receiver keeps receiving whether or not its supervisor hears it)."""

    def __init__(self, socket_name: str | None, watchdog_every: float | None = None) -> None:
        self.address = _address(socket_name) if socket_name else None
        self.watchdog_every = watchdog_every
        """Seconds between `WATCHDOG=1` pings (None: no watchdog asked for)."""
        self._socket: socket.socket | None = None

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> SystemdNotifier:
        env = os.environ if env is None else env
        every = None
        usec = env.get("WATCHDOG_USEC", "")
        meant = env.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not meant or meant == str(os.getpid())):
            every = int(usec) / 1_000_000 * PING_FRACTION
        return cls(env.get("NOTIFY_SOCKET") or None, every)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *lines: str) -> None:
        if self.address is None:
            return
        try:
            if self._socket is None:
                self._socket = socket.socket(
                    socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
                )
            self._socket.sendto("\n".join(lines).encode(), self.address)
        except OSError as exc:
            log.warning("the supervisor's socket did not take a notification: %s", exc)

    def ready(self, status: str) -> None:
        self.notify("READY=1", f"STATUS={status}")

    def watchdog(self) -> None:
        self.notify("WATCHDOG=1")

    def stopping(self) -> None:
        self.notify("STOPPING=1", "STATUS=stopping")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
