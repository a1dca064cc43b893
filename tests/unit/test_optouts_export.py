"""The opt-out list as CSV (the Opt-outs tab, `gwdesk optouts export`, a batch's excluded
numbers): no cell a spreadsheet runs, whichever delimiter it reads the file with."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gwdesk.app.optouts import write_optouts
from gwdesk.store.optouts import How, OptOut
from tests.unit.spreadsheet_support import (
    HOSTILE_CELLS,
    PLAIN_WITH_DELIMITERS,
    formulas_seen,
    read_back,
)

AT = datetime(2026, 3, 3, 3, 2, tzinfo=UTC)


def exported(tmp_path: Path, *reasons: str) -> str:
    """The export of one opt-out per reason, each by an operator of the same name."""
    rows = [
        OptOut(f"6141234560{n}", True, AT, How.OPERATOR, by=why, reason=why)
        for n, why in enumerate(reasons)
    ]
    path = tmp_path / "optouts.csv"
    assert write_optouts(path, rows) == len(rows)
    return path.read_text(encoding="utf-8-sig")


def test_an_export_runs_no_formula_whichever_delimiter_it_is_read_with(tmp_path: Path) -> None:
    assert formulas_seen(exported(tmp_path, *HOSTILE_CELLS)) == []


def test_a_reason_with_delimiters_but_no_formula_exports_unchanged(tmp_path: Path) -> None:
    [_, row] = read_back(exported(tmp_path, PLAIN_WITH_DELIMITERS))
    assert (row[4], row[-1]) == (PLAIN_WITH_DELIMITERS, PLAIN_WITH_DELIMITERS)
