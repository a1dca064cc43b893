"""One way to find a number, however it is typed: national, international, spaced or partial.

Numbers are stored as the gateway writes them, international digits (`61412345678`).
An operator types them as people write them: `0412 555`, `+61 412-555`, `61412555`, or
a piece from the middle, `345 678`. Every search box (Logs, Contacts, Opt-outs, Replies)
and every `--search` reads what was typed here, so each of those finds the same records:

- a number in the national form of the profile's region (its trunk prefix, `0` in
  Australia) or the international one (`+61…`, `0061…`, or digits starting with the
  region's country code) is the start of the stored number: `0412 555` and `61412555`
  both find numbers starting `61412555`;
- any other run of digits (`412 555`, `345678`, `0000002`: a prefix followed by a 0 is
  no prefix) is a piece found anywhere in a number.

Stored numbers a gateway wrote in national form (a reply's sender, sometimes) are read
the same way before they are compared (`international`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import phonenumbers

from gwdesk.domain.numbers import DEFAULT_REGION

NUMBERISH: Final = re.compile(r"\s*\+?[\d\s().\-/]+\s*")
"""What a typed number may hold besides its digits: a leading `+`, spaces, `-`, `.`,
`/` and brackets."""
MIN_DIGITS: Final = 3
"""Fewer digits than this are too short to be a number's piece (they are searched as text)."""


@dataclass(frozen=True, slots=True)
class NumberQuery:
    """What a typed number finds among stored international digits."""

    digits: str
    anchored: bool
    """The stored number starts with `digits` (a national or international form); else
    `digits` stands anywhere in it."""

    def matches(self, stored: str, region: str = DEFAULT_REGION) -> bool:
        number = international(stored, region)
        return number.startswith(self.digits) if self.anchored else self.digits in number

    @property
    def like(self) -> str:
        """The SQL `LIKE` pattern (digits hold no wildcard) for stored international digits."""
        return f"{self.digits}%" if self.anchored else f"%{self.digits}%"


def _ascii_digits(text: str) -> str:
    return "".join(c for c in text if "0" <= c <= "9")


def country_codes(region: str) -> tuple[str, str]:
    """(the region's country code, its national trunk prefix) as digits."""
    code = phonenumbers.country_code_for_region(region.upper()) or 0
    meta = phonenumbers.PhoneMetadata.metadata_for_region(region.upper())
    trunk = (meta.national_prefix or "") if meta is not None else ""
    return (str(code) if code else "", trunk)


def international(stored: str, region: str = DEFAULT_REGION) -> str:
    """A stored number's international digits (a national form read in `region`)."""
    digits = _ascii_digits(stored)
    if stored.lstrip().startswith("+"):
        return digits
    if digits.startswith("00"):
        return digits[2:]
    code, trunk = country_codes(region)
    if trunk and digits.startswith(trunk) and code:
        return code + digits[len(trunk) :]
    return digits


def number_query(
    typed: str, region: str = DEFAULT_REGION, *, min_digits: int = MIN_DIGITS
) -> NumberQuery | None:
    """What `typed` finds when it is a number (or a piece of one); None when it is text
    or too short a piece."""
    if not NUMBERISH.fullmatch(typed):
        return None
    digits = _ascii_digits(typed)
    if len(digits) < min_digits:
        return None
    code, trunk = country_codes(region)
    if typed.strip().startswith("+"):
        return NumberQuery(digits, anchored=True)
    # A prefix is read as one only before a digit a number can go on with (no country
    # code or area starts with 0): "0000002" is a piece of a number, not a national form.
    if digits.startswith("00") and digits[2:3] not in ("", "0"):
        return NumberQuery(digits[2:], anchored=True)
    if trunk and digits.startswith(trunk) and digits[len(trunk) : len(trunk) + 1] not in ("", "0"):
        return NumberQuery(code + digits[len(trunk) :], anchored=True)
    if code and digits.startswith(code) and len(digits) > len(code) + 1:
        return NumberQuery(digits, anchored=True)
    return NumberQuery(digits, anchored=False)
