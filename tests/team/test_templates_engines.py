"""Saved templates on both engines, each change with its audit entry (who, where, what)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gwdesk.domain.templates import TemplateError
from gwdesk.store.engine import Database
from gwdesk.store.shared import SharedData
from gwdesk.store.team import Audit
from gwdesk.store.templates import TemplateExists, TemplateStore
from tests.team.support import declaring


@pytest.fixture
def templates(shared: SharedData) -> Iterator[TemplateStore]:
    desk = declaring(shared, "alex", "desk-1")
    store = TemplateStore(desk, operator="alex", console="desk-1")
    yield store
    store.close()
    if desk is not shared:
        desk.close()


@pytest.fixture
def audit(shared: SharedData) -> Iterator[Audit]:
    database: Database = shared.open()
    yield Audit(database)
    database.close()


def test_a_saved_template_is_listed_and_read_back_in_any_letter_case(
    templates: TemplateStore,
) -> None:
    templates.add("Check-up", "Hi {first name|there}, your check-up is due")
    templates.add("appointment", "See you at {time}")
    assert [t.name for t in templates.listing()] == ["appointment", "Check-up"]
    saved = templates.get("CHECK-UP")
    assert saved is not None
    assert saved.text == "Hi {first name|there}, your check-up is due"


def test_a_template_another_console_saved_is_seen_and_its_name_is_taken(
    shared: SharedData, templates: TemplateStore
) -> None:
    other = TemplateStore(shared, operator="sam", console="desk-2")
    try:
        other.add("Reminder", "one")
        with pytest.raises(TemplateExists, match="Reminder"):
            templates.add("REMINDER", "two")
        templates.add("REMINDER", "two", replace=True)
        assert [(t.name, t.text) for t in other.listing()] == [("REMINDER", "two")]
    finally:
        other.close()


def test_each_change_writes_who_made_it_in_the_audit(
    templates: TemplateStore, audit: Audit
) -> None:
    templates.add("Reminder", "Hi {name}")
    templates.add("reminder", "Hello {name} <b>", replace=True)
    assert templates.remove("REMINDER") is True
    entries = [(e.operator, e.console, e.action, e.subject, e.detail) for e in audit.entries()]
    assert entries == [
        ("alex", "desk-1", "template added", "Reminder", "Hi {name}"),
        ("alex", "desk-1", "template changed", "reminder", "Hello {name} <b>"),
        ("alex", "desk-1", "template removed", "reminder", "Hello {name} <b>"),
    ]


def test_a_refused_change_writes_no_audit_entry(templates: TemplateStore, audit: Audit) -> None:
    templates.add("Reminder", "one")
    with pytest.raises(TemplateExists):
        templates.add("reminder", "two")
    with pytest.raises(TemplateError):
        templates.add("Broken", "Hi {name")
    assert templates.remove("nothing of that name") is False
    assert [e.action for e in audit.entries()] == ["template added"]


def test_hostile_text_is_kept_as_written(templates: TemplateStore) -> None:
    text = "Robert'); DROP TABLE templates; -- 100% ? %s {name|<i>friend</i>}"
    templates.add('Quote\'s "name"', text)
    saved = templates.get('quote\'s "NAME"')
    assert saved is not None
    assert (saved.name, saved.text) == ('Quote\'s "name"', text)
