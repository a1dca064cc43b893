"""The Opt-outs view's decisions without Qt (`gwdesk.app.optout_editing`): a change by hand
needs a usable number and a reason, an import says which rows it left out and why, the
list's counts, and when rules changed elsewhere replace what is shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.app.optout_editing import (
    ChangeRefused,
    OptOutEditing,
    RulesError,
    RulesFollow,
    TypedRules,
    check_change,
    follow_rules,
    saved_rules_text,
)
from gwdesk.store.local import LocalStore

CUSTOMER = "61412345678"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    opened = LocalStore(tmp_path / "profile.sqlite3", "demo@gateway", operator="Alex")
    yield opened
    opened.close()


@pytest.fixture
def editing(store: LocalStore) -> OptOutEditing:
    return OptOutEditing(store.optouts, store.settings, "AU")


def test_opting_a_number_back_in_without_a_reason_is_refused_at_the_reason(
    editing: OptOutEditing, store: LocalStore
) -> None:
    store.optouts.set(CUSTOMER, True, reason="asked by phone")

    with pytest.raises(ChangeRefused) as refused:
        editing.check("0412 345 678", "   ", opt_out=False)

    assert refused.value.field == "reason"
    assert refused.value.message == "Say why: the reason is kept in the number's history."
    optout = store.optouts.get(CUSTOMER)
    assert optout is not None
    assert optout.opted_out


def test_an_unusable_number_is_refused_at_the_number_before_the_reason() -> None:
    with pytest.raises(ChangeRefused) as refused:
        check_change("0412 345", "", opt_out=True, region="AU")

    assert refused.value.field == "number"
    assert refused.value.message.startswith("Not a usable number: ")


def test_a_checked_change_is_made_in_international_form_with_its_reason_in_one_line(
    editing: OptOutEditing, store: LocalStore
) -> None:
    change = editing.check("0412 345 678", "  signed the\nconsent form ", opt_out=False)
    assert (change.number, change.opt_out, change.reason) == (
        CUSTOMER,
        False,
        "signed the consent form",
    )
    store.optouts.set(CUSTOMER, True, reason="asked by phone")

    now = editing.change(change)

    assert (now.number, now.opted_out, now.reason) == (CUSTOMER, False, "signed the consent form")
    assert [c.reason for c in editing.history(CUSTOMER)] == [
        "signed the consent form",
        "asked by phone",
    ]


def test_an_import_opts_out_the_usable_rows_and_leaves_the_others_out_with_why(
    editing: OptOutEditing, tmp_path: Path
) -> None:
    source = tmp_path / "stop-list.csv"
    source.write_text("number,branch\n0412 345 678,a\n+61 412 000 111,b\nnot a number,c\n")

    report = editing.import_file(source)

    assert (report.added, report.listed) == (2, 2)
    (left_out,) = report.invalid
    assert (left_out.row, left_out.text) == (4, "not a number")
    assert left_out.reason
    assert report.summary() == "2 opted out, 0 already on the list, 1 unusable rows left out"
    assert {o.reason for o in editing.listing().rows} == {"imported from stop-list.csv"}


def test_an_imports_reason_column_gives_each_number_its_own_reason(
    editing: OptOutEditing, tmp_path: Path
) -> None:
    source = tmp_path / "complaints.csv"
    source.write_text(
        "Mobile,Reason\n"
        "0412 345 678,Complained by phone 3 March\n"
        "+61 412 000 111,\n"
        "0412 345 678,a later row of the same number\n"
    )

    editing.import_file(source)

    reasons = {o.number: o.reason for o in editing.listing().rows}
    assert reasons == {
        CUSTOMER: "Complained by phone 3 March",
        "61412000111": "imported from complaints.csv",
    }


def test_an_imported_reason_is_kept_as_one_line_of_plain_text_however_it_was_written(
    editing: OptOutEditing, tmp_path: Path
) -> None:
    hostile = "<b>x</b>\x1b[31m red\u202e\n second line\t" + "y" * 2000
    source = tmp_path / "hostile.csv"
    source.write_text(f'number,note\n0412 345 678,"{hostile}"\n', encoding="utf-8")

    editing.import_file(source)

    (row,) = editing.listing().rows
    assert row.reason.startswith("<b>x</b>\x1b[31m red\u202e second line y")
    assert "\n" not in row.reason
    assert len(row.reason) == 500


def test_the_listing_counts_both_states_and_an_empty_list_is_told_apart_from_no_match(
    editing: OptOutEditing, store: LocalStore
) -> None:
    assert editing.listing().empty
    store.optouts.set(CUSTOMER, True, reason="x")
    store.optouts.set("61412000111", True, reason="y")
    store.optouts.set("61412000111", False, reason="z")

    listing = editing.listing()
    assert listing.counts == "1 opted out · 1 opted back in"
    assert [o.number for o in listing.rows] == [CUSTOMER]
    assert len(editing.listing(include_opted_in=True).rows) == 2
    nothing = editing.listing("no such text")
    assert not nothing.rows
    assert not nothing.empty


def test_rules_as_typed_are_checked_in_the_profiles_region_and_saved_only_when_they_pass(
    editing: OptOutEditing,
) -> None:
    typed = TypedRules("STOP, HALT", "START", True, "Reply HALT to opt out", "0412 345 678")
    with pytest.raises(RulesError) as refused:
        editing.check_rules(TypedRules("HALT", "START", True, "Reply HALT", ""))
    assert refused.value.field == "opt_out"

    rules = editing.check_rules(typed)
    editing.save_rules(rules)

    kept = editing.read_rules()
    assert (kept.opt_out, kept.own_number, kept.marketing_default) == (
        ("STOP", "HALT"),
        CUSTOMER,
        True,
    )
    assert saved_rules_text(kept) == (
        "Saved: replies from now on are read by these keywords.",
        False,
    )


def test_rules_changed_elsewhere_replace_the_shown_ones_only_when_nobody_edits_or_saves() -> None:
    assert follow_rules(editing=False, saving=False) is RulesFollow.SHOW
    assert follow_rules(editing=True, saving=False) is RulesFollow.WARN
    assert follow_rules(editing=True, saving=True) is RulesFollow.LEAVE
    assert follow_rules(editing=False, saving=True) is RulesFollow.LEAVE
