"""Properties of the GSM 03.38 segment counter."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.segments import (
    GSM7_BASIC,
    GSM7_EXTENSION,
    MULTI_GSM7,
    MULTI_UCS2,
    SINGLE_GSM7,
    SINGLE_UCS2,
    Encoding,
    count_segments,
)

basic = st.text(alphabet=sorted(GSM7_BASIC), max_size=1200)
gsm = st.text(alphabet=sorted(GSM7_BASIC | GSM7_EXTENSION), max_size=1200)
astral = st.characters(min_codepoint=0x10000, max_codepoint=0x1FFFF)
anything = st.text(max_size=800) | st.text(alphabet=st.sampled_from("aé€😀𝄞 "), max_size=800)


def single_and_multi(encoding: Encoding) -> tuple[int, int]:
    return (SINGLE_GSM7, MULTI_GSM7) if encoding is Encoding.GSM7 else (SINGLE_UCS2, MULTI_UCS2)


@given(anything | gsm)
def test_parts_are_never_fewer_than_the_units_allow(text: str) -> None:
    info = count_segments(text)
    single, multi = single_and_multi(info.encoding)
    if info.units <= single:
        assert info.parts == 1
    else:
        assert info.parts >= math.ceil(info.units / multi)


@given(basic)
def test_basic_gsm_text_follows_the_formula(text: str) -> None:
    info = count_segments(text)
    expected = 1 if len(text) <= SINGLE_GSM7 else math.ceil(len(text) / MULTI_GSM7)
    assert info.encoding is Encoding.GSM7
    assert info.units == len(text)
    assert info.parts == expected


@given(st.lists(astral | st.sampled_from("ab"), max_size=400).map("".join))
def test_a_surrogate_pair_is_never_split(text: str) -> None:
    info = count_segments(text)
    units = [2 if ord(c) > 0xFFFF else 1 for c in text]
    if info.encoding is Encoding.UCS2 and info.units > SINGLE_UCS2:
        # Re-pack greedily without splitting: the counter must need exactly as many parts.
        parts, used = 1, 0
        for width in units:
            if used + width > MULTI_UCS2:
                parts, used = parts + 1, 0
            used += width
        assert info.parts == parts
        assert info.remaining == MULTI_UCS2 - used


@given(anything | gsm)
def test_non_gsm_is_exactly_the_characters_outside_the_tables(text: str) -> None:
    info = count_segments(text)
    outside = {c for c in text if c not in GSM7_BASIC and c not in GSM7_EXTENSION}
    assert set(info.non_gsm) == outside
    assert len(info.non_gsm) == len(outside)
    assert (info.encoding is Encoding.UCS2) == bool(outside)


@given(gsm)
def test_escape_characters_cost_two_septets(text: str) -> None:
    info = count_segments(text)
    assert info.units == len(text) + sum(c in GSM7_EXTENSION for c in text)


def counted_one_by_one(text: str) -> tuple[Encoding, int, int, int, tuple[str, ...]]:
    """The counter written out character by character: (encoding, units, parts, room, non-GSM)."""
    outside = tuple(dict.fromkeys(c for c in text if c not in GSM7_BASIC | GSM7_EXTENSION))
    encoding = Encoding.UCS2 if outside else Encoding.GSM7
    if encoding is Encoding.GSM7:
        widths = [2 if c in GSM7_EXTENSION else 1 for c in text]
    else:
        widths = [2 if ord(c) > 0xFFFF else 1 for c in text]
    single, multi = single_and_multi(encoding)
    total = sum(widths)
    if total <= single:
        return (encoding, total, 1, single - total, outside)
    parts, used = 1, 0
    for width in widths:
        if used + width > multi:
            parts, used = parts + 1, 0
        used += width
    return (encoding, total, parts, multi - used, outside)


mixed = st.text(alphabet=st.sampled_from("ab €{😀é\nЖ"), max_size=1600)


@given(anything | gsm | basic | mixed)
def test_the_counter_agrees_with_counting_one_character_at_a_time(text: str) -> None:
    info = count_segments(text)
    assert (info.encoding, info.units, info.parts, info.remaining, info.non_gsm) == (
        counted_one_by_one(text)
    )
    assert info.characters == len(text)
