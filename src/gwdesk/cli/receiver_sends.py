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
import threading
from dataclasses import replace
from typing import Final

from gwdesk.app.profile_data import locate, sending_for
from gwdesk.app.scheduled import MISSED_AFTER, ScheduledSends
from gwdesk.app.sending import Outcome
from gwdesk.cli import Output
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.store.local import LocalStore

WATCH: Final = 0.2
"""Seconds between looks at the command's stop flag (a thread's event, not the loop's)."""


def outcome_note(outcome: Outcome) -> str:
    """One line for a scheduled send that went: its batch, what was lodged, its text (the
    note escapes it for the terminal)."""
    batch = outcome.batch
    state = "sent" if outcome.ok else "not all sent"
    return (
        f"scheduled send {batch.id} {state}: {outcome.lodged_recipients:,} of "
        f"{outcome.recipients:,} recipients lodged ({batch.label})"
    )


def serve_in_background(
    profile: Profile, password: Secret, local: LocalStore, operator: str, stop: threading.Event,
    out: Output,
) -> threading.Thread:  # fmt: skip
    """Send `local`'s due scheduled sends for `profile` until `stop` is set."""
    from gwdesk.gateway.errors import GatewayError
    from gwdesk.gateway.service import GatewayService

    async def run() -> None:
        done = asyncio.Event()

        async def watch() -> None:
            while not stop.is_set():  # noqa: ASYNC110 - a thread's flag, not the loop's
                await asyncio.sleep(WATCH)
            done.set()

        async with GatewayService(profile, password) as service:
            data = replace(locate(profile), operator=operator)
            scheduled = ScheduledSends(sending_for(service, local, data))
            watcher = asyncio.create_task(watch())
            try:
                told = lambda outcome: out.note(outcome_note(outcome))  # noqa: E731
                await scheduled.serve(done, within=MISSED_AFTER, told=told)
            finally:
                watcher.cancel()

    def target() -> None:
        try:
            asyncio.run(run())
        except GatewayError as exc:
            out.note(f"scheduled sends stopped: {exc.message}")
        except Exception as exc:  # a note, never a traceback over the reply lines
            out.note(f"scheduled sends stopped: {type(exc).__name__}: {exc}")

    thread = threading.Thread(target=target, name="gwdesk-scheduled", daemon=True)
    thread.start()
    return thread
