"""The receiver's keyword rules: `gwdesk listen` runs the profile's rules on every reply
it stores, so they work while every console is closed.

A thread of its own with its own event loop (like the scheduled sends'): the inbox's
feed hands it each committed group, `RuleRunner` acts on the replies a rule matches
(claimed in the store first: a console that also sees a reply does not act on it
again), and `RuleForwarder` delivers the forwards. The rules and the opt-out keywords
are read again every second, so a change any desk saves applies within a second.
With a gateway (a profile and its password) automatic replies are sent through it;
without one a rule's reply is skipped, said so in its outcome. A forward's signing
secret is this machine's keyring's, else `GWDESK_RULE_SECRET` (a service without a
keyring: systemd's `LoadCredential` or an environment file readable by it alone).
Each run's outcome is a note on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Final

from gwdesk.app.profile_data import locate, sending_for
from gwdesk.app.reply_rules import RuleOutcome, replying_with
from gwdesk.app.rule_editing import rule_secrets
from gwdesk.app.rule_forwards import SecretOf
from gwdesk.app.rule_host import rules_running
from gwdesk.cli import Output
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.replies import ReplyBatch, ReplyInbox
from gwdesk.store.local import LocalStore

SECRET_ENV: Final = "GWDESK_RULE_SECRET"  # noqa: S105 - a variable name
STARTING: Final = 10.0
"""Seconds the listener waits for the rules to follow the inbox before it starts."""
WATCH: Final = 0.2
"""Seconds between looks at the command's stop flag (a thread's event, not the loop's)."""


def secret_finder(profile: Profile | None) -> SecretOf:
    """A rule's signing key: the keyring's for this profile, else the environment's."""
    from gwdesk.profiles import PasswordVault

    kept = rule_secrets(PasswordVault(), profile) if profile is not None else None

    def find(rule: str) -> bytes | None:
        found = kept.key_of(rule) if kept is not None else None
        if found:
            return found
        value = os.environ.get(SECRET_ENV)
        return value.encode() if value else None

    return find


def rules_in_background(
    local: LocalStore, inbox: ReplyInbox, operator: str, stop: threading.Event, out: Output,
    *, profile: Profile | None = None, password: Secret | None = None,
    counted: Callable[[bool], object] | None = None,
) -> threading.Thread:  # fmt: skip
    """Run `local`'s keyword rules on what `inbox` stores until `stop` is set (`counted`:
    told of each run, whether it answered: the receiver's metrics)."""
    from gwdesk.gateway.service import GatewayService

    subscribed = threading.Event()

    @contextlib.asynccontextmanager
    async def gateway() -> AsyncIterator[GatewayService | None]:
        if profile is None or password is None:
            yield None
            return
        async with GatewayService(profile, password) as service:
            yield service

    def told(outcome: RuleOutcome) -> None:
        if counted is not None:
            counted(outcome.replied)
        out.note(f"rule {outcome.rule} on reply {outcome.reply_id}: {outcome.outcome}")

    async def run() -> None:
        loop = asyncio.get_running_loop()
        async with gateway() as service:
            send = None
            if service is not None and profile is not None:
                data = replace(locate(profile), operator=operator)
                send = replying_with(sending_for(service, local, data))
            async with rules_running(local, send, secret_finder(profile), told) as work:

                def hand_over(batch: ReplyBatch) -> None:  # on the inbox's writer thread
                    if batch.new:
                        loop.call_soon_threadsafe(work.take, batch.new)

                with inbox.subscribe(hand_over):
                    subscribed.set()
                    while not stop.is_set():  # noqa: ASYNC110 - a thread's flag
                        await asyncio.sleep(WATCH)

    def target() -> None:
        try:
            asyncio.run(run())
        except Exception as exc:  # a note, never a traceback over the reply lines
            out.note(f"keyword rules stopped: {type(exc).__name__}: {exc}")
        finally:
            subscribed.set()

    thread = threading.Thread(target=target, name="gwdesk-rules", daemon=True)
    thread.start()
    subscribed.wait(STARTING)  # the first reply the listener stores is seen by the rules
    return thread
