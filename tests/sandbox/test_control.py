"""The `/sandbox/` control API: making replies, keywords, attempts, and its error answers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.config import SandboxConfig
from gwdesk.sandbox.server import SandboxThread
from tests.sandbox.webhook_receiver import CUSTOMER, control, lodge, make_reply

JSON_UTF8 = "application/json; charset=utf-8"


@pytest.fixture(scope="module")
def refusing() -> Iterator[SandboxThread]:
    """One sandbox for the tests that only meet refusals: nothing they send changes it."""
    with SandboxThread(SandboxConfig(seed=1234)) as running:
        yield running


def assert_error(response: httpx.Response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == JSON_UTF8
    body = response.json()
    assert set(body) == {"error"}
    assert "Traceback" not in body["error"]
    for word in words:
        assert word in body["error"]


# ---- replies -------------------------------------------------------------------------------


def test_a_reply_answer_describes_the_reply_and_the_webhook_it_will_call(
    sandbox: SandboxThread,
) -> None:
    message_id = lodge(sandbox, "HTTPPOST", "http://127.0.0.1:9/hook?m=#MSG#&f=#FROM#")
    reply = make_reply(
        sandbox, message_id=message_id, text="Sure", sent_at="2024-01-02T03:04:05+00:00"
    )
    assert set(reply) == {
        "ReplyId", "MessageId", "From", "To", "Text", "SentAt", "ReceivedAt",
        "WebhookMethod", "WebhookUrl", "Keyword", "KeywordUrl",
    }  # fmt: skip
    assert reply["MessageId"] == message_id
    assert (reply["From"], reply["To"], reply["Text"]) == (CUSTOMER, "61400000000", "Sure")
    assert reply["SentAt"] == "2024-01-02T14:04:05+11:00"  # Sydney summer time
    assert datetime.fromisoformat(reply["ReceivedAt"]) >= datetime.fromisoformat(reply["SentAt"])
    assert (reply["WebhookMethod"], reply["WebhookUrl"]) == ("POST", "http://127.0.0.1:9/hook")
    rows = sandbox.query(
        "SELECT message_id, from_number, to_number, text FROM replies WHERE reply_id = ?",
        (reply["ReplyId"],),
    )
    assert rows == [(message_id, CUSTOMER, "61400000000", "Sure")]


def test_a_reply_can_come_from_another_number(sandbox: SandboxThread) -> None:
    message_id = lodge(sandbox)
    reply = make_reply(
        sandbox, message_id=message_id, text="It's his wife", **{"from": "+61499999999"}
    )
    assert reply["From"] == "61499999999"


def test_a_reply_to_an_unknown_message_is_404(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.post(
            "/sandbox/replies", json={"message_id": "20990101000000000000", "text": "hi"}
        )
    assert_error(response, 404, "20990101000000000000")


def test_an_unsolicited_message_goes_to_the_main_account(sandbox: SandboxThread) -> None:
    reply = make_reply(sandbox, **{"from": CUSTOMER, "to": "+1999"}, text="INFO")
    assert reply["MessageId"] is None
    assert reply["To"] == "1999"
    assert reply["WebhookUrl"] is None
    assert sandbox.query(
        "SELECT a.username FROM replies r JOIN accounts a ON a.id = r.account_id"
    ) == [("demo",)]


def test_an_unsolicited_message_to_an_unknown_account_is_404(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.post(
            "/sandbox/replies",
            json={"from": CUSTOMER, "to": "1999", "text": "hi", "account": "nobody"},
        )
    assert_error(response, 404, "nobody")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"message_id": "1"}, ["text", "required"]),
        ({"message_id": "1", "text": ""}, ["text"]),
        ({"message_id": "1", "text": 5}, ["text", "string"]),
        ({"message_id": "1", "text": "a\x00b"}, ["NUL"]),
        ({"message_id": "1", "text": "x" * 1600}, ["parts"]),
        ({"message_id": 1, "text": "hi"}, ["message_id"]),
        ({"message_id": "1", "text": "hi", "to": "1999"}, ["to", "message"]),
        ({"message_id": "1", "text": "hi", "mesage": "x"}, ["mesage"]),
        ({"text": "hi", "to": "1999"}, ["from", "required"]),
        ({"text": "hi", "from": CUSTOMER}, ["to", "required"]),
        ({"text": "hi", "from": "12", "to": "1999"}, ["from"]),
        ({"text": "hi", "from": CUSTOMER, "to": "12"}, ["to"]),
        ({"text": "hi", "from": CUSTOMER, "to": "1999", "sent_at": "yesterday"}, ["sent_at"]),
        ({"text": "hi", "from": CUSTOMER, "to": "1999", "sent_at": "2024-01-01T00:00:00"}, ["offset"]),
        ({"text": "hi", "from": CUSTOMER, "to": "1999", "sent_at": "0001-01-01T00:00:00+14:00"}, ["sent_at"]),
        ({"text": "hi", "from": CUSTOMER, "to": "1999", "sent_at": "1999-12-31T00:00:00+00:00"}, ["2000"]),
    ],
    ids=[
        "no-text", "empty-text", "number-text", "nul", "too-long",
        "numeric-id", "to-with-message", "unknown-field", "no-from", "no-to", "short-from",
        "short-to", "bad-sent-at", "naive-sent-at", "overflowing-sent-at", "ancient-sent-at",
    ],
)  # fmt: skip
def test_bad_reply_bodies_are_refused_with_a_clear_400(
    refusing: SandboxThread, body: dict[str, Any], words: list[str]
) -> None:
    with control(refusing) as client:
        response = client.post("/sandbox/replies", json=body)
    assert_error(response, 400, *words)


@pytest.mark.parametrize(
    ("content", "content_type", "status"),
    [
        (b'{"text": "hi"}', "text/plain", 415),
        (b"text=hi", "application/x-www-form-urlencoded", 415),
        (b"{not json", "application/json", 400),
        (b"[1, 2]", "application/json", 400),
        (b'"just a string"', "application/json", 400),
        (b"\xff\xfe{}", "application/json", 400),
        (b'{"message_id": "1", "text": "\\ud800"}', "application/json", 400),
        (b"[" * 30_000 + b"]" * 30_000, "application/json", 400),
        (b'{"text": ' + b"1" * 5000 + b"}", "application/json", 400),
        (b'{"text": "' + b"a" * 70_000 + b'"}', "application/json", 413),
    ],
    ids=[
        "text-plain",
        "form",
        "broken",
        "array",
        "string",
        "not-utf8",
        "lone-surrogate",
        "deep",
        "huge-int",
        "too-big",
    ],
)
def test_non_json_and_oversized_bodies_are_refused(
    refusing: SandboxThread, content: bytes, content_type: str, status: int
) -> None:
    with control(refusing) as client:
        response = client.post(
            "/sandbox/replies", content=content, headers={"Content-Type": content_type}
        )
    assert_error(response, status)
    assert refusing.query("SELECT COUNT(*) FROM replies") == [(0,)]


# ---- attempts ------------------------------------------------------------------------------


def test_attempts_of_an_unknown_reply_are_404(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.get("/sandbox/replies/no-such-reply/attempts")
    assert_error(response, 404, "no-such-reply")


def test_webhook_attempts_can_be_filtered_by_reply(sandbox: SandboxThread) -> None:
    message_id = lodge(sandbox, "HTTP", "http://127.0.0.1:9/refused")
    first = make_reply(sandbox, message_id=message_id, text="one")
    second = make_reply(sandbox, message_id=message_id, text="two")
    with control(sandbox) as client:
        for _ in range(100):
            everything = client.get("/sandbox/webhook-attempts").json()
            if {a["ReplyId"] for a in everything} == {first["ReplyId"], second["ReplyId"]}:
                break
        only_second = client.get(
            "/sandbox/webhook-attempts", params={"reply_id": second["ReplyId"]}
        ).json()
        newest = client.get("/sandbox/webhook-attempts", params={"limit": "1"}).json()
    assert {a["ReplyId"] for a in everything} == {first["ReplyId"], second["ReplyId"]}
    assert only_second
    assert {a["ReplyId"] for a in only_second} == {second["ReplyId"]}
    assert len(newest) == 1
    assert [a["Id"] for a in everything] == sorted(a["Id"] for a in everything)


@pytest.mark.parametrize(
    "params",
    [{"limit": "0"}, {"limit": "ten"}, {"limit": "10001"}, {"reply": "x"}],
    ids=["zero", "word", "too-many", "unknown"],
)
def test_bad_webhook_attempt_queries_are_400(
    refusing: SandboxThread, params: dict[str, str]
) -> None:
    with control(refusing) as client:
        response = client.get("/sandbox/webhook-attempts", params=params)
    assert_error(response, 400)


# ---- keywords ------------------------------------------------------------------------------


def test_keywords_can_be_added_replaced_listed_and_deleted(sandbox: SandboxThread) -> None:
    with control(sandbox) as client:
        added = client.post("/sandbox/keywords", json={"keyword": "Stop", "url": "http://a.test/1"})
        replaced = client.post(
            "/sandbox/keywords", json={"keyword": "STOP", "url": "https://a.test/2"}
        )
        client.post("/sandbox/keywords", json={"keyword": "info", "url": "http://a.test/i"})
        listed = client.get("/sandbox/keywords").json()
        deleted = client.delete("/sandbox/keywords/stop")
        after = client.get("/sandbox/keywords").json()
    assert added.status_code == 201
    assert added.json() == {"keyword": "STOP", "url": "http://a.test/1", "account": "demo"}
    assert replaced.status_code == 200
    assert listed == [
        {"keyword": "INFO", "url": "http://a.test/i", "account": "demo"},
        {"keyword": "STOP", "url": "https://a.test/2", "account": "demo"},
    ]
    assert deleted.status_code == 204
    assert after == [{"keyword": "INFO", "url": "http://a.test/i", "account": "demo"}]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"keyword": "stop", "url": "ftp://a.test/x"}, ["http"]),
        ({"keyword": "stop", "url": "not a url"}, ["http"]),
        ({"keyword": "stop", "url": "http://[::1/x"}, ["http"]),
        ({"keyword": "stop", "url": "http://a.test/" + "x" * 2000}, ["2000"]),
        ({"keyword": "two words", "url": "http://a.test/"}, ["one word"]),
        ({"keyword": "", "url": "http://a.test/"}, ["keyword"]),
        ({"keyword": ["stop"], "url": "http://a.test/"}, ["keyword", "string"]),
        ({"url": "http://a.test/"}, ["keyword", "required"]),
        ({"keyword": "stop"}, ["url", "required"]),
        ({"keyword": "stop", "url": "http://a.test/", "hook": 1}, ["hook"]),
    ],
    ids=[
        "ftp",
        "not-url",
        "bad-ipv6",
        "long-url",
        "two-words",
        "empty",
        "list",
        "no-keyword",
        "no-url",
        "extra",
    ],
)
def test_bad_keywords_are_refused(
    refusing: SandboxThread, body: dict[str, Any], words: list[str]
) -> None:
    with control(refusing) as client:
        response = client.post("/sandbox/keywords", json=body)
    assert_error(response, 400, *words)
    assert refusing.query("SELECT COUNT(*) FROM keywords") == [(0,)]


def test_deleting_an_unknown_keyword_is_404(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.delete("/sandbox/keywords/nothing")
    assert_error(response, 404, "NOTHING")


def test_keywords_of_an_unknown_account_are_404(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.get("/sandbox/keywords", params={"account": "ghost"})
    assert_error(response, 404, "ghost")


# ---- auto-reply settings -------------------------------------------------------------------


def test_auto_reply_settings_can_be_read_and_changed(sandbox: SandboxThread) -> None:
    with control(sandbox) as client:
        before = client.get("/sandbox/auto-reply").json()
        changed = client.put("/sandbox/auto-reply", json={"enabled": True, "delay": 0.5})
        after = client.get("/sandbox/auto-reply").json()
    assert before == {"enabled": False, "delay": 3.0, "rate": 5.0, "pending": 0}
    assert changed.status_code == 200
    assert changed.json() == after == {"enabled": True, "delay": 0.5, "rate": 5.0, "pending": 0}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"enabled": "yes"},
        {"enabled": 1},
        {"delay": -1},
        {"delay": "3"},
        {"delay": True},
        {"delay": 10_000},
        {"delay": 10**400},
        {"rate": 0},
        {"colour": "blue"},
    ],
    ids=["empty", "string-flag", "number-flag", "negative", "string-delay", "bool-delay",
         "huge-delay", "enormous-delay", "zero-rate", "unknown"],
)  # fmt: skip
def test_bad_auto_reply_settings_are_refused(refusing: SandboxThread, body: dict[str, Any]) -> None:
    with control(refusing) as client:
        response = client.put("/sandbox/auto-reply", json=body)
        settings = client.get("/sandbox/auto-reply").json()
    assert_error(response, 400)
    assert settings["enabled"] is False
    assert settings["delay"] == 3.0


def test_a_non_finite_delay_is_refused(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.put(
            "/sandbox/auto-reply",
            content=b'{"delay": NaN}',
            headers={"Content-Type": "application/json"},
        )
    assert_error(response, 400, "delay")


# ---- routing -------------------------------------------------------------------------------


def test_an_unknown_sandbox_path_is_a_json_404(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.get("/sandbox/nothing-here")
    assert_error(response, 404, "/sandbox/nothing-here")


def test_a_wrong_method_is_a_json_405(refusing: SandboxThread) -> None:
    with control(refusing) as client:
        response = client.get("/sandbox/replies")
    assert_error(response, 405)
    assert "POST" in response.headers["Allow"]
