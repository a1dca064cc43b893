"""The Batch tab's recipients against the account's opt-out list, kept current off the GUI thread.

As soon as a same-for-all list is checked the flow screens it (`ListSend.screen`):
the totals say how many will be left out, and `changed` asks for them again when a
screen lands. A list is compared by identity (a 100,000-number list is never
compared number by number); a screen of a list that is no longer shown is dropped.
A personal send's plan screens its own recipients.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QObject, Signal

from gwdesk.app.list_send import GatewayError, ListSend, StoreError
from gwdesk.app.optouts import Screened
from gwdesk.importing.recipients import RecipientList
from gwdesk.ui.tasks import TaskRunner, alive

SCREEN_KEY: Final = "batch-screen"
Key = tuple[RecipientList, bool]
"""A list and whether the message is marked purely factual."""


def _same(screen: Key | None, wanted: Key) -> bool:
    return screen is not None and screen[0] is wanted[0] and screen[1] == wanted[1]


class Screening(QObject):
    """The screen of the list shown; `changed` when one lands, `failed` when it cannot."""

    changed = Signal()
    failed = Signal(str)

    def __init__(self, tasks: TaskRunner, parent: QObject) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.screened: Screened | None = None
        """The last screen that landed (of `screened_for`)."""
        self.screened_for: Key | None = None
        self._screening: Key | None = None

    def reset(self) -> None:
        self.tasks.cancel(SCREEN_KEY, owner=self)
        self.screened = self.screened_for = self._screening = None

    def of(self, key: Key) -> Screened | None:
        """The screen of `key`'s list when it is in (None: none yet)."""
        return self.screened if _same(self.screened_for, key) else None

    def current(self, flow: ListSend | None, key: Key) -> Screened | None:
        """The screen of `key`'s list; None (and one is started) while there is none."""
        if not key[0].numbers:
            return None
        if _same(self.screened_for, key):
            return self.screened
        if not (_same(self._screening, key) and self.tasks.running(SCREEN_KEY, owner=self)):
            self.start(flow, key)
        return None

    def start(self, flow: ListSend | None, key: Key) -> None:
        """Screen `key`'s list now (again: a STOP may have arrived); what is shown stays
        until the new screen is in."""
        if flow is None or not key[0].numbers:
            return
        self._screening = key
        self.tasks.run(
            self._screen(flow, key), key=SCREEN_KEY, owner=self, context="checking opt-outs"
        )

    async def _screen(self, flow: ListSend, key: Key) -> None:
        result, factual = key
        try:
            screened = await flow.screen(result.numbers, factual=factual)
        except (StoreError, GatewayError) as exc:
            self.failed.emit(f"The opt-out list could not be read: {exc.__cause__ or exc}")
            return
        screened = screened or Screened(tuple(result.numbers))  # the profile keeps no list
        if not alive(self) or self._screening is not key:
            return  # another list is shown now: its own screen follows
        self.screened, self.screened_for, self._screening = screened, key, None
        self.changed.emit()
