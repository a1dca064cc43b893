"""Renaming a saved template (`app.template_editing.rename_template`), as the console's
Manage list does it: the text kept under the new name, the old name gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.app.template_editing import TemplateExists, TemplateNameError, rename_template
from gwdesk.store.local import LocalStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    opened = LocalStore(tmp_path / "profile.sqlite3")
    yield opened
    opened.close()


def names(store: LocalStore) -> list[str]:
    return [t.name for t in store.templates.listing()]


def test_a_renamed_template_keeps_its_text_under_the_new_name_only(store: LocalStore) -> None:
    store.templates.add("Reminder", "See you at {time}")
    saved = rename_template(store.templates, "Reminder", "Appointment")
    assert (saved.name, saved.text) == ("Appointment", "See you at {time}")
    assert names(store) == ["Appointment"]


def test_a_change_of_letter_case_alone_renames_in_place(store: LocalStore) -> None:
    store.templates.add("reminder", "one")
    rename_template(store.templates, "reminder", "Reminder")
    assert names(store) == ["Reminder"]


def test_another_templates_name_is_refused_and_both_stay(store: LocalStore) -> None:
    store.templates.add("Reminder", "one")
    store.templates.add("Appointment", "two")
    with pytest.raises(TemplateExists):
        rename_template(store.templates, "Reminder", "appointment")
    assert names(store) == ["Appointment", "Reminder"]


def test_a_template_gone_meanwhile_is_said_by_name(store: LocalStore) -> None:
    with pytest.raises(TemplateNameError, match="Reminder"):
        rename_template(store.templates, "Reminder", "Appointment")
