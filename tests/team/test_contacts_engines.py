"""The address book on both engines: contacts kept and found in any letter case, groups,
and imports of hostile CSV and vCard files (NUL characters included, which PostgreSQL
text cannot hold) that are refused row by row, never half imported."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.app.contacts import import_contacts
from gwdesk.domain.contacts import ContactCard
from gwdesk.store.contacts import ContactError, ContactStore
from gwdesk.store.shared import SharedData

ANN = "61412345678"
BEN = "61412345679"
CLINIC = "61295551234"


@pytest.fixture
def contacts(shared: SharedData) -> Iterator[ContactStore]:
    store = ContactStore(shared)
    yield store
    store.close()


def card(name: str, *numbers: str, **extra: object) -> ContactCard:
    return ContactCard(name, tuple(numbers), **extra)  # type: ignore[arg-type]


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_a_contact_keeps_its_numbers_fields_groups_and_notes(contacts: ContactStore) -> None:
    zoe = card(
        "Zoë Nguyễn", ANN, CLINIC, fields=(("Clinic", "Glebe"),),
        groups=("Patients", "glebe"), notes="Prefers mornings",
    )  # fmt: skip
    made = contacts.add(zoe)
    assert contacts.get(made.id) == made
    assert (made.numbers, made.groups, made.values()) == (
        (ANN, CLINIC),
        ("glebe", "Patients"),
        {"clinic": "Glebe"},
    )
    assert contacts.names([ANN, CLINIC, BEN]) == {ANN: "Zoë Nguyễn", CLINIC: "Zoë Nguyễn"}
    assert contacts.by_numbers([CLINIC])[CLINIC].id == made.id


def test_a_number_belongs_to_one_contact(contacts: ContactStore) -> None:
    contacts.add(card("Ann", ANN))
    with pytest.raises(ContactError, match="already belongs to Ann"):
        contacts.add(card("Other", BEN, ANN))
    assert contacts.count() == 1


def test_searches_fold_letter_case_in_names_and_notes_on_every_engine(
    contacts: ContactStore,
) -> None:
    contacts.add(card("ZOË Nguyễn", ANN, notes="Prefers MORNING calls"))
    contacts.add(card("Ben", BEN, notes="evenings"))
    assert [c.name for c in contacts.listing("zoë")] == ["ZOË Nguyễn"]
    assert [c.name for c in contacts.listing("morning")] == ["ZOË Nguyễn"]
    assert [c.name for c in contacts.listing("EVENINGS")] == ["Ben"]
    assert [c.name for c in contacts.listing("412 345 679")] == ["Ben"]
    assert contacts.count("MORNING") == 1


def test_a_search_for_like_wildcards_matches_them_literally(contacts: ContactStore) -> None:
    contacts.add(card("100% sure_thing", ANN))
    contacts.add(card("Plain", BEN))
    assert [c.name for c in contacts.listing("100%")] == ["100% sure_thing"]
    assert [c.name for c in contacts.listing("_")] == ["100% sure_thing"]
    assert contacts.listing("\\") == []


def test_a_group_lists_all_its_members_and_counts_them(contacts: ContactStore) -> None:
    for i in range(3):
        contacts.add(card(f"Member {i}", f"6141234560{i}", groups=("Patients",)))
    contacts.add(card("Outsider", BEN))
    assert [c.name for c in contacts.members("PATIENTS")] == ["Member 0", "Member 1", "Member 2"]
    assert contacts.groups() == [("Patients", 3)]
    assert contacts.remove_group("patients") is True
    assert contacts.groups() == []
    assert contacts.count() == 4


def test_removing_a_contact_frees_its_numbers(contacts: ContactStore) -> None:
    made = contacts.add(card("Ann", ANN, groups=("Patients",)))
    assert contacts.remove(made.id) is True
    assert contacts.names([ANN]) == {}
    assert contacts.groups() == [("Patients", 0)]
    contacts.add(card("Ann again", ANN))


def test_an_update_replaces_what_the_contact_holds(contacts: ContactStore) -> None:
    made = contacts.add(card("Ann", ANN, groups=("Patients",)))
    changed = contacts.update(made.id, card("Ann B", BEN, notes="moved"))
    assert (changed.name, changed.numbers, changed.groups, changed.notes) == (
        "Ann B",
        (BEN,),
        (),
        "moved",
    )
    assert contacts.names([ANN]) == {}


def test_merging_updates_the_holder_of_a_number_and_refuses_a_card_two_hold(
    contacts: ContactStore,
) -> None:
    contacts.add(card("Ann", ANN))
    contacts.add(card("Ben", BEN))
    merged = contacts.merge(
        [
            card("Ann Smith", ANN, CLINIC, groups=("Patients",)),
            card("Both", ANN, BEN),
            card("New", "61412000001"),
        ]
    )
    assert (merged.added, merged.updated) == (1, 1)
    [refused] = merged.refused
    assert refused.index == 1
    assert "belong to Ann Smith, Ben" in refused.reason
    assert contacts.names([ANN, CLINIC]) == {ANN: "Ann Smith", CLINIC: "Ann Smith"}


def test_cards_holding_nul_characters_are_refused_with_why_and_the_rest_kept(
    contacts: ContactStore,
) -> None:
    merged = contacts.merge(
        [
            card("Ann\x00", ANN),
            card("Ben", "614123\x0045679"),
            card("Cat", "61412000001", notes="a\x00b"),
            card("Dee", "61412000002", fields=(("Clinic", "Gl\x00ebe"),)),
            card("Eve", "61412000003", groups=("Pat\x00ients",)),
            card("Fay", "61412000004"),
        ]
    )
    assert (merged.added, merged.updated) == (1, 0)
    assert [r.index for r in merged.refused] == [0, 1, 2, 3, 4]
    assert all("NUL" in r.reason or "control" in r.reason for r in merged.refused), merged
    assert [c.name for c in contacts.listing()] == ["Fay"]
    with pytest.raises(ContactError, match="the number"):
        contacts.add(card("Ben", "614123\x0045679"))


def test_a_hostile_csv_is_imported_row_by_row(contacts: ContactStore, tmp_path: Path) -> None:
    sheet = write(
        tmp_path / "hostile.csv",
        "Name,Mobile,Clinic,Groups,Notes,Fi\x00eld\n"
        '"=HYPERLINK(""http://evil"",""x"")",0412 345 678,"@SUM(1+1)",,,\n'
        "\x1b]0;owned\x07,0412 345 679,Glebe,,,\n"
        f"Long,0412 345 670,{'y' * 5000},,,\n"
        "Nul\x00led,0412 345 671,Gl\x00ebe,Pat\x00ients,no\x00te,va\x00lue\n"
        "Robert'); DROP TABLE contacts; --,0412 345 672,100% ?,,%s,\n",
    )
    report = import_contacts(contacts, sheet, "AU")
    assert report.added == 3
    assert [r.row for r in report.invalid] == [3, 4]
    kept = {c.name: c for c in contacts.listing()}
    assert set(kept) == {
        '=HYPERLINK("http://evil","x")',
        "Nulled",  # NUL characters are dropped as the file is read
        "Robert'); DROP TABLE contacts; --",
    }
    assert (kept["Nulled"].groups, kept["Nulled"].notes) == (("Patients",), "note")
    assert kept["Nulled"].values()["field"] == "value"
    assert kept["Robert'); DROP TABLE contacts; --"].notes == "%s"


def test_a_hostile_vcard_file_is_imported_card_by_card(
    contacts: ContactStore, tmp_path: Path
) -> None:
    text = (
        "BEGIN:VCARD\nFN:Nul\x00Name\nTEL:0412345678\nNOTE:a\x00b\nEND:VCARD\n"
        "BEGIN:VCARD\nFN:Escape\\x1b\x1b[2J\nTEL:0412345679\nEND:VCARD\n"
        "BEGIN:VCARD\nFN:Percent 100%\nTEL:04123\x0045670\nCATEGORIES:a_b,c%d\nEND:VCARD\n"
        "BEGIN:VCARD\nFN:Never closed\nTEL:0412345671\n"
    )
    report = import_contacts(contacts, write(tmp_path / "book.vcf", text), "AU")
    assert report.added == 2
    assert [r.text for r in report.invalid] == ["Escape\\x1b\x1b[2J", "Never closed"]
    assert contacts.names([ANN, "61412345670"]) == {
        ANN: "NulName",
        "61412345670": "Percent 100%",
    }
    assert [g for g, _count in contacts.groups()] == ["a_b", "c%d"]


def test_an_import_that_fails_part_way_keeps_nothing_of_it(contacts: ContactStore) -> None:
    contacts.add(card("Ann", ANN))
    cards = [card(f"New {i}", f"614120000{i:02d}") for i in range(5)]
    cards.append(card("Broken", BEN, groups=(None,)))  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        contacts.merge(cards)
    assert [c.name for c in contacts.listing()] == ["Ann"]


def test_an_endless_number_is_refused_before_the_store(contacts: ContactStore) -> None:
    merged = contacts.merge([card("Long", "6" * 5000), card("Ann", ANN)])
    assert merged.added == 1
    assert "longer than 64" in merged.refused[0].reason


def test_a_later_card_of_one_import_updates_the_contact_an_earlier_one_added(
    contacts: ContactStore,
) -> None:
    contacts.add(card("Kept", BEN, groups=("patients",)))
    merged = contacts.merge(
        [
            card("Ann", ANN, groups=("Glebe",)),
            card("Ann Smith", ANN, CLINIC, groups=("GLEBE", "Patients")),
            card("Ben", BEN, notes="updated"),
        ]
    )
    assert (merged.added, merged.updated, merged.refused) == (1, 2, ())
    [ann] = contacts.listing("ann")
    assert (ann.name, ann.numbers, ann.groups) == (
        "Ann Smith",
        (ANN, CLINIC),
        ("Glebe", "patients"),
    )
    assert contacts.names([BEN]) == {BEN: "Ben"}
    assert contacts.groups() == [("Glebe", 1), ("patients", 2)]


def test_a_large_import_gives_every_contact_its_own_numbers(contacts: ContactStore) -> None:
    cards = [card(f"Person {i:04d}", f"614{i:08d}", groups=(f"G{i % 3}",)) for i in range(1_234)]
    merged = contacts.merge(cards)
    assert (merged.added, merged.refused) == (1_234, ())
    names = contacts.names(f"614{i:08d}" for i in range(1_234))
    assert names == {f"614{i:08d}": f"Person {i:04d}" for i in range(1_234)}
    assert contacts.groups() == [("G0", 412), ("G1", 411), ("G2", 411)]
