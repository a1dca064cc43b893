"""Saved templates in the profile's store: names unique whatever their case, only usable text kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.domain.templates import TemplateError
from gwdesk.store.local import LocalStore
from gwdesk.store.templates import TemplateExists, TemplateNameError


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    opened = LocalStore(tmp_path / "profile.sqlite3")
    yield opened
    opened.close()


def test_a_saved_template_is_listed_and_read_back_by_name(store: LocalStore) -> None:
    store.templates.add("Check-up", "Hi {first name|there}, your check-up is due")
    store.templates.add("appointment", "See you at {time}")
    assert [t.name for t in store.templates.listing()] == ["appointment", "Check-up"]
    saved = store.templates.get("CHECK-UP")
    assert saved is not None
    assert saved.text == "Hi {first name|there}, your check-up is due"


def test_a_name_taken_in_another_letter_case_is_refused(store: LocalStore) -> None:
    store.templates.add("Reminder", "one")
    with pytest.raises(TemplateExists, match="Reminder"):
        store.templates.add("reminder", "two")
    assert store.templates.get("Reminder").text == "one"  # type: ignore[union-attr]


def test_replacing_keeps_one_template_under_the_new_spelling(store: LocalStore) -> None:
    store.templates.add("Reminder", "one")
    store.templates.add("REMINDER", "two", replace=True)
    assert [(t.name, t.text) for t in store.templates.listing()] == [("REMINDER", "two")]


def test_a_template_that_does_not_parse_is_not_kept(store: LocalStore) -> None:
    with pytest.raises(TemplateError) as refused:
        store.templates.add("Broken", "Hi {name")
    assert refused.value.position == 4
    assert store.templates.listing() == []


@pytest.mark.parametrize("name", ["", "   ", "x" * 81, "bad\x1bname", "rtl\u202eeman"])
def test_unusable_names_are_refused(store: LocalStore, name: str) -> None:
    with pytest.raises(TemplateNameError):
        store.templates.add(name, "text")


def test_removing_forgets_the_template_once(store: LocalStore) -> None:
    store.templates.add("Reminder", "one")
    assert store.templates.remove("reminder") is True
    assert store.templates.remove("reminder") is False
    assert store.templates.get("Reminder") is None


def test_templates_survive_reopening_the_file(tmp_path: Path) -> None:
    first = LocalStore(tmp_path / "p.sqlite3")
    first.templates.add("Kept", "Hi {name}")
    first.close()
    again = LocalStore(tmp_path / "p.sqlite3")
    try:
        assert again.templates.get("kept") is not None
    finally:
        again.close()
