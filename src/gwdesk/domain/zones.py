"""Time zones by name: checked before they are looked up, and the ones offered first.

A zone name comes from a contact's field, a profile setting, a command's argument or
stored JSON, so it is data: only an IANA-shaped name (`Australia/Sydney`,
`Etc/GMT+10`) reaches `zoneinfo`, never a path (`../../etc/passwd`), a control
character or a 10 kB string. The zone files come from the `tzdata` package when the
machine has none (a frozen app, a slim container), so the rules do not depend on the
host. The operator is offered Australia's zones first, then New Zealand and UTC:
daylight saving differs between them (Brisbane, Perth and Darwin keep none, Adelaide
and Broken Hill are half an hour off Sydney, Lord Howe moves by half an hour).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gwdesk.domain.errors import InputRefused

#: Longer than any IANA name (the longest, America/Argentina/ComodRivadavia, has 32).
MAX_ZONE_NAME: Final = 64
_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*", re.ASCII)


class ZoneError(InputRefused):
    """A time zone name that is not one: `field` is "zone" unless the caller says."""

    def __init__(self, message: str, field: str = "zone") -> None:
        super().__init__(field, message)


@dataclass(frozen=True, slots=True)
class ZoneChoice:
    """A zone as a list of zones offers it: its IANA `name` and a short `label`."""

    name: str
    label: str


#: What the operator is offered first, in this order.
OFFERED_FIRST: Final = (
    ZoneChoice("Australia/Sydney", "Sydney, Canberra (NSW, ACT)"),
    ZoneChoice("Australia/Melbourne", "Melbourne (VIC)"),
    ZoneChoice("Australia/Brisbane", "Brisbane (QLD, no daylight saving)"),
    ZoneChoice("Australia/Adelaide", "Adelaide (SA)"),
    ZoneChoice("Australia/Darwin", "Darwin (NT, no daylight saving)"),
    ZoneChoice("Australia/Perth", "Perth (WA, no daylight saving)"),
    ZoneChoice("Australia/Hobart", "Hobart (TAS)"),
    ZoneChoice("Australia/Lord_Howe", "Lord Howe Island (half-hour daylight saving)"),
    ZoneChoice("Australia/Broken_Hill", "Broken Hill (NSW, on Adelaide time)"),
    ZoneChoice("Pacific/Auckland", "Auckland (New Zealand)"),
    ZoneChoice("UTC", "UTC"),
)
_LABELS: Final = {choice.name: choice.label for choice in OFFERED_FIRST}


def zone_named(name: str, field: str = "zone") -> ZoneInfo:
    """The zone called `name`; `ZoneError` (a `ValueError`) naming `field` if there is none."""
    if not isinstance(name, str):
        raise ZoneError(
            f"A time zone is a name such as Australia/Sydney, not {type(name).__name__}.", field
        )
    if not name:
        raise ZoneError("No time zone given: name one, such as Australia/Sydney.", field)
    if len(name) > MAX_ZONE_NAME:
        raise ZoneError(f"No time zone has a name that long ({len(name):,} characters).", field)
    if _NAME.fullmatch(name) is None:
        raise ZoneError(f"{name!r} is not a time zone name (such as Australia/Sydney).", field)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ZoneError(f"There is no time zone called {name!r}.", field) from None


def zone_label(name: str) -> str:
    """The short label of a zone offered first, else its name as it is."""
    return _LABELS.get(name, name)


def zone_choices(names: Iterable[str]) -> tuple[ZoneChoice, ...]:
    """The zones offered first, then the others of `names` (say, every zone the machine
    has) in alphabetical order, each once."""
    rest = sorted(set(names) - _LABELS.keys())
    return OFFERED_FIRST + tuple(ZoneChoice(name, name) for name in rest)
