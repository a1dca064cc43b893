"""The address book: contacts kept, looked up by number, grouped, imported and exported."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.app.contacts import export_contacts, import_contacts
from gwdesk.domain.contacts import ContactCard, card_problem
from gwdesk.importing.contacts import ContactSheet, contacts_from_bytes
from gwdesk.importing.decoding import ImportFailed
from gwdesk.store.contacts import Contact, ContactError
from gwdesk.store.local import LocalStore
from tests.unit.spreadsheet_support import (
    ONE_LINE_HOSTILE,
    PLAIN_WITH_DELIMITERS,
    formulas_seen,
    read_back,
)

ANN = "61412345678"
BEN = "61412345679"
CLINIC = "61295551234"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    opened = LocalStore(tmp_path / "profile.sqlite3", "demo@gateway")
    yield opened
    opened.close()


def card(name: str, *numbers: str, **extra: object) -> ContactCard:
    return ContactCard(name, tuple(numbers), **extra)  # type: ignore[arg-type]


# ---- the store ---------------------------------------------------------------------------


def test_a_contact_keeps_its_numbers_fields_groups_and_notes(store: LocalStore) -> None:
    made = store.contacts.add(
        card(
            "Ann Lee",
            ANN,
            CLINIC,
            fields=(("First name", "Ann"), ("Clinic", "Glebe")),
            groups=("Patients", "Glebe"),
            notes="Prefers mornings",
        )
    )
    again = store.contacts.get(made.id)
    assert again == made
    assert made.numbers == (ANN, CLINIC)
    assert made.number == ANN
    assert made.values() == {"first name": "Ann", "clinic": "Glebe"}
    assert made.groups == ("Glebe", "Patients")


def test_a_number_belongs_to_one_contact(store: LocalStore) -> None:
    store.contacts.add(card("Ann", ANN))
    with pytest.raises(ContactError, match=f"{ANN} already belongs to Ann"):
        store.contacts.add(card("Impostor", ANN))


def test_names_for_many_numbers_come_from_one_call(store: LocalStore) -> None:
    store.contacts.add(card("Ann", ANN))
    store.contacts.add(card("", BEN))  # no name: nothing to show beside it
    numbers = [ANN, BEN, *(f"6141{i:07d}" for i in range(1200))]
    assert store.contacts.names(numbers) == {ANN: "Ann"}


def test_search_finds_contacts_by_name_in_any_case_or_by_digits(store: LocalStore) -> None:
    store.contacts.add(card("Zoë Nguyễn", ANN))
    store.contacts.add(card("Ben", BEN))
    assert [c.name for c in store.contacts.listing("zoË")] == ["Zoë Nguyễn"]
    assert [c.name for c in store.contacts.listing("345 679")] == ["Ben"]
    assert store.contacts.count("nobody") == 0


def test_a_search_for_like_wildcards_matches_them_literally(store: LocalStore) -> None:
    store.contacts.add(card("100% Fit", ANN))
    store.contacts.add(card("Ben", BEN))
    assert [c.name for c in store.contacts.listing("%")] == ["100% Fit"]
    assert store.contacts.listing("_") == []


def test_a_group_lists_its_members_and_counts_them(store: LocalStore) -> None:
    store.contacts.add(card("Ann", ANN, groups=("Patients",)))
    store.contacts.add(card("Ben", BEN, groups=("patients", "Staff")))
    store.contacts.add(card("Clinic", CLINIC))
    assert [c.name for c in store.contacts.members("PATIENTS")] == ["Ann", "Ben"]
    assert store.contacts.groups() == [("Patients", 2), ("Staff", 1)]
    assert store.contacts.members("nobody") == []


def test_the_opt_out_state_is_read_from_the_opt_out_list(store: LocalStore) -> None:
    made = store.contacts.add(card("Ann", ANN, CLINIC))
    assert made.opted_out == ()
    store.optouts.set(CLINIC, True, reason="asked by phone")
    assert store.contacts.get(made.id).opted_out == (CLINIC,)  # type: ignore[union-attr]
    store.optouts.set(CLINIC, False, reason="asked again")
    assert store.contacts.get(made.id).opted_out == ()  # type: ignore[union-attr]


def test_removing_a_contact_frees_its_numbers(store: LocalStore) -> None:
    made = store.contacts.add(card("Ann", ANN, groups=("Patients",)))
    assert store.contacts.remove(made.id)
    assert store.contacts.names([ANN]) == {}
    assert store.contacts.groups() == [("Patients", 0)]
    store.contacts.add(card("Ann again", ANN))


def test_merging_updates_the_contact_holding_a_number_and_adds_the_rest(
    store: LocalStore,
) -> None:
    ann = store.contacts.add(card("Ann", ANN, fields=(("Clinic", "Glebe"),), groups=("A",)))
    merged = store.contacts.merge(
        [
            card("Ann Lee", ANN, CLINIC, fields=(("clinic", "Newtown"), ("Due", "3 March"))),
            card("Ben", BEN),
        ]
    )
    assert (merged.added, merged.updated, merged.refused) == (1, 1, ())
    now = store.contacts.get(ann.id)
    assert now is not None
    assert now.name == "Ann Lee"
    assert now.numbers == (ANN, CLINIC)
    assert now.values() == {"clinic": "Newtown", "due": "3 March"}
    assert now.groups == ("A",)


def test_a_card_whose_numbers_two_contacts_hold_is_refused_and_nothing_else_changes(
    store: LocalStore,
) -> None:
    store.contacts.add(card("Ann", ANN))
    store.contacts.add(card("Ben", BEN))
    merged = store.contacts.merge([card("Both", ANN, BEN)])
    assert merged.updated == merged.added == 0
    assert "Ann, Ben" in merged.refused[0].reason
    assert store.contacts.names([ANN, BEN]) == {ANN: "Ann", BEN: "Ben"}


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (card("Ann\x1b[31m", ANN), "U+001B"),
        (card("Ann\nLee", ANN), "U+000A"),
        (card("Ann", ANN, fields=(("Clinic", "x" * 1001),)), "longer than 1,000"),
        (card("Ann", ANN, notes="\x07bell"), "U+0007"),
        (card("Ann"), "no phone number"),
        (card("Ann", ANN, groups=("\u202eevil",)), "U+202E"),
    ],
)
def test_a_card_with_an_unusable_value_is_refused_with_why(
    store: LocalStore, bad: ContactCard, reason: str
) -> None:
    with pytest.raises(ContactError, match=reason.replace("+", r"\+")):
        store.contacts.add(bad)
    assert store.contacts.count() == 0


# ---- CSV import and export ---------------------------------------------------------------


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_a_csv_is_read_by_its_headers(store: LocalStore, tmp_path: Path) -> None:
    sheet = write(
        tmp_path / "people.csv",
        "First name,Last name,Mobile,Home phone,Groups,Notes,Clinic\n"
        "Zoë,Nguyễn,0412 345 678,02 9555 1234,Patients; Glebe,Likes mornings,Glebe\n"
        "Ben,,+61 412 345 679,,Patients,,\n",
    )
    report = import_contacts(store.contacts, sheet, "AU")
    assert (report.added, report.updated, report.invalid) == (2, 0, ())
    assert report.kind == "CSV, UTF-8, comma-separated"
    [zoe] = store.contacts.listing("zoë")
    assert zoe.name == "Zoë Nguyễn"
    assert zoe.numbers == (ANN, CLINIC)
    assert zoe.groups == ("Glebe", "Patients")
    assert zoe.notes == "Likes mornings"
    assert zoe.values() == {"first name": "Zoë", "last name": "Nguyễn", "clinic": "Glebe"}


def test_a_row_with_an_unusable_number_is_left_out_whole_with_its_row(
    store: LocalStore, tmp_path: Path
) -> None:
    sheet = write(
        tmp_path / "people.csv",
        "Name,Mobile,Work phone\nAnn,0412 345 678,0412\nBen,0412 345 679,\n",
    )
    report = import_contacts(store.contacts, sheet, "AU")
    assert report.added == 1
    [row] = report.invalid
    assert row.row == 2
    assert "Work phone: '0412' is not a usable number" in row.reason
    assert store.contacts.names([ANN]) == {}


def test_hostile_cells_are_refused_or_kept_as_text(store: LocalStore, tmp_path: Path) -> None:
    sheet = write(
        tmp_path / "hostile.csv",
        "Name,Mobile,Clinic\n"
        '"=HYPERLINK(""http://evil"",""x"")",0412 345 678,"@SUM(1+1)"\n'
        "\x1b]0;owned\x07,0412 345 679,Glebe\n"
        f"Long,0412 345 670,{'y' * 5000}\n",
    )
    report = import_contacts(store.contacts, sheet, "AU")
    assert report.added == 1
    assert [(r.row, r.reason.split(" holds")[0]) for r in report.invalid][:1] == [(3, "the name")]
    assert "longer than 1,000" in report.invalid[1].reason
    [kept] = store.contacts.listing()
    assert kept.name == '=HYPERLINK("http://evil","x")'
    out = tmp_path / "out.csv"
    assert export_contacts(store.contacts, out) == 1
    with out.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[1][0] == "'" + kept.name
    assert rows[1][4] == "'@SUM(1+1)"
    again = import_contacts(store.contacts, out, "AU")  # the apostrophes come off again
    assert (again.updated, store.contacts.listing()) == (1, [kept])


def test_a_number_repeated_on_a_later_row_is_left_out_naming_the_first(
    store: LocalStore, tmp_path: Path
) -> None:
    sheet = write(tmp_path / "p.csv", "Name,Mobile\nAnn,0412 345 678\nAnna,+61412345678\n")
    report = import_contacts(store.contacts, sheet, "AU")
    assert report.added == 1
    assert report.invalid[0].reason == "a number of it is on row 2 too"


def test_a_csv_without_a_header_row_is_refused(store: LocalStore, tmp_path: Path) -> None:
    sheet = write(tmp_path / "p.csv", "0412 345 678\n0412 345 679\n")
    with pytest.raises(ImportFailed, match="header row"):
        import_contacts(store.contacts, sheet, "AU")


def test_an_exported_book_imports_back_as_updates_of_the_same_contacts(
    store: LocalStore, tmp_path: Path
) -> None:
    store.contacts.add(
        card("Ann", ANN, CLINIC, fields=(("Clinic", "Glebe"),), groups=("A", "B"), notes="x\ny")
    )
    store.contacts.add(card("Ben", BEN, fields=(("Due", "3 March"),)))
    before = store.contacts.listing()
    out = tmp_path / "book.csv"
    export_contacts(store.contacts, out)
    report = import_contacts(store.contacts, out, "AU")
    assert (report.added, report.updated, report.invalid) == (0, 2, ())
    assert store.contacts.listing() == before


def hostile_book(store: LocalStore) -> list[Contact]:
    """Contacts whose every text holds a formula after a delimiter of one reader or another."""
    for n, text in enumerate(ONE_LINE_HOSTILE):
        store.contacts.add(
            card(
                text,
                f"6141234560{n}",
                fields=(("Clinic", text),),
                groups=("=1+1", "@SUM(1)"),
                notes=f"seen\n{text}",
            )
        )
    return store.contacts.listing()


def test_an_export_runs_no_formula_whichever_delimiter_it_is_read_with(
    store: LocalStore, tmp_path: Path
) -> None:
    hostile_book(store)
    out = tmp_path / "book.csv"
    assert export_contacts(store.contacts, out) == len(ONE_LINE_HOSTILE)
    assert formulas_seen(out.read_text(encoding="utf-8-sig")) == []


def test_formulas_after_a_delimiter_import_back_as_they_were_exported(
    store: LocalStore, tmp_path: Path
) -> None:
    before = hostile_book(store)
    out = tmp_path / "book.csv"
    export_contacts(store.contacts, out)
    report = import_contacts(store.contacts, out, "AU")
    assert (report.updated, report.invalid) == (len(before), ())
    assert store.contacts.listing() == before


def test_a_name_with_delimiters_but_no_formula_exports_unchanged(
    store: LocalStore, tmp_path: Path
) -> None:
    store.contacts.add(card(PLAIN_WITH_DELIMITERS, ANN))
    out = tmp_path / "book.csv"
    export_contacts(store.contacts, out)
    assert read_back(out.read_text(encoding="utf-8-sig"))[1][0] == PLAIN_WITH_DELIMITERS


def test_an_export_of_a_group_holds_its_members_only(store: LocalStore, tmp_path: Path) -> None:
    store.contacts.add(card("Ann", ANN, groups=("Patients",)))
    store.contacts.add(card("Ben", BEN))
    assert export_contacts(store.contacts, tmp_path / "g.csv", group="patients") == 1


# ---- vCard -------------------------------------------------------------------------------

VCARDS = (
    "BEGIN:VCARD\r\n"
    "VERSION:3.0\r\n"
    "FN:Zoë Nguyễn\r\n"
    "N:Nguyễn;Zoë;;;\r\n"
    "TEL;TYPE=HOME:02 9555 1234\r\n"
    "TEL;TYPE=CELL,PREF:0412 345 678\r\n"
    "NOTE:Line one\\nLine two\\, with a comma and a long line that was fol\r\n"
    " ded by the exporter\r\n"
    "CATEGORIES:Patients,Glebe\\, inner west\r\n"
    "X-CLINIC:Glebe\r\n"
    "item1.X-ABLabel:ignored\r\n"
    "PHOTO;ENCODING=b;TYPE=JPEG:AAAA\r\n"
    "END:VCARD\r\n"
    "BEGIN:VCARD\r\n"
    "VERSION:4.0\r\n"
    "FN:Ben\r\n"
    'TEL;VALUE=uri;TYPE="voice,cell";PREF=1:tel:+61-412-345-679;ext=12\r\n'
    "END:VCARD\r\n"
    "BEGIN:VCARD\r\n"
    "VERSION:2.1\r\n"
    "FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Ren=C3=A9e M=\r\n"
    "=C3=BCller\r\n"
    "TEL;CELL:0412345670\r\n"
    "END:VCARD\r\n"
)


def test_vcards_are_read_with_folding_escapes_and_quoted_printable(
    store: LocalStore, tmp_path: Path
) -> None:
    report = import_contacts(store.contacts, write(tmp_path / "book.vcf", VCARDS), "AU")
    assert (report.added, report.invalid) == (3, ())
    assert report.kind == "vCard, UTF-8"
    (zoe,) = store.contacts.listing("zoë")
    assert zoe.numbers == (ANN, CLINIC)  # the preferred one first
    assert zoe.notes == (
        "Line one\nLine two, with a comma and a long line that was folded by the exporter"
    )
    assert zoe.groups == ("Glebe, inner west", "Patients")
    assert zoe.values() == {"first name": "Zoë", "last name": "Nguyễn", "clinic": "Glebe"}
    assert store.contacts.names([BEN, "61412345670"]) == {
        BEN: "Ben",
        "61412345670": "Renée Müller",
    }


def test_unusable_cards_are_listed_with_their_line_and_the_others_read(
    store: LocalStore, tmp_path: Path
) -> None:
    text = (
        "BEGIN:VCARD\nFN:No number\nEND:VCARD\n"
        "BEGIN:VCARD\nFN:Bad number\nTEL:12\nEND:VCARD\n"
        "BEGIN:VCARD\nFN:Escape\\x1b\x1b[2J\nTEL:0412345678\nEND:VCARD\n"
        "BEGIN:VCARD\nFN:Agent\nTEL:0412345679\n"
        "AGENT:BEGIN:VCARD\nBEGIN:VCARD\nFN:Inner\nTEL:0412345670\nEND:VCARD\n"
        "END:VCARD\n"
        "BEGIN:VCARD\nFN:Never closed\nTEL:0412345671\n"
    )
    report = import_contacts(store.contacts, write(tmp_path / "bad.vcf", text), "AU")
    assert report.added == 1
    assert [(r.row, r.text) for r in report.invalid] == [
        (1, "No number"),
        (4, "Bad number"),
        (8, "Escape\\x1b\x1b[2J"),
        (21, "Never closed"),
    ]
    assert "never closed" in report.invalid[-1].reason
    assert [c.name for c in store.contacts.listing()] == ["Agent"]


def test_a_file_of_no_contacts_at_all_is_refused(store: LocalStore, tmp_path: Path) -> None:
    with pytest.raises(ImportFailed):
        import_contacts(store.contacts, write(tmp_path / "x.vcf", "PK\x03\x04binary"), "AU")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(
    store: LocalStore, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.vcf"
    with huge.open("wb") as handle:
        handle.truncate(51 * 1024 * 1024)
    with pytest.raises(ImportFailed, match="up to 50 MB"):
        import_contacts(store.contacts, huge, "AU")


vcard_lines = st.lists(
    st.sampled_from(
        [
            "BEGIN:VCARD",
            "END:VCARD",
            "FN:Ann",
            "TEL:0412345678",
            "TEL;VALUE=uri:tel:+61412345679",
            "NOTE;ENCODING=QUOTED-PRINTABLE:a=",
            "X-A:\\n\\,\\;\\\\",
            " folded",
            "CATEGORIES:a\\,b,c",
            "N:;;;",
            "PHOTO;ENCODING=b:@@@",
            "FN;ENCODING=b;CHARSET=nonsense:QW5u",
            ":",
            '"',
        ]
    )
    | st.text(max_size=30),
    max_size=40,
)


def read_or_refusal(data: bytes) -> ContactSheet | str:
    try:
        return contacts_from_bytes(data, "AU")
    except ImportFailed as refused:
        return refused.message


def assert_read_or_refused(found: ContactSheet | str) -> None:
    if isinstance(found, str):
        assert found  # refused, in words
        return
    for made in found.cards:
        assert card_problem(made) is None
    assert all(row.reason for row in found.invalid)


@given(vcard_lines)
def test_any_vcard_like_text_is_read_or_refused_in_words(lines: list[str]) -> None:
    assert_read_or_refused(read_or_refusal("\r\n".join(["BEGIN:VCARD", *lines]).encode()))


@given(st.binary(max_size=400))
def test_any_bytes_are_read_or_refused_in_words(data: bytes) -> None:
    assert_read_or_refused(read_or_refusal(b"Name,Mobile\n" + data))


def test_a_card_with_a_line_of_endless_parameters_is_read_in_one_pass(
    store: LocalStore, tmp_path: Path
) -> None:
    text = (
        "BEGIN:VCARD\nFN:Ann\nTEL:0412345678\nX-JUNK" + ";P" * 200_000 + ":x\nEND:VCARD\n"
        'BEGIN:VCARD\nFN:Ben\nTEL:0412345679\nX-OPEN;LABEL="' + "a" * 1_000_000 + "\nEND:VCARD\n"
    )
    report = import_contacts(store.contacts, write(tmp_path / "junk.vcf", text), "AU")
    assert report.added == 1
    assert store.contacts.names([ANN]) == {ANN: "Ann"}
    assert [(r.text, r.reason) for r in report.invalid] == [
        ("Ben", "line 9 is not a vCard property (no colon)")
    ]
