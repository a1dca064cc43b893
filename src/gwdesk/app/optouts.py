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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

from gwdesk.app.send_values import StoreAwayError
from gwdesk.domain.errors import InputRefused, ValidationError
from gwdesk.domain.numbers import DEFAULT_REGION, NumberError, normalise
from gwdesk.domain.optout_words import DEFAULT_OPT_IN, DEFAULT_OPT_OUT, Keywords, check_keywords
from gwdesk.domain.settings import (
    DEFAULT_INSTRUCTION,
    MARKETING_DEFAULT,
    OPT_IN_KEYWORDS,
    OPT_OUT_INSTRUCTION,
    OPT_OUT_KEYWORDS,
    OWN_NUMBER,
    REPEAT_WINDOW_HOURS,
)
from gwdesk.importing.export import write_csv
from gwdesk.importing.fastnumbers import CachedNormaliser
from gwdesk.importing.recipients import InvalidRow
from gwdesk.importing.recipients import import_file as import_recipients
from gwdesk.importing.table import Table
from gwdesk.store.database import StoreError

# What the opt-out views show (an entry, a number as the list keeps it), named here for them.
from gwdesk.store.optouts import OptOut as OptOut
from gwdesk.store.optouts import OptOutStore, utc_text
from gwdesk.store.optouts import list_number as list_number
from gwdesk.store.stored_settings import StoredSettings

REQUIRED_OPT_OUT: Final = "STOP"
"""The opt-out keyword no profile may drop (a team's server enforces it too, `pg_rules`)."""
FACTUAL_NOTE: Final = "Marked purely factual (no marketing): sent to an opted-out number."


class OptedOutError(ValidationError):
    """A single send to a number that opted out; nothing was recorded or sent."""

    def __init__(self, optout: OptOut, wire_field: str) -> None:
        super().__init__(refusal_text(optout), field=wire_field, status=None)
        self.optout = optout


def refusal_text(optout: OptOut, when_text: Callable[[datetime], str] = utc_text) -> str:
    """Why a send to `optout.number` is refused, and how it may still go (the console
    tells the time in the operator's zone)."""
    return (
        f"Not sent: {optout.number} {optout.describe(when_text)}. Mark the message as purely "
        "factual (no marketing) to send it anyway."
    )


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
        """Of `numbers`, those opted out now; `StoreAwayError` when the list cannot be
        read (no one can then tell who must not be texted)."""
        try:
            return await self._lookup(numbers)
        except StoreError as exc:
            raise StoreAwayError("The opt-out list cannot be read", exc) from exc

    async def _lookup(self, numbers: Sequence[str]) -> Mapping[str, OptOut]:
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


#: Headers of a column that says why a number is on an imported list (any letter case).
REASON_HEADERS: Final = frozenset(
    {"reason", "reasons", "why", "note", "notes", "comment", "comments"}
)


def import_file(store: OptOutStore, path: Path, region: str, *, reason: str) -> ImportReport:
    """Opt out every usable number of a CSV or text file (read like a recipient list:
    encoding, delimiter and number column guessed). A column headed Reason (or Note,
    Comment, Why) gives its row's number its own reason; `reason` (else the file's name)
    stands for the rows without one. Blocking: call it off the GUI thread."""
    table, found = import_recipients(path, region)
    added = store.import_numbers(
        found.numbers,
        reason=reason or f"imported from {path.name}",
        reasons=row_reasons(table, region),
    )
    return ImportReport(added, len(found.numbers), found.invalid, found.duplicates)


def row_reasons(table: Table, region: str) -> dict[str, str]:
    """Each number's reason from the file's reason column (its first row's that has one)."""
    if not table.has_header or table.column < 0:
        return {}
    headers = [" ".join(cell.split()).casefold() for cell in table.rows[0]]
    column = next((i for i, h in enumerate(headers) if h in REASON_HEADERS), None)
    if column is None or column == table.column:
        return {}
    reader = CachedNormaliser(region)
    reasons: dict[str, str] = {}
    for row in table.rows[table.data_start :]:
        if len(row) <= max(column, table.column) or not row[column].strip():
            continue
        number = reader.read(row[table.column])
        if isinstance(number, str):
            reasons.setdefault(number, row[column])
    return reasons


def export_file(store: OptOutStore, path: Path, *, include_opted_in: bool = False) -> int:
    """The list as CSV a spreadsheet opens safely (no cell is a formula); rows written.
    Blocking: call it off the GUI thread."""
    return write_optouts(path, store.listing(include_opted_in=include_opted_in, limit=10_000_000))


def write_optouts(path: Path, optouts: Iterable[OptOut]) -> int:
    """Opt-outs as CSV (the list, or the numbers a batch left out); rows written. Blocking."""
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
            for o in optouts
        ),
    )


# ---- the profile's rules --------------------------------------------------------------------


class RulesError(InputRefused):
    """A rule the operator typed cannot be kept; `field` names which (as the form shows it)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """A profile's opt-out keywords and marketing rules, as the profile store keeps them."""

    opt_out: tuple[str, ...] = DEFAULT_OPT_OUT
    opt_in: tuple[str, ...] = DEFAULT_OPT_IN
    marketing_default: bool = False
    instruction: str = DEFAULT_INSTRUCTION
    own_number: str = ""
    """The operator's own mobile (international digits, "" for none): where a test of a
    batch's first message goes."""
    repeat_hours: int = REPEAT_WINDOW_HOURS.default
    """How many hours back a list send of the same text to most of a list is named in
    its question."""

    @property
    def warnings(self) -> tuple[str, ...]:
        """What is allowed but probably not meant."""
        if Keywords(self.opt_out, ()).read(self.instruction) is None:
            return (
                "The instruction names none of the opt-out keywords: customers may not "
                "know what to reply.",
            )
        return ()


def keyword_list(text: str) -> list[str]:
    """Keywords as typed, separated by commas or line breaks."""
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


def check_rules(
    opt_out: str,
    opt_in: str,
    marketing_default: bool,
    instruction: str,
    own_number: str = "",
    region: str = DEFAULT_REGION,
    *,
    repeat_hours: int = REPEAT_WINDOW_HOURS.default,
) -> Rules:
    """The rules as typed, checked (`RulesError` naming the field): STOP among the opt-out
    keywords, no keyword in both lists, an instruction a marketing message can end with,
    the operator's own number (optional) a usable phone number, read in `region`, and the
    repeat window a whole number of hours the setting allows."""
    lists: dict[str, tuple[str, ...]] = {}
    for field, typed in (("opt_out", opt_out), ("opt_in", opt_in)):
        try:
            lists[field] = check_keywords(keyword_list(typed))
        except ValueError as exc:
            raise RulesError(field, f"Not a keyword list: {exc}.") from None
    if not lists["opt_out"]:
        raise RulesError("opt_out", "Keep at least one opt-out keyword: customers need a way out.")
    if REQUIRED_OPT_OUT not in lists["opt_out"]:
        raise RulesError(
            "opt_out",
            f"Keep {REQUIRED_OPT_OUT} among the opt-out keywords: it is the word customers "
            "know, and a team's server refuses a list without it.",
        )
    both = sorted(set(lists["opt_out"]) & set(lists["opt_in"]))
    if both:
        raise RulesError("opt_in", f"{', '.join(both)} cannot both opt out and opt back in.")
    wanted = " ".join(instruction.split())
    if not wanted:
        raise RulesError(
            "instruction", "A marketing message must say how to opt out: type the instruction."
        )
    try:
        OPT_OUT_INSTRUCTION.write(wanted)
    except ValueError as exc:
        raise RulesError("instruction", f"The instruction is {exc}.") from None
    own = ""
    if own_number.strip():
        try:
            own = normalise(own_number, region)
        except NumberError as exc:
            raise RulesError("own_number", f"Your number: {exc.reason}.") from None
    try:
        hours = REPEAT_WINDOW_HOURS.write(repeat_hours)
    except ValueError:
        raise RulesError(
            "repeat_hours", "The repeat window is a whole number of hours, 1 to 720 (30 days)."
        ) from None
    return Rules(lists["opt_out"], lists["opt_in"], marketing_default, wanted, own, hours)


def read_rules(settings: StoredSettings) -> Rules:
    """The profile's rules as its store keeps them. Blocking: a read of the file."""
    return Rules(
        settings.get(OPT_OUT_KEYWORDS),
        settings.get(OPT_IN_KEYWORDS),
        settings.get(MARKETING_DEFAULT),
        settings.get(OPT_OUT_INSTRUCTION),
        settings.get(OWN_NUMBER),
        settings.get(REPEAT_WINDOW_HOURS),
    )


def save_rules(settings: StoredSettings, rules: Rules) -> None:
    """Keep checked rules in the profile's store; whoever reads replies or sends must then
    apply them (`LocalStore.apply_optout_keywords`, the `Sending`'s compliance). Only the
    rules that changed are written: on a team's server each write is a change in the
    office's record, told at every desk. Blocking."""
    kept = read_rules(settings)
    if rules.opt_out != kept.opt_out:
        settings.set(OPT_OUT_KEYWORDS, rules.opt_out)
    if rules.opt_in != kept.opt_in:
        settings.set(OPT_IN_KEYWORDS, rules.opt_in)
    if rules.marketing_default != kept.marketing_default:
        settings.set(MARKETING_DEFAULT, rules.marketing_default)
    if rules.instruction != kept.instruction:
        settings.set(OPT_OUT_INSTRUCTION, rules.instruction)
    if rules.own_number != kept.own_number:
        settings.set(OWN_NUMBER, rules.own_number)
    if rules.repeat_hours != kept.repeat_hours:
        settings.set(REPEAT_WINDOW_HOURS, rules.repeat_hours)
