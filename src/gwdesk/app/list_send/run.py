"""A list send while it goes and after: the outbox's rows as the runner hands them, in words.

`ListRun` is the batch the console shows (the Batch tab's results table, its progress
bars, "Send remaining"): its entries as the runner last handed them, in request
order, and what following the gateway's status endpoint learnt of them. It holds no
state of its own beside the outbox's rows. `run_end` and `follow_end` say what a
run and a following came to, in the words the console shows and the status bar
reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gwdesk.app.questions import plural
from gwdesk.app.sending import Outcome
from gwdesk.app.sms import SmsMessage
from gwdesk.app.status import Progress
from gwdesk.domain.errors import ValidationError
from gwdesk.store.outbox import EntryState, OutboxBatch, OutboxEntry

Tone = Literal["ok", "hint", "warning", "error"]
"""How a line reads: done, for information, to watch, or gone wrong."""


@dataclass(eq=False)
class ListRun:
    """The batch shown: its outbox entries as the runner last handed them (in request
    order), and what following learnt. Changed on one thread only (the console's GUI
    thread)."""

    batch: OutboxBatch
    entries: list[OutboxEntry]
    progress: Progress = field(default_factory=Progress)
    sending: bool = False
    stopping: bool = False
    halted: str = ""
    """Why sending stopped early (authentication refused...), for the operator."""
    personal: SmsMessage | None = None
    """A personal send's history message: its entries each keep their own text, and
    "Send remaining" sends them as they are (None: one text for all)."""
    message: SmsMessage | None = None
    """A same-for-all list's message as recorded ("Send remaining" sends the message
    as it is composed then)."""
    rows: dict[int, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rows = {entry.id: row for row, entry in enumerate(self.entries)}

    def put(self, entry: OutboxEntry) -> int:
        """Take an entry's new row; its row number (-1 when not of this batch)."""
        row = self.rows.get(entry.id, -1)
        if row >= 0:
            self.entries[row] = entry
        return row

    @property
    def recipients(self) -> int:
        return sum(e.recipient_count for e in self.entries)

    def count(self, *states: EntryState) -> int:
        return sum(1 for e in self.entries if e.state in states)

    def recipients_in(self, *states: EntryState) -> int:
        return sum(e.recipient_count for e in self.entries if e.state in states)

    @property
    def created(self) -> int:
        return self.progress.total(self.entries)

    def remaining(self) -> list[OutboxEntry]:
        """What "Send remaining" sends (unsettled ones are looked up first)."""
        return [e for e in self.entries if e.state is not EntryState.LODGED]

    def lodged_before_more(self) -> int:
        """Recipients this run already reached while some are left: a new send of the
        list would text them again (0 when none were, or none are left)."""
        if not self.count(EntryState.LODGED) or not self.remaining():
            return 0
        return self.recipients_in(EntryState.LODGED)

    def given_up(self) -> list[str]:
        """Why following gave up on lodged requests, one reason each."""
        return [why for e in self.entries if (why := self.progress.given_up(e))]


def sending_line(run: ListRun) -> str:
    """What is said while a run goes: `Sending to 250 recipients…`."""
    count = sum(e.recipient_count for e in run.remaining())
    return f"Sending to {plural(count, 'recipient')}…"


@dataclass(frozen=True, slots=True)
class RunEnd:
    """What a run came to, in words."""

    text: str
    tone: Tone
    ok: bool
    """Every request of the batch is lodged."""
    refused: ValidationError | None = None
    """A refusal naming a field of the message (shown at that field)."""


def run_end(run: ListRun, outcome: Outcome | None) -> RunEnd:
    """The run's last word (the run's entries already hold their last rows)."""
    refused = None
    if outcome is not None:
        run.halted = run.halted or outcome.halted
        refused = next(
            (s.error for s in outcome.sent if isinstance(s.error, ValidationError)), None
        )
    lodged = run.count(EntryState.LODGED)
    total = len(run.entries)
    left = run.recipients - run.recipients_in(EntryState.LODGED)
    excluded = len(outcome.excluded if outcome is not None else run.batch.excluded)
    left_out = (
        f" {plural(excluded, 'opted-out recipient')} excluded (not texted)." if excluded else ""
    )
    tone: Tone
    if lodged == total:
        text = f"All {plural(total, 'request')} lodged: {plural(run.recipients, 'recipient')}."
        tone = "ok"
    elif run.halted:
        text, tone = f"Stopped: {run.halted} {plural(left, 'recipient')} not sent.", "error"
    else:
        failed = run.count(EntryState.FAILED, EntryState.UNKNOWN)
        why = f"{failed} failed" if failed else "cancelled"
        text = (
            f"{lodged} of {plural(total, 'request')} lodged ({why}); "
            f"{plural(left, 'recipient')} not sent yet: Send remaining sends only to them."
        )
        tone = "error" if failed else "hint"
    field_refusal = refused if refused is not None and refused.field else None
    return RunEnd(text + left_out, tone, lodged == total, field_refusal)


FOLLOWING = "Following the batches through the status endpoint…"


@dataclass(frozen=True, slots=True)
class FollowEnd:
    """What following a run's progress came to."""

    text: str
    why: str = ""
    """Why it gave up on the first request it gave up on ('' when it did not)."""
    again: bool = True
    """Whether following again is offered (not once every message is created)."""


def follow_end(run: ListRun, stopped: bool) -> FollowEnd:
    done = run.created >= run.recipients_in(EntryState.LODGED)
    finished = done and not stopped
    given_up = run.given_up()
    if finished:
        text = "Every lodged message is created."
    elif given_up and not stopped:
        text = f"Not following: {plural(len(given_up), 'request')} gave no progress."
    else:
        text = "Not following."
    why = given_up[0] if given_up and not finished else ""
    return FollowEnd(text, why, not finished)
