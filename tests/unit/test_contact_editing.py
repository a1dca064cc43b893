"""The Contacts view's decisions without Qt (`gwdesk.app.contact_editing`): what typed text
becomes a card, what the store refuses, an import's rows left out with why, a contact's
opt-outs and the listing's counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.app.contact_editing import (
    CardRefused,
    ContactCard,
    ContactEditing,
    StoreError,
    TypedContact,
    card_from,
)
from gwdesk.store.local import LocalStore

ANN = "61412000001"
ZOE = "61412000002"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    opened = LocalStore(tmp_path / "profile.sqlite3", "demo@gateway")
    yield opened
    opened.close()


@pytest.fixture
def editing(store: LocalStore) -> ContactEditing:
    return ContactEditing(store.contacts, store.optouts, "AU")


def typed(
    name: str = "Ann Lee",
    numbers: str = "0412 000 001",
    fields: tuple[tuple[str, str], ...] = (),
    groups: str = "",
    notes: str = "",
) -> TypedContact:
    return TypedContact(name, numbers, fields, groups, notes)


def test_typed_text_becomes_a_card_read_in_the_region_each_number_and_group_once() -> None:
    card = card_from(
        typed(
            "Mia  García",
            "0412 000 003\n\n+61 2 9876 0000\n0412 000 003",
            (("Clinic", "Newtown"), ("", "")),
            "Patients, patients, Recall",
            " Call after 3pm \n",
        ),
        "AU",
    )

    assert card == ContactCard(
        "Mia García",
        ("61412000003", "61298760000"),
        (("Clinic", "Newtown"),),
        ("Patients", "Recall"),
        "Call after 3pm",
    )


def test_a_number_that_does_not_read_is_refused_naming_its_line() -> None:
    with pytest.raises(CardRefused) as refused:
        card_from(typed(numbers="0412 000 001\n0412 3"), "AU")

    assert refused.value.message.startswith("Number on line 2: ")


def test_a_value_without_a_field_name_is_refused() -> None:
    with pytest.raises(CardRefused) as refused:
        card_from(typed(fields=(("", "Glebe"),)), "AU")

    assert refused.value.message == "The value 'Glebe' needs a field name."


def test_a_card_the_domain_refuses_is_refused_saying_why() -> None:
    with pytest.raises(CardRefused) as refused:
        card_from(typed(name="Ann\x07Lee"), "AU")

    assert refused.value.message.startswith("The contact cannot be kept: ")


def test_a_number_another_contact_holds_is_the_stores_refusal_and_changes_nothing(
    editing: ContactEditing,
) -> None:
    editing.save(None, editing.check(typed()))

    with pytest.raises(StoreError) as refused:
        editing.save(None, editing.check(typed("Someone else")))

    assert f"{ANN} already belongs to Ann Lee" in str(refused.value)
    assert [c.name for c in editing.listing().rows] == ["Ann Lee"]


def test_an_edit_replaces_the_contact_and_a_delete_removes_it(editing: ContactEditing) -> None:
    ann = editing.save(None, editing.check(typed(groups="Patients")))

    edited = editing.save(ann, editing.check(typed("Ann Lee-Smith", groups="Staff")))
    assert (edited.id, edited.name, edited.groups) == (ann.id, "Ann Lee-Smith", ("Staff",))
    assert dict(editing.listing().groups) == {"Patients": 0, "Staff": 1}  # a group stays

    editing.remove(edited)
    assert editing.listing().empty


def test_an_import_merges_the_usable_rows_and_leaves_the_others_out_with_why(
    editing: ContactEditing, tmp_path: Path
) -> None:
    source = tmp_path / "patients.csv"
    source.write_text(
        "Name,Mobile,Groups\nAnn Lee,0412 000 001,Patients\nBad Number,0412 3,\n",
        encoding="utf-8",
    )

    report = editing.import_file(source)

    assert (report.added, report.updated) == (1, 0)
    (left_out,) = report.invalid
    assert left_out.row == 3
    assert "not a usable number" in left_out.reason
    assert report.summary() == "1 added, 0 updated, 1 left out"


def test_a_contacts_opt_outs_are_read_from_the_list_in_its_number_order(
    editing: ContactEditing, store: LocalStore
) -> None:
    store.optouts.set(ZOE, True, reason="asked by phone")
    store.optouts.set(ANN, True, reason="complaint")
    editing.save(None, editing.check(typed(numbers="0412 000 002\n0412 000 001")))
    (contact,) = editing.listing().rows

    assert [(o.number, o.reason) for o in editing.opt_outs(contact)] == [
        (ZOE, "asked by phone"),
        (ANN, "complaint"),
    ]


def test_the_listing_counts_what_the_search_found_of_all_and_the_groups(
    editing: ContactEditing,
) -> None:
    editing.save(None, editing.check(typed(groups="Patients")))
    editing.save(None, editing.check(typed("Zoë", "0412 000 002", groups="Patients, Staff")))

    assert editing.listing().counts == "2 contacts · 2 groups"
    found = editing.listing("zoë")
    assert found.counts == "1 of 2 contacts · 2 groups"
    assert not editing.listing("nobody").empty
