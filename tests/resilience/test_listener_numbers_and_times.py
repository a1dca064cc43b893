"""Absurd numbers and times through the real listener: a 4xx that names the field, or a
reply kept as received now; never a 500, and never a traceback in the log."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from tests.contract.listener_support import CUSTOMER, OURS, Running, running_listener

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def listening(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Running]:
    caplog.set_level(logging.INFO, logger="gwdesk")
    with running_listener(tmp_path / "profile.sqlite3") as running:
        yield running
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert failures == []
    assert "Traceback" not in caplog.text


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def keyword(**fields: object) -> str:
    """A keyword forward's body: the contract's fields, `fields` replacing them as raw JSON."""
    values: dict[str, object] = {
        "ReplyId": '"R-1"',
        "From": f'"{CUSTOMER}"',
        "To": f'"{OURS}"',
        "Message": '"STOP now"',
        "Keyword": '"STOP"',
        "ReceivedAt": '"2024-01-05T14:04:07+11:00"',
        "OriginalMessageId": '"M-9"',
    }
    values.update(fields)
    return "{" + ", ".join(f'"{name}": {raw}' for name, raw in values.items()) + "}"


def forward(http: httpx.Client, listening: Running, body: str) -> httpx.Response:
    return http.post(listening.template.base_url, content=body.encode(), headers=JSON)


# ---- numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "complaint"),
    [
        ({"From": "6" * 5000}, "From is 5000 characters long; at most 32"),
        ({"From": f'"{"6" * 5000}"'}, "From is 5000 characters long; at most 32"),
        ({"To": "6" * 33}, "To is 33 characters long; at most 32"),
        ({"ReplyId": "9" * 5000}, "ReplyId is 5000 characters long; at most 200"),
        ({"Message": "7" * 5000}, "Message must be a string"),
        ({"ReceivedAt": "2" * 5000}, "ReceivedAt must be an ISO 8601 time string"),
    ],
)
def test_an_absurd_number_in_a_keyword_forward_is_refused_naming_its_field(
    listening: Running, http: httpx.Client, fields: dict[str, str], complaint: str
) -> None:
    response = forward(http, listening, keyword(**fields))
    assert response.status_code == 400
    assert complaint in response.text
    assert listening.store.count() == 0


def test_an_absurd_sender_in_a_webhook_is_refused_naming_its_parameter(
    listening: Running, http: httpx.Client
) -> None:
    response = http.get(listening.url(FROM="6" * 5000))
    assert response.status_code == 400
    assert "(#FROM#) is 5000 characters long; at most 32" in response.text


# ---- times no UTC clock can show -----------------------------------------------------------


@pytest.mark.parametrize(
    ("received", "complaint"),
    [
        ('"0001-01-01T00:00:00"', "ReceivedAt is out of range"),  # Sydney's year 1: year 0 in UTC
        ('"9999-12-31T23:59:59-05:00"', "ReceivedAt is out of range"),
        ('"yesterday"', "ReceivedAt is not an ISO 8601 time"),
        ('"2024-02-30T10:00:00Z"', "ReceivedAt is not an ISO 8601 time"),
    ],
)
def test_a_keyword_time_that_names_no_instant_is_refused_naming_its_field(
    listening: Running, http: httpx.Client, received: str, complaint: str
) -> None:
    response = forward(http, listening, keyword(ReceivedAt=received))
    assert response.status_code == 400
    assert complaint in response.text


@pytest.mark.parametrize("received", ["01-Jan-0001 00:00:00", "32-Jan-2024 10:00:00", "soon"])
def test_a_webhook_time_that_names_no_instant_is_refused_naming_its_parameter(
    listening: Running, http: httpx.Client, received: str
) -> None:
    response = http.get(listening.url(RCVDDTS=received))
    assert response.status_code == 400
    assert "(#RCVDDTS#)" in response.text


# ---- times no gateway can mean: kept, as received now ----------------------------------------


def test_a_keyword_forward_dated_9999_is_kept_as_received_now_and_stored_once(
    listening: Running, http: httpx.Client
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    body = keyword(ReceivedAt='"9999-12-31T23:59:59Z"', SentAt='"9999-12-31T23:59:58Z"')
    answers = [forward(http, listening, body) for _ in range(2)]  # the gateway's retry too
    assert [(a.status_code, a.text) for a in answers] == [(200, "OK")] * 2
    [stored] = listening.store.latest()
    assert before <= stored.received_at <= datetime.now(UTC)
    assert stored.received_claimed == "9999-12-31T23:59:59+00:00"
    assert (stored.sent_at, stored.reply_id, stored.text) == (None, "R-1", "STOP now")


def test_a_keyword_forward_dated_year_1_in_utc_is_kept_as_received_now(
    listening: Running, http: httpx.Client
) -> None:
    response = forward(http, listening, keyword(ReceivedAt='"0001-01-01T00:00:00Z"'))
    assert (response.status_code, response.text) == (200, "OK")
    [stored] = listening.store.latest()
    assert stored.received_claimed == "0001-01-01T00:00:00+00:00"
    assert stored.received_at.year == datetime.now(UTC).year


def test_a_webhook_dated_31_dec_9999_is_kept_as_received_now_and_stored_once(
    listening: Running, http: httpx.Client
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    url = listening.url(RCVDDTS="31-Dec-9999 23:59:59", MSG="From the far future")
    answers = [http.get(url) for _ in range(2)]
    assert [(a.status_code, a.text) for a in answers] == [(200, "OK")] * 2
    [stored] = listening.store.latest()
    assert before <= stored.received_at <= datetime.now(UTC)
    assert stored.received_claimed == "9999-12-31T12:59:59+00:00"  # Sydney's, in UTC
    assert json.loads(json.dumps(stored.as_json()))["received_claimed"] == stored.received_claimed
