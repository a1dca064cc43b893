"""Reply webhooks (Option 1): who gets one, how the ReplyPath template is filled and sent."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import unquote
from zoneinfo import ZoneInfo

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.webhook_receiver import (
    CUSTOMER,
    Answer,
    Receiver,
    attempts,
    control,
    lodge,
    make_reply,
    wait_for_attempts,
    wall,
)

SENDER = "61400000000"  # the demo account's default From
AWKWARD = "Fish & chips = $5 #2? 1+1 ok 😀 née\nbye"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def test_http_reply_type_is_a_get_with_url_encoded_placeholders(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    path = f"{receiver.url}/hook?from=#FROM#&to=#TO#&msg=#MSG#"
    message_id = lodge(sandbox, "HTTP", path)
    make_reply(sandbox, message_id=message_id, text=AWKWARD)
    [request] = receiver.wait_for(1)
    assert request.method == "GET"
    assert request.body == b""
    assert request.raw_query == (
        f"from={CUSTOMER}&to={SENDER}&msg=Fish%20%26%20chips%20%3D%20%245%20%232%3F%201%2B1%20ok"
        "%20%F0%9F%98%80%20n%C3%A9e%0Abye"
    )
    assert request.params == {"from": [CUSTOMER], "to": [SENDER], "msg": [AWKWARD]}


def test_httpget_substitutes_placeholders_in_the_path_too(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    message_id = lodge(sandbox, "HTTPGET", f"{receiver.url}/in/#TO#/from/#FROM#?m=#MSG#")
    make_reply(sandbox, message_id=message_id, text="a/b c")
    [request] = receiver.wait_for(1)
    assert request.method == "GET"
    assert request.target == f"/in/{SENDER}/from/{CUSTOMER}?m=a%2Fb%20c"


def test_httppost_posts_the_query_as_a_form_body_to_the_address_without_it(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    message_id = lodge(sandbox, "HTTPPOST", f"{receiver.url}/post/#FROM#?msg=#MSG#&src=#TO#&k=v")
    make_reply(sandbox, message_id=message_id, text=AWKWARD)
    [request] = receiver.wait_for(1)
    assert request.method == "POST"
    assert request.target == f"/post/{CUSTOMER}"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.form == {"msg": [AWKWARD], "src": [SENDER], "k": ["v"]}


def test_unknown_placeholders_are_left_as_text(sandbox: SandboxThread, receiver: Receiver) -> None:
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/h?a=#NOPE#&b=#msg#&m=#MSG#")
    make_reply(sandbox, message_id=message_id, text="hi")
    [request] = receiver.wait_for(1)
    assert request.params == {"a": ["#NOPE#"], "b": ["#msg#"], "m": ["hi"]}


@pytest.mark.parametrize(
    ("zone", "sent_text"),
    [("Australia/Sydney", "01-Jul-2024 12:03:04"), ("America/New_York", "30-Jun-2024 22:03:04")],
)
def test_webhook_times_are_in_the_sandbox_zone(
    sandbox_factory: SandboxFactory, receiver: Receiver, zone: str, sent_text: str
) -> None:
    sandbox = sandbox_factory(timezone=zone)
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/t?s=#SENTDTS#&r=#RCVDDTS#")
    reply = make_reply(
        sandbox, message_id=message_id, text="yes", sent_at="2024-07-01T02:03:04+00:00"
    )
    [request] = receiver.wait_for(1)
    [(received_us,)] = sandbox.query(
        "SELECT received_us FROM replies WHERE reply_id = ?", (reply["ReplyId"],)
    )
    received = datetime.fromtimestamp(received_us / 1e6, UTC).astimezone(ZoneInfo(zone))
    assert request.params == {"s": [sent_text], "r": [wall(received)]}
    assert unquote(request.raw_query.split("&")[0]) == f"s={sent_text}"


@pytest.mark.parametrize(
    ("reply_type", "reply_path"),
    [(None, None), ("HEADER", "Clinic"), ("EMAIL", "desk@example.com")],
)
def test_messages_without_an_http_reply_type_call_no_webhook(
    sandbox: SandboxThread, receiver: Receiver, reply_type: str | None, reply_path: str | None
) -> None:
    message_id = lodge(sandbox, reply_type, reply_path)
    reply = make_reply(sandbox, message_id=message_id, text="hello")
    assert reply["WebhookUrl"] is None
    # A webhook message lodged afterwards proves the dispatcher ran past the first reply.
    probe = lodge(sandbox, "HTTP", f"{receiver.url}/probe")
    make_reply(sandbox, message_id=probe, text="probe")
    [request] = receiver.wait_for(1)
    assert request.path == "/probe"
    assert attempts(sandbox, reply["ReplyId"]) == []


def test_the_reply_is_answered_before_its_webhook_completes(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    receiver.script(Answer(hang=True))
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/slow")
    reply = make_reply(sandbox, message_id=message_id, text="quick?")
    receiver.wait_for(1)
    assert attempts(sandbox, reply["ReplyId"]) == []
    receiver.release()
    [attempt] = wait_for_attempts(sandbox, reply["ReplyId"], 1)
    assert attempt["Ok"] is True


def test_many_replies_at_once_are_all_delivered_and_recorded(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    receiver.script(*[Answer(delay=0.02)] * 40)
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/many?m=#MSG#")
    with control(sandbox) as client:
        for n in range(40):
            response = client.post(
                "/sandbox/replies", json={"message_id": message_id, "text": f"reply {n}"}
            )
            assert response.status_code == 201
    requests = receiver.wait_for(40)
    assert sorted(r.params["m"][0] for r in requests) == sorted(f"reply {n}" for n in range(40))
    assert wait_until_recorded(sandbox, 40) == (40, 40)
    with control(sandbox) as client:
        listed = client.get("/sandbox/webhook-attempts").json()
    assert len(listed) == 40
    assert all(a["Ok"] and a["Attempt"] == 1 for a in listed)


def wait_until_recorded(sandbox: SandboxThread, count: int) -> tuple[int, int]:
    """(attempts, successful attempts) once `count` are recorded (or after 5 s)."""
    deadline = time.monotonic() + 5
    while True:
        [(total, ok)] = sandbox.query("SELECT COUNT(*), COALESCE(SUM(ok), 0) FROM webhook_attempts")
        if total >= count or time.monotonic() > deadline:
            return (total, ok)
        time.sleep(0.02)
