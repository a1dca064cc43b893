"""A personal send's plan: every text made and checked before anything is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from gwdesk.app.personal import (
    Cost,
    PersonalPlan,
    Recipients,
    cost_of,
    plan_personal,
    table_recipients,
    totals_lines,
)
from gwdesk.app.sms import Channel, Compliance, SmsForm
from gwdesk.domain.funds import Funds
from gwdesk.domain.models.wire import AccountInfo
from gwdesk.domain.segments import Encoding
from gwdesk.domain.templates import parse_template
from gwdesk.gateway.errors import ValidationError
from gwdesk.importing.recipients import load_table

TEMPLATE = "Hi {first name}, your check-up at {clinic} is due on {due|3 March}."


def recipients_of(tmp_path: Path, text: str, template: str = TEMPLATE) -> Recipients:
    sheet = tmp_path / "people.csv"
    sheet.write_text(text, encoding="utf-8")
    table = load_table(sheet, "AU")
    return table_recipients(table, table.column, "AU", parse_template(template), source="the file")


def plan_of(tmp_path: Path, text: str, template: str = TEMPLATE, **form: object) -> PersonalPlan:
    found = recipients_of(tmp_path, text, template)
    return plan_personal(SmsForm(**form), parse_template(template), found, "AU")  # type: ignore[arg-type]


SHEET = (
    "First name,Mobile,Clinic\n"
    "Ann,0412 000 001,Glebe\n"
    "Zoë,0412 000 002,Glebe\n"
    "Ben,0412 000 003,\n"
    "Ann,0412 000 004,Glebe\n"
    "Nguyễn,0412 000 005,Bondi\n"
)


def test_each_recipient_gets_their_own_text(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, SHEET)
    assert [(m.recipient.row, m.text) for m in plan.messages] == [
        (2, "Hi Ann, your check-up at Glebe is due on 3 March."),
        (3, "Hi Zoë, your check-up at Glebe is due on 3 March."),
        (5, "Hi Ann, your check-up at Glebe is due on 3 March."),
        (6, "Hi Nguyễn, your check-up at Bondi is due on 3 March."),
    ]


def test_a_missing_value_without_fallback_makes_that_recipient_invalid_with_why(
    tmp_path: Path,
) -> None:
    plan = plan_of(tmp_path, SHEET)
    [row] = plan.invalid
    assert (row.row, row.text, row.reason) == (4, "61412000003", "no value for {clinic}")


def test_identical_texts_share_a_request_and_the_others_go_alone(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, SHEET)
    requests = plan.requests()
    assert [(m.text[:6], numbers) for m, numbers in requests] == [
        ("Hi Ann", ("61412000001", "61412000004")),
        ("Hi Zoë", ("61412000002",)),
        ("Hi Ngu", ("61412000005",)),
    ]
    assert (plan.request_count, plan.shared_requests) == (3, 1)


def test_more_than_100_recipients_of_one_text_are_cut_into_requests_of_100(
    tmp_path: Path,
) -> None:
    rows = "".join(f"Ann,0412 1{i:05d},Glebe\n" for i in range(250))
    plan = plan_of(tmp_path, "First name,Mobile,Clinic\n" + rows)
    assert [len(numbers) for _, numbers in plan.requests()] == [100, 100, 50]


def test_the_recipients_whose_values_make_it_ucs2_are_named_with_the_characters(
    tmp_path: Path,
) -> None:
    plan = plan_of(tmp_path, SHEET)
    turned = plan.turned_ucs2()
    assert [m.recipient.row for m in turned] == [3, 6]
    assert [(w.name, w.value, w.non_gsm) for w in plan.why_ucs2(turned[1])] == [
        ("first name", "Nguyễn", ("ễ",))
    ]
    assert turned[0].encoding is Encoding.UCS2


def test_a_template_already_ucs2_names_no_recipient(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, SHEET, template="Привет {first name} at {clinic}")
    assert plan.template_encoding is Encoding.UCS2
    assert plan.turned_ucs2() == ()


def test_the_parts_are_a_range_and_a_total_and_longer_ones_are_named(tmp_path: Path) -> None:
    long_name = "Bartholomew-" * 12
    sheet = SHEET + f"{long_name},0412 000 006,Glebe\n"
    plan = plan_of(tmp_path, sheet)
    assert plan.parts == (1, 2, 6)
    assert plan.usual_parts == 1
    assert [m.recipient.row for m in plan.longer()] == [7]


def test_a_value_holding_a_control_character_makes_its_recipient_invalid(
    tmp_path: Path,
) -> None:
    plan = plan_of(tmp_path, 'First name,Mobile,Clinic\n"Ann\x1b[2J",0412 000 001,Glebe\n')
    assert plan.messages == ()
    assert plan.invalid[0].reason == "its {first name} holds U+001B, a control character"


def test_a_text_over_ten_parts_makes_its_recipient_invalid_with_the_count(
    tmp_path: Path,
) -> None:
    sheet = f"First name,Mobile,Clinic\nAnn,0412 000 001,{'x' * 1600}\nBen,0412 000 002,Bondi\n"
    plan = plan_of(tmp_path, sheet)
    assert len(plan.messages) == 1
    assert "needs 11 SMS parts" in plan.invalid[0].reason


def test_a_placeholder_no_column_names_is_refused_before_any_text_is_made(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValidationError) as refused:
        plan_of(tmp_path, SHEET, template="Hi {frist name}, see you at {clinic}")
    assert refused.value.field == "Message"
    assert "{frist name}" in refused.value.message


def test_a_marketing_message_carries_the_instruction_in_every_text(tmp_path: Path) -> None:
    found = recipients_of(tmp_path, SHEET)
    plan = plan_personal(
        SmsForm(marketing=True),
        parse_template(TEMPLATE),
        found,
        "AU",
        compliance=Compliance(instruction="Reply STOP to opt out"),
    )
    assert all(m.text.endswith("\nReply STOP to opt out") for m in plan.messages)


def test_a_personal_message_over_lodge_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="REST only"):
        plan_of(tmp_path, SHEET, channel=Channel.LODGE_SMS)


def test_the_totals_say_all_of_it_in_lines(tmp_path: Path) -> None:
    lines = totals_lines(plan_of(tmp_path, SHEET))
    assert lines[0] == (
        "4 message(s), 1 part(s) each, 4 part(s) in all, in 3 request(s) "
        "(1 shared by identical texts)"
    )
    assert "  row 3, 61412000002: {first name} 'Zoë' has ë" in lines
    assert "  row 4, '61412000003': no value for {clinic}" in lines


def funds(credits: int | None, kind: str = "Prepaid") -> Funds:
    return Funds(
        AccountInfo.model_validate(
            {"AccountName": "demo", "AccountStatus": "Active", "AccountType": kind,
             "MessageCredits": credits}
        )
    )  # fmt: skip


def test_the_cost_says_whether_the_credits_cover_the_send() -> None:
    assert cost_of(247, funds(1000)).covered is True
    short = cost_of(247, funds(100))
    assert short.covered is False
    assert short.summary() == (
        "247 part(s), 247 credit(s) of the 100 the account has: 147 more than the balance"
    )


def test_a_postpaid_account_has_no_credits_to_weigh() -> None:
    cost = cost_of(10, funds(None, "Postpaid"))
    assert cost.covered is None
    assert isinstance(cost, Cost)
    assert "no credits to count" in cost.summary()
