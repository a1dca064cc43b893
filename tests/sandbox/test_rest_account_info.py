"""`GET /v2/Account/Info`, as the real service documents it: a bare object; credits when prepaid."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.db import open_database
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    JSON_UTF8,
    assert_failure,
    assert_success,
    bearer_token,
    rest_client,
    send,
    simple_send,
    wait_until,
)

INFO = "/v2/Account/Info"
BALANCE = "/v2/account/balance"
ACCOUNT = "/sandbox/account"


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


def info(client: httpx.Client) -> dict[str, Any]:
    response = client.get(INFO)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == JSON_UTF8
    body: dict[str, Any] = response.json()
    return body


def credits(client: httpx.Client) -> int:
    value: int = info(client)["MessageCredits"]
    return value


def set_account(sandbox: SandboxThread, **fields: Any) -> httpx.Response:
    return httpx.put(f"{sandbox.rest_url}{ACCOUNT}", json=fields)


# ---- the answer ----------------------------------------------------------------------------


def test_a_prepaid_account_is_a_bare_object_with_its_credits(api: httpx.Client) -> None:
    assert info(api) == {
        "AccountName": "demo",
        "AccountStatus": "Active",
        "AccountType": "Prepaid",
        "MessageCredits": 10_000,
    }


def test_a_postpaid_account_has_no_message_credits(sandbox_factory: SandboxFactory) -> None:
    with rest_client(sandbox_factory(account_type="postpaid")) as client:
        body = info(client)
        assert body == {"AccountName": "demo", "AccountStatus": "Active", "AccountType": "Postpaid"}
        assert_success(simple_send(client))
        assert "MessageCredits" not in info(client)


def test_a_bearer_token_is_accepted_as_on_every_endpoint(sandbox: SandboxThread) -> None:
    with rest_client(sandbox, auth=None) as client:
        token = bearer_token(client)
        response = client.get(INFO, headers={"Authorization": f"Bearer {token}"})
    assert response.json()["AccountName"] == "demo"


def test_without_credentials_it_is_a_401(sandbox: SandboxThread) -> None:
    with rest_client(sandbox, auth=None) as client:
        response = client.get(INFO)
    assert_failure(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_wrong_credentials_are_a_401(sandbox: SandboxThread) -> None:
    with rest_client(sandbox, auth=("demo", "wrong")) as client:
        assert_failure(client.get(INFO), 401)


def test_post_is_not_allowed(api: httpx.Client) -> None:
    response = api.post(INFO)
    assert_failure(response, 405)
    assert "GET" in response.headers["allow"]


def test_a_query_parameter_is_refused(api: httpx.Client) -> None:
    assert_failure(api.get(INFO, params={"account": "other"}), 400, "account")


# ---- credits are spent by sends --------------------------------------------------------------


def test_a_send_spends_one_credit_a_part(api: httpx.Client) -> None:
    before = credits(api)
    assert_success(simple_send(api))
    assert credits(api) == before - 1
    assert_success(simple_send(api, Message="x" * 400))  # three parts
    assert credits(api) == before - 4


def test_a_batch_spends_credits_as_its_messages_are_created(api: httpx.Client) -> None:
    before = credits(api)
    assert_success(send(api, Recipients=["61411111111", "61422222222", "61433333333"]))
    wait_until(lambda: True if credits(api) == before - 3 else None)


def test_an_mms_through_lodge_spends_five_credits(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    before = credits(api)
    form = {
        "Username": "demo", "Pwd": "demo", "PhoneNumber": "61412345678", "MMSSubject": "Hi",
        "MMSMessageText": "A picture", "FileName": "a.gif",
        "MMSContentBase64": "R0lGODlhAQABAAAAACw=",
    }  # fmt: skip
    response = httpx.post(f"{sandbox.lodge_url}/LodgeMMSMessage", data=form)
    assert "Message sent successfully." in response.text
    assert credits(api) == before - 5


def test_the_balance_endpoint_reports_the_same_credits(api: httpx.Client) -> None:
    assert_success(simple_send(api))
    data = assert_success(api.post(BALANCE))
    assert data["MessageCredits"] == credits(api) == 9_999


def test_a_postpaid_accounts_balance_has_null_credits(sandbox_factory: SandboxFactory) -> None:
    with rest_client(sandbox_factory(account_type="postpaid")) as client:
        assert assert_success(client.post(BALANCE))["MessageCredits"] is None


# ---- made absent by a fault, for clients' fallbacks ----------------------------------------------


def test_a_404_fault_makes_the_endpoint_absent_while_the_balance_stays(
    sandbox_factory: SandboxFactory,
) -> None:
    with rest_client(sandbox_factory(faults="account_info:404=1")) as client:
        response = client.get(INFO)
        message = assert_failure(response, 404)
        assert response.headers["x-sandbox-fault"] == "404"
        assert message == "No such endpoint: /v2/Account/Info."
        assert_success(client.post(BALANCE))


def test_the_balance_endpoint_can_be_made_absent_too(sandbox_factory: SandboxFactory) -> None:
    with rest_client(sandbox_factory(faults="balance:404=1")) as client:
        assert_failure(client.post(BALANCE), 404)
        assert info(client)["AccountType"] == "Prepaid"


# ---- the control API: an account's type and credits -----------------------------------------


def test_the_control_api_shows_the_accounts_type_credits_and_balance(
    sandbox: SandboxThread,
) -> None:
    response = httpx.get(f"{sandbox.rest_url}{ACCOUNT}")
    assert response.json() == {
        "account": "demo",
        "name": "demo",
        "type": "prepaid",
        "type_name": "Prepaid",
        "credits": 10_000,
        "balance": 1000.0,
        "currency": "AUD",
    }


def test_an_account_can_be_made_postpaid_and_prepaid_again(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    assert set_account(sandbox, type="postpaid").json()["credits"] is None
    assert info(api)["AccountType"] == "Postpaid"
    assert "MessageCredits" not in info(api)
    answer = set_account(sandbox, type="Prepaid", credits=25)
    assert (answer.json()["type"], answer.json()["credits"]) == ("prepaid", 25)
    assert info(api)["MessageCredits"] == 25


def test_turning_prepaid_without_credits_gives_the_starting_credits(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    set_account(sandbox, type="postpaid")
    assert set_account(sandbox, type="prepaid").json()["credits"] == 10_000


def test_credits_can_be_set_on_their_own(sandbox: SandboxThread, api: httpx.Client) -> None:
    assert set_account(sandbox, credits=0).status_code == 200
    assert credits(api) == 0


def test_another_account_can_be_changed_by_name(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(extra_accounts=[("other", "pw")])
    set_account(sandbox, account="other", type="postpaid")
    with rest_client(sandbox, auth=("other", "pw")) as other:
        assert info(other)["AccountType"] == "Postpaid"
    with rest_client(sandbox) as demo:
        assert info(demo)["AccountType"] == "Prepaid"


def test_the_words_of_the_account_resources_can_be_set(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    answer = set_account(sandbox, name="Acme <b>", type_name="Gold\u202e", currency="\x1b[2J")
    assert answer.status_code == 200, answer.text
    assert (info(api)["AccountName"], info(api)["AccountType"]) == ("Acme <b>", "Gold\u202e")
    assert info(api)["MessageCredits"] == 10_000  # still prepaid: the type's rules hold
    assert assert_success(api.post(BALANCE))["Currency"] == "\x1b[2J"


def test_null_puts_the_default_words_back(sandbox: SandboxThread, api: httpx.Client) -> None:
    set_account(sandbox, name="Acme", type_name="Gold", currency="NZD")
    answer = set_account(sandbox, name=None, type_name=None, currency=None).json()
    assert (answer["name"], answer["type_name"], answer["currency"]) == ("demo", "Prepaid", "AUD")
    assert (info(api)["AccountName"], info(api)["AccountType"]) == ("demo", "Prepaid")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "Give type, credits, name, type_name or currency"),
        ({"name": "x" * 1001}, "name must be at most 1000 characters"),
        ({"currency": 5}, "currency must be a string"),
        ({"type": "gold"}, "type must be prepaid or postpaid"),
        ({"credits": -1}, "credits must be from 0 to"),
        ({"credits": 1.5}, "credits must be a whole number"),
        ({"credits": True}, "credits must be a whole number"),
        ({"type": "postpaid", "credits": 5}, "A postpaid account has no credits"),
        ({"balance": 5}, "Unknown field 'balance'"),
    ],
)
def test_bad_account_settings_are_refused(
    sandbox: SandboxThread, body: dict[str, Any], words: str
) -> None:
    response = set_account(sandbox, **body)
    assert response.status_code == 400, response.text
    assert words in response.json()["error"]


def test_an_unknown_account_is_404(sandbox: SandboxThread) -> None:
    response = set_account(sandbox, account="nobody", type="postpaid")
    assert response.status_code == 404
    assert "nobody" in response.json()["error"]


# ---- stored accounts ---------------------------------------------------------------------


def test_a_database_from_before_account_types_opens_with_prepaid_accounts(
    tmp_path: Path, sandbox_factory: SandboxFactory
) -> None:
    path = tmp_path / "old.sqlite3"
    conn = open_database(path)
    conn.executescript(
        "ALTER TABLE accounts DROP COLUMN account_type; "
        "ALTER TABLE accounts DROP COLUMN message_credits; "
        "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
    )
    conn.close()
    with rest_client(sandbox_factory(db=str(path))) as client:
        assert info(client)["MessageCredits"] == 10_000
    reopened = open_database(path)
    try:
        [(version,)] = reopened.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ).fetchall()
    finally:
        reopened.close()
    assert version == "3"


def test_a_database_from_before_account_words_answers_with_the_username_and_type(
    tmp_path: Path, sandbox_factory: SandboxFactory
) -> None:
    path = tmp_path / "old.sqlite3"
    conn = open_database(path)
    conn.executescript(
        "ALTER TABLE accounts DROP COLUMN account_name; "
        "ALTER TABLE accounts DROP COLUMN type_name; "
        "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
    )
    conn.close()
    with rest_client(sandbox_factory(db=str(path))) as client:
        assert (info(client)["AccountName"], info(client)["AccountType"]) == ("demo", "Prepaid")


def test_the_type_stays_as_stored_across_restarts(
    tmp_path: Path, sandbox_factory: SandboxFactory
) -> None:
    path = str(tmp_path / "kept.sqlite3")
    first = sandbox_factory(db=path, account_type="postpaid")
    first.stop()
    with rest_client(sandbox_factory(db=path)) as client:
        assert info(client)["AccountType"] == "Postpaid"
