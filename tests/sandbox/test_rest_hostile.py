"""Hostile input to the REST face: a clear failure envelope, never a 500 or a traceback."""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    NUMBER,
    assert_failure,
    assert_success,
    log_of,
    rest_client,
    send,
    simple_send,
)

SIMPLE_SEND = "/v2/message/simple_send"
SEND = "/v2/message/send"
JSON = {"Content-Type": "application/json"}
VALID = {"Message": "Hello", "Recipient": NUMBER}


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


@pytest.fixture
def small(sandbox_factory: SandboxFactory) -> Iterator[httpx.Client]:
    """A sandbox whose REST bodies are limited to 4 KiB, so limits are cheap to reach."""
    with rest_client(sandbox_factory(rest_body_limit=4096)) as client:
        yield client


def post_raw(client: httpx.Client, body: bytes, path: str = SIMPLE_SEND, **headers: str) -> Any:
    return client.post(path, content=body, headers={**JSON, **headers})


def still_answers(client: httpx.Client) -> None:
    assert_success(simple_send(client))


# ---- bodies that are not a JSON object -----------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b'{"Message": "hi",', b"not json", b"{'Message': 'hi'}", b"", b'{"a": 1}}', b"{,}"],
    ids=["truncated", "words", "single quotes", "empty", "trailing brace", "bare comma"],
)
@pytest.mark.parametrize("path", [SIMPLE_SEND, SEND])
def test_malformed_json_is_refused(api: httpx.Client, body: bytes, path: str) -> None:
    assert "JSON" in assert_failure(post_raw(api, body, path), 400)
    still_answers(api)


@pytest.mark.parametrize(
    "body", [b"[]", b'[{"Message": "hi"}]', b'"text"', b"42", b"null", b"true"]
)
def test_json_that_is_not_an_object_is_refused(api: httpx.Client, body: bytes) -> None:
    assert "object" in assert_failure(post_raw(api, body), 400)


def test_invalid_utf8_is_refused(api: httpx.Client) -> None:
    body = b'{"Message": "caf\xe9 \xff\xfe", "Recipient": "61412345678"}'
    assert_failure(post_raw(api, body), 400)


def test_a_utf8_byte_order_mark_is_tolerated(api: httpx.Client) -> None:
    body = b"\xef\xbb\xbf" + json.dumps(VALID).encode()
    assert_success(post_raw(api, body))


def test_a_declared_charset_is_honoured(api: httpx.Client) -> None:
    body = json.dumps({**VALID, "Message": "Café"}, ensure_ascii=False).encode("latin-1")
    response = post_raw(api, body, **{"Content-Type": "application/json; charset=iso-8859-1"})
    assert log_of(api, assert_success(response)["Message"]["MessageId"])["message"] == "Café"


@pytest.mark.parametrize("charset", ["klingon", "rot13", "base64", "zlib", "hex"])
def test_a_charset_that_is_no_text_encoding_is_an_unsupported_media_type(
    api: httpx.Client, charset: str
) -> None:
    body = json.dumps(VALID).encode()
    content_type = f"application/json; charset={charset}"
    assert_failure(post_raw(api, body, **{"Content-Type": content_type}), 415)


@pytest.mark.parametrize("charset", ["undefined", "punycode", "utf-16"])
def test_a_body_that_is_not_json_text_in_its_charset_is_refused(
    api: httpx.Client, charset: str
) -> None:
    body = json.dumps(VALID).encode()
    content_type = f"application/json; charset={charset}"
    assert_failure(post_raw(api, body, **{"Content-Type": content_type}), 400)


@pytest.mark.parametrize("opener", ["[", '{"a":'], ids=["arrays", "objects"])
def test_json_nested_a_hundred_thousand_deep_is_refused(api: httpx.Client, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    body = (opener * 100_000 + "1" + closer * 100_000).encode()
    assert_failure(post_raw(api, body), 400)
    still_answers(api)


def test_a_body_with_a_broken_content_encoding_is_refused(api: httpx.Client) -> None:
    response = post_raw(api, b"not gzip at all", **{"Content-Encoding": "gzip"})
    assert_failure(response, 400)
    assert response.headers["connection"].lower() == "close"
    still_answers(api)


def test_a_gzip_body_is_accepted(api: httpx.Client) -> None:
    response = post_raw(
        api, gzip.compress(json.dumps(VALID).encode()), **{"Content-Encoding": "gzip"}
    )
    assert_success(response)


# ---- content type and size -----------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "application/json-patch+json",
        None,
    ],
)
@pytest.mark.parametrize("path", [SIMPLE_SEND, SEND])
def test_a_body_that_is_not_json_is_an_unsupported_media_type(
    api: httpx.Client, content_type: str | None, path: str
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    response = api.post(path, content=json.dumps(VALID).encode(), headers=headers)
    assert_failure(response, 415)


def test_the_media_type_is_case_insensitive(api: httpx.Client) -> None:
    assert_success(
        post_raw(api, json.dumps(VALID).encode(), **{"Content-Type": "Application/JSON"})
    )


def padded(size: int) -> bytes:
    """A valid simple_send body of exactly `size` bytes (padding is JSON whitespace)."""
    body = json.dumps(VALID).encode()
    return body + b" " * (size - len(body))


def test_a_body_at_the_limit_is_accepted(small: httpx.Client) -> None:
    assert_success(post_raw(small, padded(4096)))


def test_a_body_over_the_limit_with_a_length_is_too_large(small: httpx.Client) -> None:
    response = post_raw(small, padded(4097))
    assert "4096" in assert_failure(response, 413)
    still_answers(small)


def test_a_chunked_body_over_the_limit_is_too_large(small: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        body = padded(20_000)
        for start in range(0, len(body), 1000):
            yield body[start : start + 1000]

    response = small.post(SIMPLE_SEND, content=chunks(), headers=JSON)
    assert "content-length" not in response.request.headers
    assert_failure(response, 413)
    still_answers(small)


def test_a_chunked_body_within_the_limit_is_accepted(small: httpx.Client) -> None:
    response = small.post(
        SIMPLE_SEND, content=iter([padded(2000)[:1000], padded(2000)[1000:]]), headers=JSON
    )
    assert_success(response)


def test_a_gzip_bomb_stops_at_the_limit(small: httpx.Client) -> None:
    bomb = gzip.compress(padded(3_000_000), compresslevel=9)
    assert len(bomb) < 4096
    assert_failure(post_raw(small, bomb, **{"Content-Encoding": "gzip"}), 413)


# ---- field values --------------------------------------------------------------------------


def test_unknown_fields_are_ignored(api: httpx.Client) -> None:
    body = {**VALID, "Foo": 1, "Nested": {"a": [1, 2, {"b": None}]}, "Odd": "\ud800", "message": 1}
    assert_success(post_raw(api, json.dumps(body).encode()))


@pytest.mark.parametrize(
    ("raw_value", "field"),
    [
        (b"1" * 5000, None),
        (b"1e999", "Message"),
        (b"-1e999", "Message"),
        (b"NaN", "Message"),
        (b"123456789012345678901234567890", "Message"),
    ],
    ids=["5000-digit integer", "infinity", "negative infinity", "NaN", "long integer"],
)
def test_a_huge_number_is_refused(api: httpx.Client, raw_value: bytes, field: str | None) -> None:
    body = b'{"Message": ' + raw_value + b', "Recipient": "61412345678"}'
    assert_failure(post_raw(api, body), 400, field)


def test_a_huge_number_in_an_unknown_field_is_refused_as_json(api: httpx.Client) -> None:
    body = b'{"Message": "hi", "Recipient": "61412345678", "Other": ' + b"7" * 5000 + b"}"
    assert_failure(post_raw(api, body), 400)


@pytest.mark.parametrize(
    ("field", "size"),
    [
        ("Message", 500_000),
        ("Recipient", 100_000),
        ("Source", 100_000),
        ("SendAt", 100_000),
        ("ExternalSystemId", 100_000),
        ("Tags", 100_000),
        ("ReplyPath", 100_000),
    ],
)
def test_a_huge_string_is_refused_with_a_short_message(
    api: httpx.Client, field: str, size: int
) -> None:
    body = {"Message": "Hello", "Recipients": [NUMBER], field: "9" * size}
    if field == "Recipient":
        body["Recipients"] = ["9" * size]
    if field == "ReplyPath":
        body["ReplyType"] = "HTTP"
    expected = "Recipients[0]" if field == "Recipient" else field
    message = assert_failure(api.post(SEND, json=body), 400, expected)
    assert len(message) < 300


@pytest.mark.parametrize("field", ["Message", "Recipient"])
def test_a_nul_character_is_refused_in_message_and_recipient(api: httpx.Client, field: str) -> None:
    value = {"Message": "Hel\x00lo", "Recipient": "614123\x0045678"}[field]
    assert_failure(simple_send(api, **{field: value}), 400, field)


def test_nul_characters_in_references_round_trip(api: httpx.Client) -> None:
    message = assert_success(send(api, ExternalSystemId="ref\x00x", Tags="a\x00b"))["Message"]
    assert (message["ExternalSystemId"], message["Tags"]) == ("ref\x00x", "a\x00b")
    found = api.get("/v2/message/status", params={"external_system_id": "ref\x00x"}).json()
    assert [m["MessageId"] for m in found] == [message["MessageId"]]


@pytest.mark.parametrize("path", ["https://example.com/a\x00b", "https://example.com/a\nb"])
def test_a_reply_url_with_control_characters_is_refused(api: httpx.Client, path: str) -> None:
    assert_failure(send(api, ReplyType="HTTPGET", ReplyPath=path), 400, "ReplyPath")


@pytest.mark.parametrize(
    "field", ["Message", "Recipients[0]", "ExternalSystemId", "Tags", "Source", "SendAt"]
)
def test_an_unpaired_surrogate_is_refused_naming_its_field(api: httpx.Client, field: str) -> None:
    body: dict[str, Any] = {"Message": "Hello", "Recipients": [NUMBER]}
    if field == "Recipients[0]":
        body["Recipients"] = ["6141234\ud83d5678"]
    else:
        body[field] = "x\udc00y"
    # json.dumps escapes the surrogate as \udc00, as a hostile client would send it.
    assert_failure(post_raw(api, json.dumps(body).encode(), SEND), 400, field)


def test_a_surrogate_pair_escape_is_a_real_character(api: httpx.Client) -> None:
    body = b'{"Message": "smile \\ud83d\\ude00", "Recipient": "61412345678"}'
    message_id = assert_success(post_raw(api, body))["Message"]["MessageId"]
    assert log_of(api, message_id)["message"] == "smile 😀"


# ---- paths and methods ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/v2/",
        "/v2/message",
        "/v2/message/simple_send/",
        "/v2/message/unknown",
        "/v2/../v2/message/logs2",
        "/v2/%00",
        "/v3/message/logs",
    ],
)
def test_an_unknown_path_is_a_not_found_envelope(api: httpx.Client, path: str) -> None:
    if path.startswith("/v3/"):
        assert api.get(path).status_code == 404
    else:
        assert_failure(api.get(path), 404)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", SIMPLE_SEND, "POST"),
        ("PUT", SEND, "POST"),
        ("DELETE", "/v2/message/logs", "GET"),
        ("POST", "/v2/message/status", "GET"),
        ("PATCH", "/v2/account/balance", "POST"),
        ("GET", "/v2/oauth/access_token", "POST"),
        ("POST", "/v2/Replies/GetByDate", "GET"),
    ],
)
def test_a_wrong_method_is_a_method_not_allowed_envelope(
    api: httpx.Client, method: str, path: str, allowed: str
) -> None:
    response = api.request(method, path)
    assert_failure(response, 405)
    assert allowed in response.headers["allow"].split(",")


def test_a_query_string_on_a_send_is_ignored(api: httpx.Client) -> None:
    assert_success(api.post(f"{SIMPLE_SEND}?Message=ignored&x=1&x=2", json=VALID))


# ---- requests that are not HTTP ------------------------------------------------------------


def raw_exchange(sandbox: SandboxThread, request: bytes) -> bytes:
    """Send bytes no HTTP client would, and read the answer until the server closes."""
    address = urlsplit(sandbox.rest_url)
    assert address.hostname is not None
    assert address.port is not None
    with socket.create_connection((address.hostname, address.port), timeout=5) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /v2/message/logs?" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /v2/message/logs HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10_000 + b"\r\n\r\n",
        b"POST /v2/message/send HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
        b"POST /v2/message/send HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Type: application/json\r\nAuthorization: Basic ZGVtbzpkZW1v\r\n\r\nZZ\r\n",
    ],
    ids=["not http", "url too long", "header too long", "bad length", "bad chunk size"],
)
def test_a_request_that_is_not_http_gets_a_bare_400_and_the_server_carries_on(
    sandbox: SandboxThread, api: httpx.Client, request_bytes: bytes
) -> None:
    # aiohttp answers these before routing, so the envelope cannot apply; no traceback leaks.
    answer = raw_exchange(sandbox, request_bytes)
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.")
    assert b" 400 " in status_line
    assert b"Traceback" not in answer
    still_answers(api)
