"""The one CSV writer of every export: no cell a spreadsheet runs, whichever delimiter it reads."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.spreadsheet import SpreadsheetCsv, restored, safe_cell
from tests.unit.spreadsheet_support import (
    HOSTILE_CELLS,
    PLAIN_WITH_DELIMITERS,
    formulas_seen,
    read_back,
)


def written(*rows: tuple[object, ...]) -> str:
    out = io.StringIO(newline="")
    SpreadsheetCsv(out).rows(rows)
    return out.getvalue()


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ("x;=cmd|' /C calc'!A0", "x;'=cmd|' /C calc'!A0"),
        ("a,=1+1", "a,'=1+1"),
        ("a\t=1", "a\t'=1"),
        ("a; =HYPERLINK(1)", "a;' =HYPERLINK(1)"),
        ('a;"=1', "a;'\"=1"),
        ("a\r\n@SUM(1)", "a\r\n'@SUM(1)"),
        ("=1;-1", "'=1;'-1"),
    ],
)
def test_a_formula_after_any_delimiter_gets_an_apostrophe_before_its_segment(
    cell: str, shown: str
) -> None:
    assert safe_cell(cell) == shown


@pytest.mark.parametrize("cell", HOSTILE_CELLS)
def test_no_reader_sees_a_formula_whichever_delimiter_it_splits_on(cell: str) -> None:
    assert formulas_seen(written(("Row", "Entry"), (2, cell))) == []


def test_every_cell_is_quoted() -> None:
    assert written(("Name", 2), ("Ann", "")) == '"Name","2"\r\n"Ann",""\r\n'


def test_text_with_delimiters_but_no_formula_reads_back_unchanged() -> None:
    assert read_back(written(("Note",), (PLAIN_WITH_DELIMITERS,)))[1] == [PLAIN_WITH_DELIMITERS]


@pytest.mark.parametrize(
    ("number", "shown"),
    [
        ("+61412345678", "'+61412345678"),
        ("+61 412 345 678", "'+61 412 345 678"),
        ("61412345678; +61400000000", "61412345678;' +61400000000"),
        ("0412-345-678", "0412-345-678"),
    ],
)
def test_a_number_starting_with_a_sign_is_kept_as_text(number: str, shown: str) -> None:
    assert safe_cell(number) == shown


@pytest.mark.parametrize(
    "cell", [*HOSTILE_CELLS, "'=1", "a;'=1", "it's; 'quoted'", "+61 412 345 678", ""]
)
def test_restored_gives_back_exactly_the_cell_that_was_defused(cell: str) -> None:
    assert restored(safe_cell(cell)) == cell


@given(st.lists(st.text(alphabet="=+-@,;\t\r\n '\"ax1", max_size=10), min_size=1, max_size=3))
def test_any_row_is_written_safe_and_each_cell_restored_exactly(cells: list[str]) -> None:
    assert formulas_seen(written(tuple(cells))) == []
    assert [restored(safe_cell(cell)) for cell in cells] == cells
