"""Merge fields as the console maps them: a placeholder's source, lists combined, one number."""

from __future__ import annotations

from pathlib import Path

import pytest

from gwdesk.app.merge import (
    combined,
    fill_for_number,
    gathering,
    personal_recipients,
    remapped,
    with_group_numbers,
)
from gwdesk.app.personal import Recipient, Recipients, plan_personal
from gwdesk.app.sms import SmsForm
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.templates import parse_template
from gwdesk.gateway.errors import ValidationError
from gwdesk.importing.recipients import InvalidRow, RecipientList, check_pasted, load_table
from gwdesk.store.contacts import ContactStore

TEMPLATE = parse_template("Hi {first name}, see you at {clinic|the clinic}.")
SHEET = "Given,Mobile,Clinic\nAnn,0412 000 001,Glebe\nZoë,0412 000 002,\n"


@pytest.fixture
def contacts(tmp_path: Path) -> ContactStore:
    store = ContactStore(tmp_path / "p.sqlite3")
    yield store
    store.close()


def sheet(tmp_path: Path, text: str = SHEET) -> object:
    path = tmp_path / "people.csv"
    path.write_text(text, encoding="utf-8")
    return load_table(path, "AU")


def texts(recipients: Recipients, template: object = TEMPLATE) -> list[str]:
    plan = plan_personal(SmsForm(), template, recipients, "AU")  # type: ignore[arg-type]
    return [m.text for m in plan.messages]


def test_gathering_asks_for_the_placeholders_and_their_sources() -> None:
    gathered = gathering(TEMPLATE, {"first name": "given", "clinic": None})
    assert gathered.fields == ("first name", "clinic", "given")


def test_a_placeholder_pointed_at_another_column_takes_its_values(
    tmp_path: Path, contacts: ContactStore
) -> None:
    table = sheet(tmp_path)
    found = personal_recipients(
        TEMPLATE,
        {"first name": "given"},
        "AU",
        contacts,
        table=table,
        column=1,  # type: ignore[arg-type]
    )
    assert texts(found) == ["Hi Ann, see you at Glebe.", "Hi Zoë, see you at the clinic."]


def test_a_placeholder_pointed_at_nothing_takes_its_fallback(
    tmp_path: Path, contacts: ContactStore
) -> None:
    table = sheet(tmp_path)
    found = personal_recipients(
        TEMPLATE,
        {"first name": "given", "clinic": None},
        "AU",
        contacts,
        table=table,  # type: ignore[arg-type]
        column=1,
    )
    assert texts(found) == ["Hi Ann, see you at the clinic.", "Hi Zoë, see you at the clinic."]


def test_a_placeholder_no_source_has_is_refused_before_any_text(
    tmp_path: Path, contacts: ContactStore
) -> None:
    found = personal_recipients(TEMPLATE, {}, "AU", contacts, table=sheet(tmp_path), column=1)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"\{first name\}"):
        texts(found)


def test_pasted_numbers_take_their_contacts_fields(contacts: ContactStore) -> None:
    contacts.add(ContactCard("Ann Lee", ("61412000001",), (("First name", "Ann"),)))
    pasted = check_pasted("0412 000 001\n0412 000 002\nnot a number", "AU")
    found = personal_recipients(TEMPLATE, {}, "AU", contacts, pasted=pasted)
    plan = plan_personal(SmsForm(), TEMPLATE, found, "AU")
    assert [m.text for m in plan.messages] == ["Hi Ann, see you at the clinic."]
    assert [(r.row, r.reason) for r in plan.invalid] == [
        (2, "no value for {first name}"),
        (3, "it contains 'n'; use digits, spaces and a leading +"),
    ]
    assert found.source == "the pasted numbers"


def test_a_group_after_a_file_keeps_each_number_once_with_rows_numbered_on(
    tmp_path: Path, contacts: ContactStore
) -> None:
    contacts.add(ContactCard("Ann", ("61412000001",), (("First name", "Annie"),), ("Patients",)))
    contacts.add(ContactCard("Mia", ("61412000003",), (("First name", "Mia"),), ("Patients",)))
    members = contacts.members("Patients")
    found = personal_recipients(
        TEMPLATE,
        {"first name": "given"},
        "AU",
        contacts,
        table=sheet(tmp_path),  # type: ignore[arg-type]
        column=1,
        groups=[("Patients", members)],
    )
    assert [(r.row, r.number) for r in found.items] == [
        (2, "61412000001"),
        (3, "61412000002"),
        (5, "61412000003"),
    ]
    assert found.duplicates == 1  # Ann was in the file too: the file's row is kept
    assert found.source == "the file and the group 'Patients'"


def test_combined_numbers_rows_on_and_keeps_invalid_rows_distinct() -> None:
    first = Recipients((Recipient(2, "61412000001", {}),), (InvalidRow(3, "x", "bad"),))
    second = Recipients((Recipient(1, "61412000002", {}), Recipient(2, "61412000001", {})))
    merged = combined([first, second])
    assert [(r.row, r.number) for r in merged.items] == [(2, "61412000001"), (4, "61412000002")]
    assert [row.row for row in merged.invalid] == [3]
    assert merged.duplicates == 1


def test_remapped_is_the_same_list_when_every_placeholder_keeps_its_name() -> None:
    recipients = Recipients((Recipient(2, "61412000001", {"first name": "Ann"}),))
    assert remapped(recipients, TEMPLATE, {}) is recipients


def test_group_numbers_join_a_same_for_all_list_once_each(contacts: ContactStore) -> None:
    contacts.add(ContactCard("Ann", ("61412000001", "61412000009"), groups=("Patients",)))
    contacts.add(ContactCard("Ben", ("61412000002",), groups=("Patients",)))
    base = RecipientList(("61412000002",), (), 0)
    joined = with_group_numbers(base, [contacts.members("Patients")])
    assert joined is not None
    assert (joined.numbers, joined.duplicates) == (("61412000002", "61412000001"), 1)
    assert with_group_numbers(base, []) is base


def test_a_single_message_is_filled_from_the_numbers_contact(contacts: ContactStore) -> None:
    contacts.add(ContactCard("Zoë", ("61412000002",), (("First name", "Zoë"), ("Clinic", "Bondi"))))
    assert fill_for_number(TEMPLATE, "61412000002", contacts) == "Hi Zoë, see you at Bondi."


def test_a_single_message_to_no_contact_is_refused_with_why(contacts: ContactStore) -> None:
    with pytest.raises(ValidationError) as caught:
        fill_for_number(TEMPLATE, "61412000005", contacts)
    assert caught.value.field == "Message"
    assert caught.value.message.startswith(
        "No value for {first name}: +61 412 000 005 is not one of your contacts"
    )


def test_a_single_message_takes_fallbacks_and_writes_double_braces_as_one(
    contacts: ContactStore,
) -> None:
    contacts.add(ContactCard("Ann", ("61412000001",), (("First name", "Ann"),)))
    template = parse_template("{first name}: {notes|none}")
    assert fill_for_number(template, "61412000001", contacts) == "Ann: none"
    literal = parse_template("No placeholders, {{just braces}}")
    assert fill_for_number(literal, "61412000001", None) == "No placeholders, {just braces}"
