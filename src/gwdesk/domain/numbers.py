"""Recipient numbers: what an operator types, turned into what the gateway wants.

The gateway takes international digits without the `+` (8 to 15 of them). Operators
type national numbers ("0412 345 678"), international ones ("+61 412 345 678") and
bare digits pasted from other systems ("61412345678"). Checking them here, with
phonenumbers' metadata for the profile's region, means a typo is refused with a
reason before any request leaves, instead of a batch failing half way.

Bare digits are read as an international number first when they form a valid one
(that is how the gateway itself reads them), and only otherwise as a national
number of the region. That order makes `normalise(normalise(x)) == normalise(x)`
hold for every number: a normalised number is always a valid international one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberFormat, ValidationResult

DEFAULT_REGION: Final = "AU"
MIN_DIGITS: Final = 8
MAX_DIGITS: Final = 15
#: Longer input is refused before parsing: no phone number is written this long.
MAX_INPUT: Final = 64
_ALLOWED: Final = re.compile(r"[0-9+\-().\s/]*")
_DIGITS: Final = re.compile(r"\d+")

_POSSIBLE_REASONS: Final = {
    ValidationResult.TOO_SHORT: "too short",
    ValidationResult.TOO_LONG: "too long",
    ValidationResult.INVALID_COUNTRY_CODE: "the country code is not valid",
    ValidationResult.INVALID_LENGTH: "it has the wrong number of digits",
}


class NumberError(ValueError):
    """A number the gateway would refuse; `reason` says why in plain words."""

    def __init__(self, number: str, reason: str) -> None:
        self.number = number
        self.reason = reason
        super().__init__(f"{number[:40]!r} is not a usable phone number: {reason}.")


def is_region(region: str) -> bool:
    return region.upper() in phonenumbers.SUPPORTED_REGIONS


def _parse(text: str, region: str | None) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(text, region)
    except NumberParseException:
        return None


def _reject_reason(text: str, region: str) -> str:
    """The most useful reason a number that did not validate can be given."""
    try:
        number = phonenumbers.parse(text, region)
    except NumberParseException as exc:
        if exc.error_type == NumberParseException.INVALID_COUNTRY_CODE:
            return "the country code is not valid"
        if exc.error_type in (
            NumberParseException.TOO_SHORT_NSN,
            NumberParseException.TOO_SHORT_AFTER_IDD,
        ):
            return "too short"
        if exc.error_type == NumberParseException.TOO_LONG:
            return "too long"
        return "not a phone number"
    possible = phonenumbers.is_possible_number_with_reason(number)
    if possible in _POSSIBLE_REASONS:
        return _POSSIBLE_REASONS[possible]
    home = phonenumbers.region_code_for_country_code(number.country_code or 0)
    where = home if home and home != "ZZ" else f"country code +{number.country_code}"
    return f"not a valid number for {where}"


def normalise(text: str, region: str = DEFAULT_REGION) -> str:
    """International digits without `+` for `text`, read from `region` when national.

    Raises `NumberError` (and nothing else) with the reason when the number is unusable.
    """
    if not isinstance(text, str):
        raise NumberError(repr(text), "not text")
    raw = text.strip()
    if not raw:
        raise NumberError(text, "it is empty")
    if len(raw) > MAX_INPUT:
        raise NumberError(text, "too long")
    if not _ALLOWED.fullmatch(raw):
        bad = next(c for c in raw if not _ALLOWED.fullmatch(c))
        raise NumberError(text, f"it contains {bad!r}; use digits, spaces and a leading +")
    # "(+61) 412 345 678" is common in real lists: a + may follow an opening parenthesis.
    if raw.count("+") > 1 or ("+" in raw and not raw.lstrip("( ").startswith("+")):
        raise NumberError(text, "a + may only start the number")
    digits = "".join(_DIGITS.findall(raw))
    if not digits:
        raise NumberError(text, "it has no digits")
    if not is_region(region):
        raise NumberError(text, f"the region {region[:8]!r} is not known")
    region = region.upper()
    candidates = [f"+{digits}"] if raw.startswith("+") else [f"+{digits}", digits]
    for candidate in candidates:
        number = _parse(candidate, None if candidate.startswith("+") else region)
        if number is not None and phonenumbers.is_valid_number(number):
            result = phonenumbers.format_number(number, PhoneNumberFormat.E164).lstrip("+")
            if len(result) < MIN_DIGITS:
                raise NumberError(
                    text,
                    f"too short for the gateway (it needs {MIN_DIGITS} to {MAX_DIGITS} digits)",
                )
            if len(result) > MAX_DIGITS:
                raise NumberError(text, "too long")
            return result
    return _raise_invalid(text, candidates[-1], region)


def _raise_invalid(text: str, candidate: str, region: str) -> str:
    raise NumberError(text, _reject_reason(candidate, region))


def display(digits: str) -> str:
    """A readable international form ("+61 412 345 678"); unreadable input comes back as is."""
    number = _parse(f"+{digits.lstrip('+')}", None)
    if number is None or not phonenumbers.is_valid_number(number):
        return digits
    formatted: str = phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL)
    return formatted


@dataclass(frozen=True, slots=True)
class Rejected:
    """One unusable entry of a recipient list, with where it was."""

    index: int
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class RecipientCheck:
    """A recipient list read: usable numbers (first occurrences, in order) and the rest."""

    numbers: tuple[str, ...]
    rejected: tuple[Rejected, ...]
    duplicates: int
    """Entries dropped because an earlier one was the same number."""


def check_recipients(entries: list[str] | tuple[str, ...], region: str) -> RecipientCheck:
    """Normalise a list; the same number twice is sent once."""
    seen: dict[str, None] = {}
    rejected: list[Rejected] = []
    duplicates = 0
    for index, entry in enumerate(entries):
        try:
            number = normalise(entry, region)
        except NumberError as exc:
            rejected.append(Rejected(index, entry, exc.reason))
            continue
        if number in seen:
            duplicates += 1
        else:
            seen[number] = None
    return RecipientCheck(tuple(seen), tuple(rejected), duplicates)
