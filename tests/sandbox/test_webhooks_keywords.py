"""Keyword forwarding (Option 2): a reply's first word picks an address that gets JSON."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.webhook_receiver import (
    CUSTOMER,
    Answer,
    Receiver,
    control,
    lodge,
    make_reply,
    wait_for_attempts,
    wait_until_delivered,
)

KEYWORD_FIELDS = {
    "ReplyId", "From", "To", "Message", "Keyword", "SentAt", "ReceivedAt", "OriginalMessageId",
}  # fmt: skip


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def add_keyword(sandbox: SandboxThread, keyword: str, url: str, **extra: str) -> None:
    with control(sandbox) as client:
        response = client.post("/sandbox/keywords", json={"keyword": keyword, "url": url, **extra})
    assert response.status_code == 201, response.text


def test_an_unsolicited_keyword_message_is_forwarded_as_json(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(timezone="Australia/Sydney")
    add_keyword(sandbox, "join", f"{receiver.url}/keywords/join")
    reply = make_reply(
        sandbox,
        **{"from": CUSTOMER, "to": "1999"},
        text="JOIN the club 🎉",
        sent_at="2024-07-01T02:03:04Z",
    )
    assert reply["Keyword"] == "JOIN"
    assert reply["KeywordUrl"] == f"{receiver.url}/keywords/join"
    [request] = receiver.wait_for(1)
    assert request.method == "POST"
    assert request.path == "/keywords/join"
    assert request.headers["Content-Type"] == "application/json"
    body = json.loads(request.body.decode("utf-8"))
    assert set(body) == KEYWORD_FIELDS
    assert body["ReplyId"] == reply["ReplyId"]
    assert (body["From"], body["To"]) == (CUSTOMER, "1999")
    assert body["Message"] == "JOIN the club 🎉"
    assert body["Keyword"] == "JOIN"
    assert body["OriginalMessageId"] is None
    assert body["SentAt"] == "2024-07-01T12:03:04+10:00"
    received = datetime.fromisoformat(body["ReceivedAt"])
    assert received.utcoffset() is not None
    assert abs(received.timestamp() - time.time()) < 60


@pytest.mark.parametrize("text", ["stop", "Stop!", "STOP. please", "  sToP\nnow"])
def test_keywords_match_the_first_word_ignoring_case_and_trailing_punctuation(
    sandbox: SandboxThread, receiver: Receiver, text: str
) -> None:
    add_keyword(sandbox, "STOP", f"{receiver.url}/stop")
    reply = make_reply(sandbox, **{"from": CUSTOMER, "to": "61400000000"}, text=text)
    [request] = receiver.wait_for(1)
    assert json.loads(request.body)["Message"] == text
    assert reply["Keyword"] == "STOP"


@pytest.mark.parametrize("text", ["please stop", "stopping by later", "#stop"])
def test_a_keyword_that_is_not_the_whole_first_word_is_not_forwarded(
    sandbox: SandboxThread, receiver: Receiver, text: str
) -> None:
    add_keyword(sandbox, "stop", f"{receiver.url}/stop")
    reply = make_reply(sandbox, **{"from": CUSTOMER, "to": "61400000000"}, text=text)
    assert reply["Keyword"] is None
    make_reply(sandbox, **{"from": CUSTOMER, "to": "61400000000"}, text="stop")
    [request] = receiver.wait_for(1)  # only the second one arrives
    assert json.loads(request.body)["Message"] == "stop"
    assert wait_until_delivered(sandbox, reply["ReplyId"]) == []
    assert len(receiver.requests) == 1


def test_a_reply_can_cause_both_a_webhook_and_a_keyword_forward(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    add_keyword(sandbox, "yes", f"{receiver.url}/kw")
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/hook?m=#MSG#")
    reply = make_reply(sandbox, message_id=message_id, text="Yes, see you")
    requests = receiver.wait_for(2)
    by_path = {r.path: r for r in requests}
    assert by_path["/hook"].params == {"m": ["Yes, see you"]}
    forwarded = json.loads(by_path["/kw"].body)
    assert forwarded["OriginalMessageId"] == message_id
    assert forwarded["Keyword"] == "YES"
    found = wait_for_attempts(sandbox, reply["ReplyId"], 2)
    assert sorted(a["Kind"] for a in found) == ["keyword", "reply"]


def test_a_keyword_forward_is_retried_until_ok(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(webhook_retry_base=0.01)
    receiver.script(Answer(502, "bad gateway"), Answer(200, "OK"))
    add_keyword(sandbox, "info", f"{receiver.url}/info")
    reply = make_reply(sandbox, **{"from": CUSTOMER, "to": "61400000000"}, text="info")
    first, second = wait_for_attempts(sandbox, reply["ReplyId"], 2)
    assert (first["Kind"], first["HttpStatus"], first["Ok"]) == ("keyword", 502, False)
    assert (second["Kind"], second["HttpStatus"], second["Ok"]) == ("keyword", 200, True)
    assert json.loads(first["Body"]) == json.loads(second["Body"])


def test_keywords_belong_to_one_account(
    sandbox_factory: SandboxFactory, receiver: Receiver
) -> None:
    sandbox = sandbox_factory(extra_accounts=[("other", "secret")])
    add_keyword(sandbox, "deal", f"{receiver.url}/other", account="other")
    mine = make_reply(sandbox, **{"from": CUSTOMER, "to": "61400000000"}, text="deal")
    theirs = make_reply(
        sandbox, **{"from": CUSTOMER, "to": "61400000000"}, text="deal", account="other"
    )
    assert mine["Keyword"] is None
    assert theirs["Keyword"] == "DEAL"
    [request] = receiver.wait_for(1)
    assert json.loads(request.body)["ReplyId"] == theirs["ReplyId"]
