"""What a send will cost, before it goes: total parts, and credits where the gateway has them.

`CostWatch` asks the profile's `Sending.cost_of_parts` (the account's credits, from
whichever account resource answers) once the parts to send are known, and weighs
later totals against that same answer while it is fresh (`Cost.for_parts`), so
editing the text does not ask the gateway at every keystroke. A send is asked
again after it went (the balance changed). `cost_line` says it in words: the parts,
the credits it uses of those the account has, and when they do not cover it, by
how much (a send that exceeds the balance asks before it goes: the flows decide
that, `app.questions.credits_short`).
"""

from __future__ import annotations

import time
from typing import Final

from PySide6.QtCore import QObject, Signal

from gwdesk.app.personal import Cost
from gwdesk.app.sending import Sending
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.timers import single_shot

#: An answer about the account's credits is used this long for other totals.
FRESH_SECONDS: Final = 60.0
ASK_DELAY_MS: Final = 500
COST_KEY: Final = "cost"


def cost_line(cost: Cost | None) -> tuple[str, str]:
    """(the cost in words, its label role)."""
    if cost is None:
        return ("", "hint")
    parts = f"{cost.parts:,} part{'s' if cost.parts != 1 else ''}"
    if cost.credits is None or cost.balance is None:
        why = cost.note or "the gateway reports no credits for this account"
        return (f"Cost: {parts}; {why}.", "hint")
    uses = f"{cost.credits:,} credit{'s' if cost.credits != 1 else ''}"
    if cost.covered:
        return (f"Cost: {parts}, {uses} of the {cost.balance:,} the account has.", "hint")
    return (
        f"Cost: {parts}, {uses}, but the account has {cost.balance:,}: "
        f"{cost.credits - cost.balance:,} more than the balance. Sending asks first.",
        "warning",
    )


class CostWatch(QObject):
    """The cost of the parts a tab is about to send, kept current."""

    costed = Signal(object)
    """A `Cost` for the parts last wanted (or None: nothing to send)."""

    def __init__(self, tasks: TaskRunner, parent: QObject) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.cost: Cost | None = None
        """The last answer (for the parts it was asked for)."""
        self._asked_at = 0.0
        self._wanted: tuple[Sending, int] | None = None
        self._timer = single_shot(self, ASK_DELAY_MS, self._ask_wanted)

    def fresh(self) -> Cost | None:
        """The last answer while it is fresh (a send weighs its own parts against it), or
        None when the gateway must be asked."""
        if self.cost is None or time.monotonic() - self._asked_at > FRESH_SECONDS:
            return None
        return self.cost

    def known(self, parts: int) -> Cost | None:
        """The cost of `parts` from a fresh answer, or None when the gateway must be asked."""
        fresh = self.fresh()
        return fresh.for_parts(parts) if fresh is not None else None

    def want(self, sending: Sending | None, parts: int) -> None:
        """Say the cost of `parts` (at once from a fresh answer, else after a pause)."""
        if sending is None or parts <= 0:
            self._timer.stop()
            self._wanted = None
            self.costed.emit(None)
            return
        known = self.known(parts)
        if known is not None:
            self.costed.emit(known)
            return
        self._wanted = (sending, parts)
        self._timer.start()

    def _ask_wanted(self) -> None:
        wanted, self._wanted = self._wanted, None
        if wanted is not None:
            self.tasks.run(
                self.fetch(*wanted), key=COST_KEY, owner=self, context="reading the credits"
            )

    async def fetch(self, sending: Sending, parts: int) -> Cost:
        """Ask the gateway now (a send about to go)."""
        cost = await sending.cost_of_parts(parts)
        if alive(self):
            self.cost, self._asked_at = cost, time.monotonic()
            self.costed.emit(cost)
        return cost

    async def for_send(self, sending: Sending, parts: int) -> Cost:
        """The cost a send about to go is weighed against (fresh, or asked now)."""
        return self.known(parts) or await self.fetch(sending, parts)

    @property
    def read_due(self) -> bool:
        """A read of the credits is waiting for a pause in typing."""
        return self._timer.isActive()

    def stop_asking(self) -> None:
        """The profile's session is closing: a read not yet asked would reach a closed
        client (reported as an error, or after the loop stopped); a read under way ends
        with the session."""
        self._timer.stop()
        self._wanted = None

    def forget(self) -> None:
        """The balance changed (a send went) or the profile switched: ask again next time."""
        self.stop_asking()
        self.tasks.cancel(COST_KEY, owner=self)
        self.cost = None
