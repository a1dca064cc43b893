"""One number search in the command line too (issue 21): `--search` of `gwdesk contacts` and
`gwdesk optouts` finds the same numbers for "0412 555", "61412555" and "+61 412 555"
as every search box of the console (`tests/ui/test_number_search_views.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gwdesk.cli import main

GATEWAY = ("--base-url", "http://127.0.0.1:9", "--username", "demo")
"""The profile's account (store-only commands never call the gateway)."""
FORMS = ("0412 555", "61412555", "+61 412 555")
MATCHING = {"61412555001", "61412555002"}
ALL = {*MATCHING, "61412655000", "61499412555", "61298412555"}


def run(capfd: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    capfd.readouterr()
    assert main([*args[:1], *GATEWAY, *args[1:], "--json"]) == 0
    found: dict[str, object] = json.loads(capfd.readouterr().out)
    return found


@pytest.mark.parametrize("typed", FORMS)
def test_optouts_search_finds_the_same_numbers_in_every_form(
    capfd: pytest.CaptureFixture[str], typed: str
) -> None:
    for number in sorted(ALL):
        run(capfd, "optouts", "add", number, "--reason", "asked on the phone")
    listed = run(capfd, "optouts", "list", "--search", typed)
    assert {o["number"] for o in listed["numbers"]} == MATCHING  # type: ignore[attr-defined]


@pytest.mark.parametrize("typed", FORMS)
def test_contacts_search_finds_the_same_numbers_in_every_form(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, typed: str
) -> None:
    book = tmp_path / "book.csv"
    lines = [f"Customer {n},+{n}" for n in sorted(ALL)]
    book.write_text("Name,Mobile\n" + "\n".join(lines) + "\n", encoding="utf-8")
    run(capfd, "contacts", "import", str(book))
    listed = run(capfd, "contacts", "list", "--search", typed)
    found = {n for c in listed["contacts"] for n in c["numbers"]}  # type: ignore[attr-defined]
    assert found == MATCHING
    assert listed["total"] == len(MATCHING)
