"""The runner's outbox changes in commit groups: one thread hand-off, one opt-out read and
one transaction for all the changes its lanes ask for meanwhile.

Each request costs the outbox two changes (in flight just before it leaves, its
outcome once known) and, for a REST request, a look at the opt-out list. Made one by
one, each was a worker-thread hand-off and a transaction of its own (on a profile's
file, a sync to disk), and together they cost the client more CPU than the gateway
spent on the whole request (issue 22). Here the changes asked for while a group is
being written wait for the next group, written by one thread of the runner's: the opt-out list
read once for the recipients of every request about to leave, then one transaction
(`OutboxStore.apply`: each change in a savepoint of its own, so one refused leaves
the others). Nothing is weaker than one by one:

- an entry's in-flight mark is committed before its request leaves (its lane waits
  for its group's commit), and only an entry still pending is marked;
- each REST request's recipients are looked up in the opt-out list just before it
  leaves (in its group), and whoever opted out is left out in the same savepoint as
  its in-flight mark;
- an outcome is in the outbox before the runner reports it (its lane waits).

A group whose transaction fails (the file locked past its wait, the server away)
fails each of its changes with the store's error, as each alone would have failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from gwdesk.app.optouts import OptOutGuard
from gwdesk.domain.errors import GatewayError, ValidationError
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import EntryState, OutboxEntry, OutboxStore, Step

log = logging.getLogger("gwdesk.app.outbox")
T = TypeVar("T")
Where = Callable[[], tuple[OutboxStore, OptOutGuard | None]]
LINGER: Final = 2.0
"""Seconds the writer thread waits for another change before it ends."""


@dataclass(frozen=True, slots=True)
class Before:
    """An entry about to be sent, after its group: `started` when it is now in flight
    (its request may leave); else `error` says why not, or it was no longer pending."""

    entry: OutboxEntry
    started: bool = False
    error: GatewayError | None = None


@dataclass(eq=False, slots=True)
class _Ask:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    step: Step | None = None
    """An outcome to record."""
    call: Callable[[], Any] | None = None
    """Any other change (neither: a begin)."""
    entry: OutboxEntry | None = None
    screen: bool = False
    result: Any = None
    error: BaseException | None = None
    excluding: frozenset[str] = field(default_factory=frozenset)
    done: bool = False
    """Answered before the group's transaction (the opt-out list could not be read)."""


class CommitGroups:
    """One runner's outbox changes, written in groups (see the module docstring)."""

    def __init__(self, where: Where) -> None:
        self._where = where
        """The outbox and opt-out list as the runner has them now."""
        self._ready = threading.Condition()
        self._waiting: list[_Ask] = []
        self._writing = False
        self._idle = False
        """The writer waits for a change (a busy one takes what came when it is done)."""

    async def begin(self, entry: OutboxEntry, *, screen: bool) -> Before:
        """Look `entry`'s recipients up in the opt-out list (when `screen`), leave out who
        opted out, and mark it in flight if it is still pending and anyone is left."""
        ask = self._ask(entry=entry, screen=screen)
        before: Before = await ask.future
        return before

    async def record(self, step: Step) -> OutboxEntry:
        """An outcome (a `Step` named lodged, failed or unknown); the entry as it now is.
        `StoreError` when it could not be recorded."""
        ask = self._ask(step=step)
        entry: OutboxEntry = await ask.future
        return entry

    async def call(self, call: Callable[[], T]) -> T:
        """Any other change of the outbox's (`call` uses the outbox's methods only: the
        group holds its connection), in the next group; its result or its error."""
        ask = self._ask(call=call)
        result: T = await ask.future
        return result

    def _ask(self, **what: Any) -> _Ask:
        loop = asyncio.get_running_loop()
        ask = _Ask(loop, loop.create_future(), **what)
        with self._ready:
            self._waiting.append(ask)
            if not self._writing:
                self._writing = True
                name = "gwdesk-outbox-groups"
                threading.Thread(target=self._drain, name=name, daemon=True).start()
            elif self._idle:  # only a waiting writer is woken (each wake-up costs a GIL switch)
                self._ready.notify()
        return ask

    # ---- the writer thread -------------------------------------------------------------

    def _drain(self) -> None:
        """Write groups while changes come (the writer thread: it waits `LINGER` seconds
        for more before it ends, so a run's lanes keep one thread; never raises)."""
        while True:
            with self._ready:
                if not self._waiting:
                    self._idle = True
                    self._ready.wait(LINGER)
                    self._idle = False
                group, self._waiting = self._waiting, []
                if not group:
                    self._writing = False
                    return
            try:
                self._write(group)
            except BaseException as exc:
                for ask in group:
                    if not ask.done:
                        ask.error = exc
            _settle(group)

    def _write(self, group: list[_Ask]) -> None:
        outbox, guard = self._where()
        found = self._opted_out(guard, [a for a in group if a.screen])
        try:
            with outbox.database.group():  # one commit for the lot, each change a savepoint
                for ask in group:
                    if not ask.done:
                        self._one(outbox, ask, found)
        except StoreError as exc:  # none of them was made
            for ask in group:
                if not ask.done:
                    ask.result, ask.error = None, exc
                    if ask.call is None and ask.step is None:
                        ask.result, ask.error = _before(ask, None, exc), None

    def _one(self, outbox: OutboxStore, ask: _Ask, found: dict[str, Any]) -> None:
        if ask.call is not None:
            try:
                ask.result = ask.call()
            except Exception as exc:
                ask.error = exc
        elif ask.step is not None:
            [(ask.result, ask.error)] = outbox.apply([ask.step])
        else:
            [(result, error)] = outbox.apply([self._begin_step(ask, found)])
            ask.result = _before(ask, result, error)

    def _opted_out(self, guard: OptOutGuard | None, asks: Sequence[_Ask]) -> dict[str, Any]:
        """The opt-outs of every recipient of the group's screened requests, in one read;
        a read that fails refuses those requests (nobody can tell who must not be texted)."""
        if guard is None or not asks:
            return {}
        numbers = [n for ask in asks if ask.entry is not None for n in ask.entry.recipients]
        try:
            return dict(guard.store.opted_out(numbers))
        except StoreError as exc:
            reason = f"The opt-out list could not be read ({exc}), so it was not sent."
            for ask in asks:
                assert ask.entry is not None
                ask.result, ask.done = Before(ask.entry, error=GatewayError(reason)), True
            return {}

    def _begin_step(self, ask: _Ask, found: dict[str, Any]) -> Step:
        entry = ask.entry
        assert entry is not None
        hits = frozenset(n for n in entry.recipients if n in found) if ask.screen else frozenset()
        if not hits or entry.state is not EntryState.PENDING:
            return Step("begin", entry.id)
        if len(hits) == len(set(entry.recipients)):
            reason = (
                "Every recipient of this request has opted out since it was recorded; not sent."
            )
        else:
            reason = f"{len(hits)} recipient(s) opted out since it was recorded and were left out."
        log.info("request %d: %s", entry.seq, reason)
        ask.excluding = hits
        return Step("begin", entry.id, {"excluding": hits, "reason": reason})


def _before(ask: _Ask, result: Any, error: BaseException | None) -> Before:
    """What a begin step came to, worded as the runner reports it."""
    entry = ask.entry
    assert entry is not None
    if error is not None:
        what = (
            "The opt-out list could not be read"
            if ask.excluding
            else "The outbox could not record this request"
        )
        return Before(entry, error=GatewayError(f"{what} ({error}), so it was not sent."))
    started, current = result
    if not started and ask.excluding and current.state is EntryState.FAILED:
        refused = ValidationError(current.reason, field="Recipients", status=None)
        return Before(current, error=refused)
    return Before(current, started=started)


def _settle(group: list[_Ask]) -> None:
    """Hand each waiter its answer on its loop (one wake-up per loop)."""
    loops: dict[asyncio.AbstractEventLoop, list[_Ask]] = {}
    for ask in group:
        loops.setdefault(ask.loop, []).append(ask)
    for loop, asks in loops.items():
        with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(_answer, asks)


def _answer(asks: list[_Ask]) -> None:
    for ask in asks:
        if ask.future.done():  # its waiter was cancelled
            continue
        if ask.error is None:
            ask.future.set_result(ask.result)
        else:
            ask.future.set_exception(ask.error)
