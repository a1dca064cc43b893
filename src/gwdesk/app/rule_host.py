"""Keyword rules at work on one event loop: the receiver's and a console's alike.

Whoever stores replies hands each group over (`take`, on the loop); one worker runs the
rules on them in the order they were stored (so a customer's second HOURS is judged
after the first), while the forwarder delivers forwards beside it. `close` lets the
groups already handed over finish (bounded by `FINISH`), then stops both: a reply
whose run was not claimed yet is left unclaimed, so another runner may still act on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Final, TypeAlias

from gwdesk.app.reply_rules import RuleOutcome, RuleRunner, SendReply, replying_with
from gwdesk.app.rule_editing import RulesFlow, rule_secrets
from gwdesk.app.rule_forwards import RuleForwarder, SecretOf, forwarding_client
from gwdesk.app.sending import Sending
from gwdesk.domain.profile import Profile
from gwdesk.profiles import KeyringUnavailable, PasswordVault
from gwdesk.store.local import LocalStore
from gwdesk.store.replies import StoredReply

log = logging.getLogger("gwdesk.app.rule_host")

FINISH: Final = 10.0
"""Seconds `close` waits for the groups already handed over."""
BATCH_GROUPS: Final = 200
"""Groups run together at most (a batch's transactions stay short)."""
RulesStarter: TypeAlias = Callable[[], "AbstractAsyncContextManager[RulesAtWork]"]
"""Puts a profile's rules to work for as long as its block lasts (`rules_running`)."""


class RulesAtWork:
    def __init__(
        self,
        runner: RuleRunner,
        forwarder: RuleForwarder | None,
        told: Callable[[RuleOutcome], object] = lambda _outcome: None,
    ) -> None:
        self.runner = runner
        self.forwarder = forwarder
        self.told = told
        self._groups: asyncio.Queue[Sequence[StoredReply]] = asyncio.Queue()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        runner.forwarded = self._wake.set

    def start(self) -> None:
        """Begin working (on the running loop)."""
        self._tasks.append(asyncio.create_task(self._work()))
        if self.forwarder is not None:
            self._tasks.append(asyncio.create_task(self.forwarder.serve(self._stop, self._wake)))

    def take(self, replies: Sequence[StoredReply]) -> None:
        """Run the rules on `replies` (just stored), after the groups before them."""
        if replies and not self._stop.is_set():
            self._groups.put_nowait(tuple(replies))

    async def _work(self) -> None:
        """Run the groups in order; those that queued up meanwhile run as one (under a
        flood the batches grow by themselves, as the inbox's commits do, so the rules'
        transactions do not grow with the rate of commits)."""
        while True:
            groups = [await self._groups.get()]
            while not self._groups.empty() and len(groups) < BATCH_GROUPS:
                groups.append(self._groups.get_nowait())
            replies = [reply for group in groups for reply in group]
            try:
                for outcome in await self.runner.run(replies):
                    self.told(outcome)
            except Exception:  # one batch's failure must not stop the rules
                log.exception("keyword rules on %d replies", len(replies))
            finally:
                for _group in groups:
                    self._groups.task_done()

    async def close(self) -> None:
        """Finish the groups handed over (at most `FINISH` s), then stop."""
        self._stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._groups.join(), FINISH)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()


@contextlib.asynccontextmanager
async def rules_running(
    store: LocalStore,
    send: SendReply | None,
    secret_of: SecretOf,
    told: Callable[[RuleOutcome], object] = lambda _outcome: None,
) -> AsyncIterator[RulesAtWork]:
    """`store`'s profile's rules at work on this loop (the rules and the opt-out keywords
    read again every second, so a change any desk saves applies within a second)
    until the block ends. `send`: automatic replies (None: none can be sent here)."""
    flow = RulesFlow(store.settings)
    async with forwarding_client() as client:
        runner = RuleRunner(
            store.rule_runs, store.conversations, flow.rules, flow.keywords, send, store.region
        )
        work = RulesAtWork(runner, RuleForwarder(store.rule_runs, secret_of, client), told)
        work.start()
        try:
            yield work
        finally:
            await work.close()


def console_rules(
    store: LocalStore, sending: Sending | None, profile: Profile, vault: PasswordVault
) -> RulesStarter:
    """A console's rules, for the replies its own listener stores: automatic replies
    through its sends, forwards signed with this machine's keyring's secrets."""
    secrets = rule_secrets(vault, profile)

    def secret_of(rule: str) -> bytes | None:
        try:
            return secrets.key_of(rule)
        except KeyringUnavailable:
            return None

    send = replying_with(sending) if sending is not None else None
    return lambda: rules_running(store, send, secret_of)
