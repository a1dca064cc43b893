"""Keyword rules at work on one event loop: the receiver's and a console's alike.

Whoever stores replies hands each group over (`take`, on the loop); one worker runs the
rules on them in the order they were stored (so a customer's second HOURS is judged
after the first), while the forwarder delivers forwards beside it. The replies stored
while the rules were not running (`missed`: after the newest they looked at, which the
desk's own file keeps) go first. `close` lets the
groups already handed over finish (bounded by `FINISH`), then stops both: a reply
whose run was not claimed yet is left unclaimed, so another runner may still act on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Final, TypeAlias

from gwdesk.app.reply_rules import RuleOutcome, RuleRunner, SendReply, replying_with
from gwdesk.app.rule_editing import RulesFlow, rule_secrets
from gwdesk.app.rule_forwards import RuleForwarder, SecretOf, forwarding_client
from gwdesk.app.sending import Sending
from gwdesk.domain.profile import Profile
from gwdesk.domain.settings import RULES_DONE_UP_TO
from gwdesk.profiles import PasswordVault
from gwdesk.store.local import LocalStore
from gwdesk.store.replies import StoredReply

log = logging.getLogger("gwdesk.app.rule_host")

FINISH: Final = 10.0
"""Seconds `close` waits for the groups already handed over."""
KEEP_EVERY: Final = 1.0
"""Seconds between writes of the newest reply looked at."""
MISSED_WITHIN: Final = timedelta(hours=1)
MISSED_AT_MOST: Final = 5000
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
        looked_at: Callable[[int], object] = lambda _up_to: None,
    ) -> None:
        self.runner = runner
        self.forwarder = forwarder
        self.told = told
        self.looked_at = looked_at
        """Told (off the loop) the newest reply id of each batch the rules ran on."""
        self._groups: asyncio.Queue[Sequence[StoredReply]] = asyncio.Queue()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._newest = self._kept = 0
        self._kept_at = float("-inf")
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
                await self._looked_at(max(reply.id for reply in replies))
            except Exception:  # one batch's failure must not stop the rules
                log.exception("keyword rules on %d replies", len(replies))
            finally:
                for _group in groups:
                    self._groups.task_done()

    async def _looked_at(self, newest: int, *, now: bool = False) -> None:
        """Keep `newest` as the last reply looked at: at most once a second (a write to
        the desk's file), and at the end."""
        self._newest = max(self._newest, newest)
        clock = asyncio.get_running_loop().time()
        if self._newest > self._kept and (now or clock - self._kept_at >= KEEP_EVERY):
            await asyncio.to_thread(self.looked_at, self._newest)
            self._kept, self._kept_at = self._newest, clock

    async def close(self) -> None:
        """Finish the groups handed over (at most `FINISH` s), then stop."""
        self._stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._groups.join(), FINISH)
        with contextlib.suppress(Exception):  # a store away: the next start looks again
            await self._looked_at(self._newest, now=True)
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
        forwarder = RuleForwarder(store.rule_runs, secret_of, client)
        work = RulesAtWork(runner, forwarder, told, lambda up_to: _looked_at(store, up_to))
        work.start()
        try:
            work.take(await asyncio.to_thread(missed, store))
            yield work
        finally:
            await work.close()


def _looked_at(store: LocalStore, up_to: int) -> None:
    if up_to > store.settings.get(RULES_DONE_UP_TO):
        store.settings.set(RULES_DONE_UP_TO, up_to)


def missed(store: LocalStore, now: datetime | None = None) -> list[StoredReply]:
    """The replies stored while this desk's rules were not running (since the newest they
    looked at, within `MISSED_WITHIN`, at most `MISSED_AT_MOST`): run before the new ones,
    as a claim makes a reply already acted on elsewhere pass. The first time, none: the
    rules are for replies from now on."""
    done = store.settings.get(RULES_DONE_UP_TO)
    newest = store.replies.newest_id()
    if done == 0:
        store.settings.set(RULES_DONE_UP_TO, newest)
        return []
    start = max(done, newest - MISSED_AT_MOST)
    since = (now or datetime.now(UTC)) - MISSED_WITHIN
    return [r for r in store.replies.after(start, MISSED_AT_MOST) if r.stored_at >= since]


def console_rules(
    store: LocalStore, sending: Sending | None, profile: Profile, vault: PasswordVault
) -> RulesStarter:
    """A console's rules, for the replies its own listener stores: automatic replies
    through its sends, forwards signed with this machine's keyring's secrets."""
    secret_of = rule_secrets(vault, profile).key_of
    send = replying_with(sending) if sending is not None else None
    return lambda: rules_running(store, send, secret_of)
