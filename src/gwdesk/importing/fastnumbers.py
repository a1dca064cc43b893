"""`normalise` at import speed: a cache, and a fast path for the usual shapes of number.

`gwdesk.domain.numbers.normalise` costs 20-45 µs a number (phonenumbers' `parse`
and `is_valid_number`), so 100,000 rows would take seconds. Most rows of a real
list are one of two shapes: international digits ("+61 412 345 678",
"61412345678") or national ones with a plain trunk prefix ("0412 345 678").
For those the fast path does what phonenumbers does (split the country code or
strip the trunk prefix, then the same validity test: the region's general
pattern, then any number-type pattern, with the same region choice for shared
country codes) with regular expressions compiled once, in a few microseconds.

Anything the fast path is not sure of (carrier codes, prefix transform rules,
international dialling prefixes, numbers phonenumbers would re-read after
stripping a trunk prefix, non-geographic codes, every invalid number) goes to
`normalise` itself, which also gives the reason. Results are cached per raw text.
The fast path must agree with `normalise` on every input; the unit tests check
that over every region's example numbers and random digits.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

import phonenumbers
from phonenumbers import PhoneMetadata

from gwdesk.domain.numbers import MAX_DIGITS, MAX_INPUT, MIN_DIGITS, NumberError, normalise

_SHAPE: Final = re.compile(r"\+?[0-9\-().\s/]*")
_NOT_DIGIT: Final = re.compile(r"\D+")
#: Number types in the order they are tried: mobiles and landlines first, so that most
#: regions never compile the patterns of the rarer types (validity is any of them).
_TYPES: Final = (
    "fixed_line",
    "premium_rate",
    "toll_free",
    "shared_cost",
    "voip",
    "personal_number",
    "pager",
    "uan",
    "voicemail",
)
#: The fast path declined: ask `normalise`.
_UNSURE: Final = None
#: Surely not a valid number of this reading (no country code fits).
_NO: Final = ""


@dataclass(frozen=True, slots=True)
class _Region:
    """One region's validity test, compiled: phonenumbers' `_number_type_helper != UNKNOWN`."""

    code: str
    country_code: int
    general_lengths: frozenset[int]
    general: re.Pattern[str] | None
    typed: tuple[tuple[frozenset[int], str], ...]
    """(possible lengths, pattern) per number type; patterns compile on first use."""
    leading_digits: re.Pattern[str] | None
    trunk: re.Pattern[str] | None
    trunk_transform: bool
    international_prefix: re.Pattern[str] | None

    def valid(self, nsn: str) -> bool:
        length = len(nsn)
        if self.general is None or (self.general_lengths and length not in self.general_lengths):
            return False
        if self.general.fullmatch(nsn) is None:
            return False
        for lengths, pattern in self.typed:
            if (not lengths or length in lengths) and _pattern(pattern).fullmatch(nsn):
                return True
        return False


def _compile(pattern: str | None) -> re.Pattern[str] | None:
    return _pattern(pattern) if pattern else None


@functools.cache
def _pattern(pattern: str) -> re.Pattern[str]:
    """Compiled once per process (`re`'s own cache of 512 is too small for every region)."""
    return re.compile(pattern)


@functools.cache
def _region(code: str) -> _Region | None:
    """Compiled once per process: a pure function of phonenumbers' (immutable) metadata."""
    metadata = PhoneMetadata.metadata_for_region(code, None)
    if metadata is None:
        return None
    descs = [getattr(metadata, name) for name in _TYPES]
    if not metadata.same_mobile_and_fixed_line_pattern:
        descs.insert(0, metadata.mobile)
    typed = tuple(
        (frozenset(desc.possible_length or ()), desc.national_number_pattern)
        for desc in descs
        if desc is not None and desc.national_number_pattern
    )
    general = metadata.general_desc
    return _Region(
        code=code,
        country_code=metadata.country_code or 0,
        general_lengths=frozenset(general.possible_length or ()) if general else frozenset(),
        general=_compile(general.national_number_pattern) if general else None,
        typed=typed,
        leading_digits=_compile(metadata.leading_digits),
        trunk=_compile(metadata.national_prefix_for_parsing),
        trunk_transform=bool(metadata.national_prefix_transform_rule),
        international_prefix=_compile(metadata.international_prefix),
    )


@dataclass(frozen=True, slots=True)
class Unusable:
    """Why a text is not a usable number (what `NumberError.reason` would say)."""

    reason: str


class CachedNormaliser:
    """`normalise(text, region)` for many texts: same answers, cached, mostly fast.

    Not thread-safe; make one per import (it is cheap: regions compile on first use).
    """

    def __init__(self, region: str) -> None:
        self.region = region.upper()
        self._cache: dict[str, str | Unusable] = {}
        self._regions: dict[str, _Region | None] = {}
        known = self.region in phonenumbers.SUPPORTED_REGIONS
        self._home = self._region_for(self.region) if known else None
        self.fast_hits = 0
        self.fallbacks = 0

    def read(self, text: str) -> str | Unusable:
        """International digits for `text`, or why it is unusable; never raises."""
        cached = self._cache.get(text)
        if cached is None:
            cached = self._compute(text)
            self._cache[text] = cached
        return cached

    def normalise(self, text: str) -> str:
        """International digits for `text`; raises `NumberError` exactly as `normalise` would."""
        result = self.read(text)
        if isinstance(result, Unusable):
            raise NumberError(text, result.reason)
        return result

    def _compute(self, text: str) -> str | Unusable:
        fast = self._fast(text)
        if fast:
            self.fast_hits += 1
            return fast
        self.fallbacks += 1
        try:
            return normalise(text, self.region)
        except NumberError as exc:
            return Unusable(exc.reason)

    def _region_for(self, code: str) -> _Region | None:
        if code not in self._regions:
            self._regions[code] = _region(code)
        return self._regions[code]

    # ---- the fast path -------------------------------------------------------------------

    def _fast(self, text: str) -> str | None:
        raw = text.strip()
        if not raw or len(raw) > MAX_INPUT or _SHAPE.fullmatch(raw) is None:
            return _UNSURE
        digits = _NOT_DIGIT.sub("", raw)
        if len(digits) < 2:
            return _UNSURE
        if self._home is None:
            return _UNSURE
        international = self._international(digits)
        if international != _NO or raw.startswith("+"):
            return international or _UNSURE
        # `normalise` reads bare digits as international first, then as national.
        return self._national(digits)

    def _checked(self, result: str) -> str | None:
        return result if MIN_DIGITS <= len(result) <= MAX_DIGITS else _UNSURE

    def _valid_for_code(self, country_code: int, nsn: str) -> bool:
        """phonenumbers' `is_valid_number` for a country code and national significant number."""
        regions = phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(country_code, ())
        if len(regions) == 1:
            region = self._region_for(regions[0])
            return region is not None and region.valid(nsn)
        for code in regions:  # `_region_code_for_number_from_list`, then that region's test
            region = self._region_for(code)
            if region is None:
                continue
            if region.leading_digits is not None:
                if region.leading_digits.match(nsn):
                    return region.valid(nsn)
            elif region.valid(nsn):
                return True
        return False

    def _international(self, digits: str) -> str | None:
        """`+digits`: a result, `_NO` when no country code fits, `_UNSURE` otherwise."""
        if digits[0] == "0":
            return _NO
        for size in (1, 2, 3):
            country_code = int(digits[:size])
            regions = phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(country_code)
            if regions is not None:
                break
        else:
            return _NO
        nsn = digits[size:]
        if len(nsn) < 2 or nsn[0] == "0" or regions[0] == "001":
            return _UNSURE
        main = self._region_for(regions[0])
        # parse() strips a trunk prefix even after +CC: leave such numbers to it.
        if main is None or (main.trunk is not None and main.trunk.match(nsn)):
            return _UNSURE
        if not self._valid_for_code(country_code, nsn):
            return _NO  # parse() would test this very nsn: surely not valid
        return self._checked(digits)

    def _national(self, digits: str) -> str | None:
        """Digits read as a national number of the home region, when the reading is plain."""
        home = self._home
        if home is None or home.trunk is None or home.trunk_transform:
            return _UNSURE
        if home.international_prefix is not None:
            idd = home.international_prefix.match(digits)
            if idd is not None:
                # "0011 44 ..." from Australia: parse() drops the dialling prefix and reads
                # the rest as after a `+`, unless a 0 follows (no country code starts so).
                rest = digits[idd.end() :]
                return (
                    self._international(rest) or _UNSURE if rest[:1] not in ("", "0") else _UNSURE
                )
        if digits.startswith(str(home.country_code)):
            return _UNSURE
        trunk = home.trunk.match(digits)
        if trunk is None or trunk.end() == 0 or any(g is not None for g in trunk.groups()):
            return _UNSURE
        nsn = digits[trunk.end() :]
        if len(nsn) < 2 or nsn[0] == "0":
            return _UNSURE
        if not self._valid_for_code(home.country_code, nsn):
            return _UNSURE
        return self._checked(f"{home.country_code}{nsn}")
