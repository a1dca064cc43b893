"""`GET /v2/Replies/GetByDate`: the backfill a client uses to recover replies it missed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.engine import datetime_to_us
from gwdesk.sandbox.server import SandboxThread
from gwdesk.sandbox.state import SandboxState
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    JSON_UTF8,
    NUMBER,
    assert_failure,
    assert_success,
    parse_iso,
    rest_client,
    simple_send,
)

REPLIES = "/v2/Replies/GetByDate"
PAGE_KEYS = {"Items", "PageNumber", "PageSize", "TotalRecords", "TotalPages"}


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


def sent_id(client: httpx.Client) -> str:
    message_id: str = assert_success(simple_send(client))["Message"]["MessageId"]
    return message_id


def reply(sandbox: SandboxThread, message_id: str, text: str, received: str | None = None) -> None:
    """A customer's reply through the engine, optionally backdated to `received` (ISO)."""

    def create(state: SandboxState) -> None:
        row = state.engine.create_reply(text=text, message=state.engine.message(message_id))
        if received is not None:
            at = datetime_to_us(datetime.fromisoformat(received))
            state.conn.execute(
                "UPDATE replies SET received_us = ?, sent_us = ? WHERE id = ?",
                (at, at - 2_000_000, row["id"]),
            )

    sandbox.call(create)


def page(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get(REPLIES, params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == JSON_UTF8
    body: dict[str, Any] = response.json()
    assert set(body) == PAGE_KEYS
    return body


def texts(body: dict[str, Any]) -> list[str]:
    return [item["MessageText"] for item in body["Items"]]


def test_a_reply_is_listed_with_its_message_and_numbers(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    message_id = sent_id(api)
    before = datetime.now(UTC).replace(microsecond=0)
    reply(sandbox, message_id, "YES please")
    body = page(api)
    assert body == {
        "Items": [
            {
                "MessageId": message_id,
                "From": NUMBER,
                "To": "61400000000",
                "MessageText": "YES please",
                "DateReceived": body["Items"][0]["DateReceived"],
            }
        ],
        "PageNumber": 1,
        "PageSize": 100,
        "TotalRecords": 1,
        "TotalPages": 1,
    }
    received = parse_iso(body["Items"][0]["DateReceived"])
    assert received.microsecond == 0
    assert before <= received <= datetime.now(UTC)


def test_no_replies_is_an_empty_page(api: httpx.Client) -> None:
    assert page(api) == {
        "Items": [],
        "PageNumber": 1,
        "PageSize": 100,
        "TotalRecords": 0,
        "TotalPages": 0,
    }


def test_replies_are_paged_oldest_first(sandbox: SandboxThread, api: httpx.Client) -> None:
    message_id = sent_id(api)
    for number in range(5):
        reply(sandbox, message_id, f"reply {number}")
    pages = [page(api, Page=n, PageSize=2) for n in (1, 2, 3, 4)]
    assert [texts(body) for body in pages] == [
        ["reply 0", "reply 1"],
        ["reply 2", "reply 3"],
        ["reply 4"],
        [],
    ]
    assert {(b["PageSize"], b["TotalRecords"], b["TotalPages"]) for b in pages} == {(2, 5, 3)}
    assert [b["PageNumber"] for b in pages] == [1, 2, 3, 4]


def test_another_accounts_replies_are_not_listed(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(extra_accounts=[("other", "pw")])
    with rest_client(sandbox) as demo, rest_client(sandbox, ("other", "pw")) as other:
        reply(sandbox, sent_id(demo), "for demo")
        assert page(other)["TotalRecords"] == 0
        assert page(demo)["TotalRecords"] == 1


# ---- date filters --------------------------------------------------------------------------


@pytest.fixture
def dated(sandbox: SandboxThread, api: httpx.Client) -> httpx.Client:
    """Replies on 10, 11 (late evening) and 12 March 2025 (just after midnight), Sydney."""
    message_id = sent_id(api)
    reply(sandbox, message_id, "tenth", "2025-03-10T09:00:00+11:00")
    reply(sandbox, message_id, "eleventh", "2025-03-11T23:30:00+11:00")
    reply(sandbox, message_id, "twelfth", "2025-03-12T00:30:00+11:00")
    return api


def test_without_dates_the_window_is_the_last_day(
    sandbox: SandboxThread, dated: httpx.Client
) -> None:
    reply(sandbox, sent_id(dated), "today")
    assert texts(page(dated)) == ["today"]


def test_a_date_means_that_day_in_the_account_zone(dated: httpx.Client) -> None:
    body = page(dated, startDate="2025-03-11", endDate="2025-03-11")
    assert texts(body) == ["eleventh"]


def test_a_date_range_includes_both_days(dated: httpx.Client) -> None:
    assert texts(page(dated, startDate="2025-03-10", endDate="2025-03-11")) == [
        "tenth",
        "eleventh",
    ]


def test_times_bound_a_half_open_window(dated: httpx.Client) -> None:
    body = page(dated, startDate="2025-03-11T23:30:00+11:00", endDate="2025-03-12T00:30:00+11:00")
    assert texts(body) == ["eleventh"]


def test_times_in_utc_select_the_same_instants(dated: httpx.Client) -> None:
    body = page(dated, startDate="2025-03-11T12:30:00Z", endDate="2025-03-11T13:30:01Z")
    assert texts(body) == ["eleventh", "twelfth"]


def test_a_time_without_offset_is_in_the_account_zone(dated: httpx.Client) -> None:
    body = page(dated, startDate="2025-03-12T00:00:00", endDate="2025-03-13T00:00:00")
    assert texts(body) == ["twelfth"]


def test_an_open_end_runs_until_now(sandbox: SandboxThread, dated: httpx.Client) -> None:
    reply(sandbox, sent_id(dated), "today")
    body = page(dated, startDate="2025-03-11")
    assert texts(body) == ["eleventh", "twelfth", "today"]


def test_date_received_is_shown_in_the_account_zone(dated: httpx.Client) -> None:
    [item] = page(dated, startDate="2025-03-10", endDate="2025-03-10")["Items"]
    assert item["DateReceived"] == "2025-03-10T09:00:00+11:00"


# ---- bad values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"startDate": "yesterday"}, "startDate"),
        ({"endDate": "2025-13-01"}, "endDate"),
        ({"startDate": "2025-03-11T09:00:00 11:00"}, "startDate"),
        ({"startDate": "0001-01-01T00:00:00+10:00"}, "startDate"),
        ({"endDate": "9999-12-31"}, "endDate"),
        ({"startDate": "2025-03-12", "endDate": "2025-03-10"}, "endDate"),
        ({"Page": "0"}, "Page"),
        ({"Page": "-1"}, "Page"),
        ({"Page": "one"}, "Page"),
        ({"Page": "9" * 5000}, "Page"),
        ({"PageSize": "0"}, "PageSize"),
        ({"PageSize": "1001"}, "PageSize"),
        ({"PageSize": "2.5"}, "PageSize"),
        ({"page": "1"}, "page"),
        ({"from": "2025-03-11"}, "from"),
    ],
    ids=[
        "start in words",
        "end not a date",
        "unencoded plus",
        "start out of range",
        "end out of range",
        "end before start",
        "page zero",
        "page negative",
        "page in words",
        "page of 5000 digits",
        "page size zero",
        "page size too big",
        "page size fraction",
        "lower-case page",
        "unknown parameter",
    ],
)
def test_a_bad_value_is_refused_naming_it(
    api: httpx.Client, params: dict[str, str], field: str
) -> None:
    assert_failure(api.get(REPLIES, params=params), 400, field)


def test_an_unencoded_plus_gets_a_hint(api: httpx.Client) -> None:
    response = api.get(f"{REPLIES}?startDate=2025-03-11T09:00:00+11:00")
    assert "%2B" in assert_failure(response, 400, "startDate")


def test_a_repeated_parameter_is_refused(api: httpx.Client) -> None:
    assert_failure(api.get(f"{REPLIES}?Page=1&Page=2"), 400, "Page")


def test_the_largest_page_size_is_a_thousand(api: httpx.Client) -> None:
    assert page(api, PageSize=1000)["PageSize"] == 1000


def test_replies_to_a_later_page_than_exists_are_empty(
    sandbox: SandboxThread, api: httpx.Client
) -> None:
    reply(sandbox, sent_id(api), "only")
    body = page(api, Page=2, PageSize=1)
    assert (body["Items"], body["TotalRecords"], body["TotalPages"]) == ([], 1, 1)


def test_a_reply_window_in_the_future_is_empty(api: httpx.Client) -> None:
    start = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    assert page(api, startDate=start)["Items"] == []
