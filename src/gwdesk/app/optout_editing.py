"""Editing the opt-out list and the profile's rules: what the Opt-outs view decides, Qt-free.

The list is the account's own (`gwdesk.store.optouts`): keyword replies change it as they
are stored, from any channel. Here an operator reads it (a search, the numbers opted
back in too or not), opts a number out or back in by hand (a usable number and a reason
every time: only the customer's own START opts back in without one, and the reason is
kept in the number's history), imports a file of numbers (every unusable row left out
with why) and exports the list as CSV a spreadsheet opens safely. Beside the list, the
profile's rules (`gwdesk.app.optouts.check_rules`): saved only once they pass, and only
those that changed.

What must be read again, and when, is decided here too: after a change by hand the list
(with the changed number chosen); after an import the list; when another desk changed
the list (`OPTOUT_TABLES`) or a reply was stored (a STOP among them) the list; when the
rules changed elsewhere they are shown as kept, unless the operator is editing them
(`follow_rules`). Every method that reads or writes blocks: the console runs them off
its GUI thread, the command line as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Final

from gwdesk.app.optouts import (
    ImportReport,
    Rules,
    RulesError,
    check_rules,
    export_file,
    import_file,
    read_rules,
    save_rules,
)
from gwdesk.app.team import OPTOUT_TABLES
from gwdesk.domain.errors import InputRefused
from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.store.database import StoreError
from gwdesk.store.optouts import MAX_REASON, OptOut, OptOutChange, OptOutStore
from gwdesk.store.stored_settings import StoredSettings

__all__ = [
    "MAX_REASON",
    "OPTOUT_TABLES",
    "RULES_CHANGED_ELSEWHERE",
    "SHOWN",
    "ChangeRefused",
    "CheckedChange",
    "ImportReport",
    "OptOut",
    "OptOutChange",
    "OptOutEditing",
    "OptOutListing",
    "Rules",
    "RulesError",
    "RulesFollow",
    "StoreError",
    "TypedRules",
    "check_change",
    "follow_rules",
    "saved_rules_text",
]
SHOWN: Final = 5000
"""Rows listed at once; the search narrows a bigger list."""
RULES_CHANGED_ELSEWHERE: Final = (
    "The team's rules changed at another desk while you edit them (the status bar says "
    "how): your edits are kept, and Save rules replaces theirs."
)


class ChangeRefused(InputRefused):
    """A change by hand that cannot be made as typed; `field` ("number" or "reason") says
    where to point, `message` what to fix."""


@dataclass(frozen=True, slots=True)
class CheckedChange:
    """A change by hand that passed the checks: an international number and its reason."""

    number: str
    opt_out: bool
    reason: str


def check_change(number: str, reason: str, *, opt_out: bool, region: str) -> CheckedChange:
    """The number (read in `region`) and the reason as typed, checked: `ChangeRefused` when
    the number is not a usable one or no reason was given (either way: opting a number
    back in needs one as much as opting it out)."""
    try:
        international = normalise(number, region)
    except NumberError as exc:
        raise ChangeRefused("number", f"Not a usable number: {exc.reason}.") from None
    said = " ".join(reason.split())
    if not said:
        raise ChangeRefused("reason", "Say why: the reason is kept in the number's history.")
    return CheckedChange(international, opt_out, said[:MAX_REASON])


@dataclass(frozen=True, slots=True)
class OptOutListing:
    """One read of the list as the view shows it."""

    rows: list[OptOut]
    opted_out: int
    opted_in: int
    searched: bool
    """A search narrowed it (an empty list then means no match, not an empty list)."""

    @property
    def counts(self) -> str:
        more = f" (the first {SHOWN:,} shown: search to narrow)" if len(self.rows) >= SHOWN else ""
        return f"{self.opted_out:,} opted out · {self.opted_in:,} opted back in{more}"

    @property
    def empty(self) -> bool:
        """Nobody is listed and nothing was searched for: the view explains the list."""
        return not self.rows and not self.searched


@dataclass(frozen=True, slots=True)
class TypedRules:
    """The rules as the operator typed them, before they are checked."""

    opt_out: str
    opt_in: str
    marketing_default: bool
    instruction: str
    own_number: str
    repeat_hours: int = 24
    """The repeat window, in hours (`REPEAT_WINDOW_HOURS`)."""


class RulesFollow(Enum):
    """What the view does when the rules may have changed (here, or at another desk)."""

    LEAVE = "a save under way shows the rules it kept"
    WARN = "the operator is editing them: their edits are kept, and said to be"
    SHOW = "read them again and show them as kept"


def follow_rules(*, editing: bool, saving: bool) -> RulesFollow:
    """Whether rules changed elsewhere replace what the view shows."""
    if saving:
        return RulesFollow.LEAVE
    return RulesFollow.WARN if editing else RulesFollow.SHOW


def saved_rules_text(rules: Rules) -> tuple[str, bool]:
    """What to say once rules were saved and applied, and whether it warns."""
    warnings = " ".join(rules.warnings)
    saved = "Saved: replies from now on are read by these keywords."
    return (f"{saved} {warnings}".strip(), bool(warnings))


class OptOutEditing:
    """One profile's opt-out list and rules, as an operator edits them (blocking methods)."""

    def __init__(self, optouts: OptOutStore, settings: StoredSettings, region: str) -> None:
        self._optouts = optouts
        self._settings = settings
        self.region = region
        """Where a national number typed is read (the profile's region)."""

    def listing(self, search: str = "", *, include_opted_in: bool = False) -> OptOutListing:
        rows = self._optouts.listing(search, include_opted_in=include_opted_in, limit=SHOWN)
        out, back_in = self._optouts.count()
        return OptOutListing(rows, out, back_in, bool(search.strip()))

    def history(self, number: str) -> list[OptOutChange]:
        """The number's changes, newest first."""
        return list(reversed(self._optouts.history(number)))

    def check(self, number: str, reason: str, *, opt_out: bool) -> CheckedChange:
        return check_change(number, reason, opt_out=opt_out, region=self.region)

    def change(self, change: CheckedChange) -> OptOut:
        """Make a checked change (the operator's, with their name); the number's state now.
        The list is read again afterwards, with `change.number` chosen."""
        return self._optouts.set(change.number, change.opt_out, reason=change.reason)

    def import_file(self, path: Path) -> ImportReport:
        """Opt out every usable number of a CSV or text file; the rows left out, with why,
        are in the report. The list is read again afterwards."""
        return import_file(self._optouts, path, self.region, reason=f"imported from {path.name}")

    def export_file(self, path: Path, *, include_opted_in: bool = False) -> int:
        return export_file(self._optouts, path, include_opted_in=include_opted_in)

    # ---- the rules ---------------------------------------------------------------------------

    def read_rules(self) -> Rules:
        return read_rules(self._settings)

    def check_rules(self, typed: TypedRules) -> Rules:
        """The rules as typed, checked (`RulesError` naming the field)."""
        return check_rules(
            typed.opt_out,
            typed.opt_in,
            typed.marketing_default,
            typed.instruction,
            typed.own_number,
            self.region,
            repeat_hours=typed.repeat_hours,
        )

    def save_rules(self, rules: Rules) -> None:
        """Keep checked rules (only those that changed); whoever reads replies or sends must
        then apply them (the session's `apply_rules`)."""
        save_rules(self._settings, rules)
