"""Who may not be texted, as every send checks it: the account's opt-out list in the pipeline.

`OptOutGuard` sits in the one send pipeline (`gwdesk.app.sending` before anything is
recorded, `gwdesk.app.outbox` again just before each request leaves), so no path can
skip it: a single send to an opted-out number is refused with the reason ("opted
out by replying STOP on 3 Mar 14:02"); a list leaves such numbers out and says how
many; a batch lodged later or resumed after a crash is checked again, so a STOP that
arrived meanwhile still counts. A message the operator marks as purely factual (an
appointment reminder, a delivery notice: the Spam Act exempts them) may go to an
opted-out number; the mark is kept in the outbox and the history.

Marketing messages carry the opt-out instruction (a profile setting, "Reply STOP to
opt out" by default), which counts in their parts, and cannot come from an
alphanumeric sender: no reply, and so no STOP, could come back to one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gwdesk.gateway.errors import ValidationError
from gwdesk.importing.export import write_csv
from gwdesk.importing.recipients import InvalidRow
from gwdesk.importing.recipients import import_file as import_recipients
from gwdesk.store.optouts import OptOut, OptOutStore

FACTUAL_NOTE: Final = "Marked purely factual (no marketing): sent to an opted-out number."


class OptedOutError(ValidationError):
    """A single send to a number that opted out; nothing was recorded or sent."""

    def __init__(self, optout: OptOut, wire_field: str) -> None:
        super().__init__(
            f"Not sent: {optout.number} {optout.describe()}. Mark the message as purely "
            "factual (no marketing) to send it anyway.",
            field=wire_field,
            status=None,
        )
        self.optout = optout


@dataclass(frozen=True, slots=True)
class Screened:
    """A list after the opt-out check: who stays, and who is left out and why."""

    kept: tuple[str, ...]
    excluded: tuple[OptOut, ...] = ()
    factual: bool = False
    """Opted-out numbers were kept because the message is marked purely factual."""

    @property
    def excluded_numbers(self) -> tuple[str, ...]:
        return tuple(o.number for o in self.excluded)


#: Above this many numbers the whole list is read once (a set), not looked up in parts.
WHOLE_LIST_FROM: Final = 2000


@dataclass(frozen=True, slots=True)
class OptOutGuard:
    """One account's opt-out list, as the pipeline asks it (reads run on worker threads)."""

    store: OptOutStore

    async def lookup(self, numbers: Sequence[str]) -> Mapping[str, OptOut]:
        """Of `numbers`, those opted out now."""
        if len(numbers) < WHOLE_LIST_FROM:
            return await asyncio.to_thread(self.store.opted_out, numbers)
        opted = await asyncio.to_thread(self.store.opted_out_numbers)
        hits = [n for n in numbers if n in opted]
        return await asyncio.to_thread(self.store.opted_out, hits) if hits else {}

    async def check_one(self, number: str, wire_field: str, *, factual: bool) -> OptOut | None:
        """Refuse a single send to an opted-out number (`OptedOutError`), unless `factual`;
        the opt-out that a factual message goes past, or None."""
        found = (await self.lookup([number])).get(number)
        if found is not None and not factual:
            raise OptedOutError(found, wire_field)
        return found

    async def screen(self, numbers: Sequence[str], *, factual: bool = False) -> Screened:
        """Split a list into who may be texted and who opted out (all kept when `factual`)."""
        found = await self.lookup(numbers)
        if not found:
            return Screened(tuple(numbers))
        excluded = tuple(found[n] for n in dict.fromkeys(numbers) if n in found)
        if factual:
            return Screened(tuple(numbers), excluded, factual=True)
        return Screened(tuple(n for n in numbers if n not in found), excluded)


EXPORT_HEADER: Final = ("Number", "State", "Since (UTC)", "How", "By", "Keyword", "Reason")


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What importing a file into the opt-out list did."""

    added: int
    """Numbers opted out that were not before."""
    listed: int
    """Usable numbers in the file (first occurrences)."""
    invalid: tuple[InvalidRow, ...] = ()
    duplicates: int = 0

    def summary(self) -> str:
        parts = [f"{self.added:,} opted out", f"{self.listed - self.added:,} already on the list"]
        if self.invalid:
            parts.append(f"{len(self.invalid):,} unusable rows left out")
        if self.duplicates:
            parts.append(f"{self.duplicates:,} repeated")
        return ", ".join(parts)


def import_file(store: OptOutStore, path: Path, region: str, *, reason: str) -> ImportReport:
    """Opt out every usable number of a CSV or text file (read like a recipient list:
    encoding, delimiter and number column guessed). Blocking: call it off the GUI thread."""
    _table, found = import_recipients(path, region)
    added = store.import_numbers(found.numbers, reason=reason or f"imported from {path.name}")
    return ImportReport(added, len(found.numbers), found.invalid, found.duplicates)


def export_file(store: OptOutStore, path: Path, *, include_opted_in: bool = False) -> int:
    """The list as CSV a spreadsheet opens safely (no cell is a formula); rows written.
    Blocking: call it off the GUI thread."""
    rows = store.listing(include_opted_in=include_opted_in, limit=10_000_000)
    return write_csv(
        path,
        EXPORT_HEADER,
        (
            (
                o.number,
                "opted out" if o.opted_out else "opted in",
                o.at.isoformat(),
                o.how.value,
                o.by,
                o.keyword or "",
                o.reason,
            )
            for o in rows
        ),
    )
