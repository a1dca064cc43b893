"""Properties of the importer: any way a list is written, the same numbers come out.

And the fast normaliser agrees with `gwdesk.domain.numbers.normalise` everywhere,
since the Batch tab shows the operator what the send will later check again.
"""

from __future__ import annotations

import csv
import io

import phonenumbers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneNumberFormat

from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.importing.fastnumbers import CachedNormaliser, Unusable
from gwdesk.importing.recipients import check_table, table_from_bytes

HOMES = ("AU", "US", "GB", "AR", "IT")


def reference(text: str, region: str) -> str | Unusable:
    try:
        return normalise(text, region)
    except NumberError as exc:
        return Unusable(exc.reason)


def example_inputs(home: str) -> list[str]:
    """Every region's example numbers, written every way an operator in `home` might."""
    inputs = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE):
            example = phonenumbers.example_number_for_type(region, kind)
            if example is None:
                continue
            e164 = phonenumbers.format_number(example, PhoneNumberFormat.E164)
            inputs += [
                e164,
                e164[1:],
                phonenumbers.format_number(example, PhoneNumberFormat.INTERNATIONAL),
                phonenumbers.format_number(example, PhoneNumberFormat.NATIONAL),
                phonenumbers.format_out_of_country_calling_number(example, home),
                e164[:-1],
                e164 + "7",
            ]
    return inputs


@pytest.mark.parametrize("home", HOMES)
def test_the_fast_normaliser_agrees_on_every_regions_examples(home: str) -> None:
    fast = CachedNormaliser(home)
    disagreements = [
        (text, reference(text, home), fast.read(text))
        for text in example_inputs(home)
        if reference(text, home) != fast.read(text)
    ]
    assert disagreements == []
    assert fast.fast_hits > 0


digits = st.text(alphabet="0123456789", min_size=2, max_size=16)
written = st.builds(
    lambda prefix, body, sep: prefix + sep.join([body[:3], body[3:6], body[6:]]),
    st.sampled_from(
        ["", "+", "0", "00", "0011", "011", "+61", "61", "+1", "+44", "+39 0", "+54 9"]
    ),
    digits,
    st.sampled_from(["", " ", "-", ".", ") ("]),
)


@settings(max_examples=400, deadline=None)
@given(
    text=written | st.text(alphabet="0123456789 +-()./x", max_size=20), home=st.sampled_from(HOMES)
)
def test_the_fast_normaliser_agrees_with_normalise(text: str, home: str) -> None:
    assert CachedNormaliser(home).read(text) == reference(text, home)


# ---- round trips through files -----------------------------------------------------------------

au_mobile = st.builds(
    lambda a, b, rest: f"4{a}{b}{rest:06d}",
    st.sampled_from("01236"),
    st.integers(0, 9),
    st.integers(0, 999_999),
)
FOREIGN = ("+44 7400 123456", "+1 201-555-0123", "+64 21 123 4567", "+49 1512 3456789")


@st.composite
def spelled(draw: st.DrawFn) -> str:
    """One usable number, in one of the ways people write it."""
    if draw(st.booleans()):
        return draw(st.sampled_from(FOREIGN))
    nsn = draw(au_mobile)
    forms = (
        f"0{nsn}",
        f"0{nsn[:3]} {nsn[3:6]} {nsn[6:]}",
        f"+61 {nsn[:3]} {nsn[3:6]} {nsn[6:]}",
        f"61{nsn}",
        f"(0{nsn[:3]}) {nsn[3:6]}-{nsn[6:]}",
        f"0011 61 {nsn}",
    )
    return draw(st.sampled_from(forms))


name = st.text(alphabet="abcdeXYZ éüÖ€–’ñ,;|'\"", min_size=1, max_size=12).filter(
    lambda s: s.strip() != ""
)
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-be-bom", "cp1252")


def encode(text: str, encoding: str) -> bytes:
    if encoding == "utf-16-be-bom":
        return b"\xfe\xff" + text.encode("utf-16-be")
    return text.encode(encoding)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(name, spelled()), min_size=1, max_size=25),
    delimiter=st.sampled_from([",", ";", "\t", "|"]),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
    encoding=st.sampled_from(ENCODINGS),
    header=st.booleans(),
    number_first=st.booleans(),
    line_end=st.sampled_from(["\r\n", "\n"]),
)
def test_any_spelling_of_a_list_imports_to_the_same_numbers(
    rows: list[tuple[str, str]],
    delimiter: str,
    quoting: int,
    encoding: str,
    header: bool,
    number_first: bool,
    line_end: str,
) -> None:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, quoting=quoting, lineterminator=line_end)
    if header:
        writer.writerow(["Mobile", "Name"] if number_first else ["Name", "Mobile"])
    for who, number in rows:
        writer.writerow([number, who] if number_first else [who, number])
    table = table_from_bytes(encode(out.getvalue(), encoding), "AU")
    checked = check_table(table, table.column, "AU")
    assert set(checked.numbers) == {normalise(number, "AU") for _, number in rows}
    assert checked.invalid == ()
    assert len(checked.numbers) + checked.duplicates == len(rows)
