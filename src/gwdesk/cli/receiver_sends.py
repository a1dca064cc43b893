"""The receiver's sender of scheduled sends: `gwdesk listen` with a gateway sends the
profile's held sends as they fall due, so that they go while every console is closed.

It runs on a thread of its own with its own event loop (the listener has its own
too), over the receiver's store: of the receiver and every console serving the same
account, exactly one sends each due send (`gwdesk.app.scheduled`). A send late by
more than `MISSED_AFTER` (the receiver was down at its time) is left held for a
person to decide, as a console asks about it. Each send's outcome is a note on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from dataclasses import replace

from gwdesk.app.profile_data import locate, sending_for
from gwdesk.app.scheduled import MISSED_AFTER, ScheduledSends
from gwdesk.app.sending import Outcome
from gwdesk.cli import Output
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.store.local import LocalStore


def outcome_note(outcome: Outcome) -> str:
    """One line for a scheduled send that went: its batch, what was lodged, its text (the
    note escapes it for the terminal)."""
    batch = outcome.batch
    state = "sent" if outcome.ok else "not all sent"
    return (
        f"scheduled send {batch.id} {state}: {outcome.lodged_recipients:,} of "
        f"{outcome.recipients:,} recipients lodged ({batch.label})"
    )


class ScheduledSender:
    """Sends `local`'s due scheduled sends for `profile` on a thread and loop of its own
    until `stop` (woken on its loop at once, not polled)."""

    def __init__(
        self,
        profile: Profile,
        password: Secret,
        local: LocalStore,
        operator: str,
        out: Output,
        counted: Callable[[bool], object] | None = None,
    ) -> None:
        """`counted(ok)`: told of each send that went (metrics)."""
        self.counted = counted
        self.profile = profile
        self.password = password
        self.local = local
        self.operator = operator
        self.out = out
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done: asyncio.Event | None = None
        self._stopped = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._target, name="gwdesk-scheduled", daemon=True)

    def start(self) -> ScheduledSender:
        self._thread.start()
        return self

    def stop(self, timeout: float) -> None:
        """Wake the sender and wait up to `timeout` seconds for a send on the wire to end."""
        self._stopped.set()
        self._ready.wait(timeout)
        loop, done = self._loop, self._done
        if loop is not None and done is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed: it has ended
                loop.call_soon_threadsafe(done.set)
        self._thread.join(timeout)

    async def _run(self) -> None:
        from gwdesk.gateway.service import GatewayService

        self._loop, self._done = asyncio.get_running_loop(), asyncio.Event()
        self._ready.set()
        if self._stopped.is_set():
            return
        async with GatewayService(self.profile, self.password) as service:
            data = replace(locate(self.profile), operator=self.operator)
            scheduled = ScheduledSends(sending_for(service, self.local, data))
            await scheduled.serve(self._done, within=MISSED_AFTER, told=self._told)

    def _told(self, outcome: Outcome) -> None:
        self.out.note(outcome_note(outcome))
        if self.counted is not None:
            self.counted(outcome.ok)

    def _target(self) -> None:
        from gwdesk.gateway.errors import GatewayError

        try:
            asyncio.run(self._run())
        except GatewayError as exc:
            self.out.note(f"scheduled sends stopped: {exc.message}")
        except Exception as exc:  # a note, never a traceback over the reply lines
            if not self._stopped.is_set():
                self.out.note(f"scheduled sends stopped: {type(exc).__name__}: {exc}")
        finally:
            self._ready.set()
