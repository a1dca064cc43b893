"""Account/Info read as a typed model, and the words both account resources are shown in."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from gwdesk.domain.funds import Funds
from gwdesk.domain.models import AccountInfo, Balance


def info(**fields: object) -> AccountInfo:
    body = {"AccountName": "Acme", "AccountStatus": "Active", "AccountType": "Prepaid"}
    return AccountInfo.model_validate({**body, **fields})


def balance(**fields: object) -> Balance:
    return Balance.model_validate({"Balance": 12.34, "Currency": "AUD", **fields})


# ---- the model ---------------------------------------------------------------------------


def test_account_info_reads_the_documented_fields() -> None:
    read = info(MessageCredits=1234)
    assert (read.account_name, read.account_status, read.account_type) == (
        "Acme",
        "Active",
        "Prepaid",
    )
    assert read.message_credits == 1234


def test_account_info_keeps_fields_it_does_not_know() -> None:
    read = info(CreditLimit=500)
    assert read.model_dump(by_alias=True)["CreditLimit"] == 500


def test_an_answer_without_an_account_type_is_not_account_info() -> None:
    with pytest.raises(ValidationError):
        AccountInfo.model_validate({"message": "Authorization has been denied for this request."})


def test_credits_that_are_not_a_whole_number_are_refused() -> None:
    with pytest.raises(ValidationError):
        info(MessageCredits=12.5)


# ---- the words -----------------------------------------------------------------------------


def test_prepaid_credits_name_their_source() -> None:
    assert Funds(info(MessageCredits=1234)).summary() == "Credits 1,234 (Account/Info, prepaid)"


def test_a_postpaid_account_says_it_has_no_credits_to_show() -> None:
    funds = Funds(info(AccountType="Postpaid"))
    assert funds.summary() == "Postpaid: no credits to show (Account/Info)"
    assert funds.details() == (
        "From the account resource (GET /v2/Account/Info): account Acme, status Active, "
        "type Postpaid, no message credits (the gateway gives them for prepaid accounts only)."
    )


def test_an_account_type_spelt_otherwise_is_still_known() -> None:
    assert Funds(info(AccountType="Pre-Paid", MessageCredits=5)).kind == "prepaid"
    assert Funds(info(AccountType="POST PAID")).kind == "postpaid"


def test_an_unknown_account_type_is_shown_in_the_gateways_words() -> None:
    assert Funds(info(AccountType="Enterprise")).summary() == (
        "No credits to show (Account/Info, Enterprise)"
    )


def test_the_balance_endpoint_shows_money_and_credits_with_its_source() -> None:
    assert Funds(balance()).summary() == "Balance 12.34 AUD (account balance)"
    assert Funds(balance(Balance=1000, MessageCredits=9998)).summary() == (
        "Balance 1,000.00 AUD, 9,998 credits (account balance)"
    )


def test_details_say_which_request_the_figure_came_from() -> None:
    assert Funds(info(MessageCredits=3)).details() == (
        "From the account resource (GET /v2/Account/Info): account Acme, status Active, "
        "type Prepaid, 3 message credits."
    )
    fallback = Funds(balance(), note="This gateway has no GET /v2/Account/Info (HTTP 404).")
    assert fallback.details() == (
        "From the balance endpoint (POST /v2/account/balance): 12.34 AUD. "
        "This gateway has no GET /v2/Account/Info (HTTP 404)."
    )


def test_hidden_characters_from_the_gateway_are_shown_by_code_point() -> None:
    funds = Funds(info(AccountType="Pre\u202epaid", AccountName="Ac\u200bme\nLtd"))
    assert funds.summary() == "No credits to show (Account/Info, Pre⟨U+202E⟩paid)"
    assert "account Ac⟨U+200B⟩me Ltd," in funds.details()
    assert "\u202e" not in funds.details()


def test_long_gateway_text_is_shortened() -> None:
    summary = Funds(info(AccountType="Gold " * 40)).summary()
    assert len(summary) < 90
    assert summary.endswith("…)")


def test_json_names_the_source_and_keeps_the_gateways_field_names() -> None:
    assert Funds(info(MessageCredits=7)).to_json() == {
        "source": "account_info",
        "summary": "Credits 7 (Account/Info, prepaid)",
        "AccountName": "Acme",
        "AccountStatus": "Active",
        "AccountType": "Prepaid",
        "MessageCredits": 7,
    }
    fallback = Funds(balance(), note="why").to_json()
    assert (fallback["source"], fallback["note"], fallback["Currency"]) == ("balance", "why", "AUD")
    assert Decimal(fallback["Balance"]) == Decimal("12.34")
