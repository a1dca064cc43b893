"""OAuth password-grant tokens and Basic authentication on the REST face."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.rest_support import (
    JSON_UTF8,
    NUMBER,
    assert_failure,
    assert_success,
    bearer_token,
    rest_client,
)

TOKEN_PATH = "/v2/oauth/access_token"
GRANT = {"grant_type": "password", "username": "demo", "password": "demo"}

#: Every authenticated endpoint, with a request that succeeds once authenticated.
ENDPOINTS: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/v2/message/simple_send", {"json": {"Message": "Hi", "Recipient": NUMBER}}),
    ("POST", "/v2/message/send", {"json": {"Message": "Hi", "Recipients": [NUMBER, NUMBER]}}),
    ("GET", "/v2/message/status", {"params": {"external_system_id": "none"}}),
    ("GET", "/v2/message/logs", {}),
    (
        "POST",
        "/v2/account/balance",
        {"content": b"", "headers": {"Content-Type": "application/x-www-form-urlencoded"}},
    ),
    ("GET", "/v2/Replies/GetByDate", {}),
]
ENDPOINT_IDS = [path.rsplit("/", 1)[1] for _, path, _ in ENDPOINTS]


@pytest.fixture
def anonymous(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox, auth=None) as client:
        yield client


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def assert_token_error(response: httpx.Response, error: str) -> None:
    assert response.status_code == 400
    assert response.headers["content-type"] == JSON_UTF8
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert set(body) == {"error", "error_description"}
    assert body["error"] == error
    assert body["error_description"]


# ---- the token endpoint --------------------------------------------------------------------


def test_a_password_grant_returns_a_bearer_token_and_its_lifetime(
    anonymous: httpx.Client,
) -> None:
    response = anonymous.post(TOKEN_PATH, data=GRANT)
    assert response.status_code == 200
    assert response.headers["content-type"] == JSON_UTF8
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "scope", ".issued", ".expires"}
    assert isinstance(body["access_token"], str)
    assert len(body["access_token"]) >= 32
    assert body["token_type"] == "bearer"
    assert body["expires_in"] == 3599
    assert body["scope"] == "send"
    issued = parsedate_to_datetime(body[".issued"])
    expires = parsedate_to_datetime(body[".expires"])
    assert body[".issued"].endswith(" GMT")
    assert (expires - issued).total_seconds() == pytest.approx(3599, abs=1)


def test_each_grant_issues_a_new_token(anonymous: httpx.Client) -> None:
    assert bearer_token(anonymous) != bearer_token(anonymous)


def test_the_token_authorises_a_send(sandbox: SandboxThread, anonymous: httpx.Client) -> None:
    token = bearer_token(anonymous)
    response = anonymous.post(
        "/v2/message/simple_send",
        json={"Message": "Hello", "Recipient": "+61412345678"},
        headers={"Authorization": f"Bearer {token}"},
    )
    message = assert_success(response)["Message"]
    assert message["PhoneNumber"] == "61412345678"
    assert sandbox.query("SELECT to_number FROM messages") == [("61412345678",)]


@pytest.mark.parametrize(
    "form",
    [{**GRANT, "password": "wrong"}, {**GRANT, "username": "nobody"}],
    ids=["wrong password", "unknown user"],
)
def test_bad_credentials_are_an_invalid_grant(
    anonymous: httpx.Client, form: dict[str, str]
) -> None:
    assert_token_error(anonymous.post(TOKEN_PATH, data=form), "invalid_grant")


@pytest.mark.parametrize("grant_type", ["client_credentials", "refresh_token", "PASSWORD"])
def test_a_grant_other_than_password_is_unsupported(
    anonymous: httpx.Client, grant_type: str
) -> None:
    response = anonymous.post(TOKEN_PATH, data={**GRANT, "grant_type": grant_type})
    assert_token_error(response, "unsupported_grant_type")


@pytest.mark.parametrize("missing", ["grant_type", "username", "password"])
def test_a_missing_field_is_an_invalid_request(anonymous: httpx.Client, missing: str) -> None:
    form = {name: value for name, value in GRANT.items() if name != missing}
    assert_token_error(anonymous.post(TOKEN_PATH, data=form), "invalid_request")


def test_an_empty_password_is_an_invalid_request(anonymous: httpx.Client) -> None:
    response = anonymous.post(TOKEN_PATH, data={**GRANT, "password": ""})
    assert_token_error(response, "invalid_request")


def test_a_json_body_is_an_invalid_request(anonymous: httpx.Client) -> None:
    assert_token_error(anonymous.post(TOKEN_PATH, json=GRANT), "invalid_request")


def test_a_repeated_parameter_is_an_invalid_request(anonymous: httpx.Client) -> None:
    body = "grant_type=password&username=demo&password=demo&password=other"
    response = anonymous.post(
        TOKEN_PATH,
        content=body.encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_token_error(response, "invalid_request")
    assert "password" in response.json()["error_description"]


def test_a_form_with_a_charset_parameter_is_accepted(anonymous: httpx.Client) -> None:
    response = anonymous.post(
        TOKEN_PATH,
        content=b"grant_type=password&username=demo&password=demo",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"},
    )
    assert response.status_code == 200


def test_the_token_endpoint_refuses_get_with_the_envelope(anonymous: httpx.Client) -> None:
    assert_failure(anonymous.get(TOKEN_PATH, params=GRANT), 405)


# ---- bearer tokens -------------------------------------------------------------------------


def test_a_token_stops_working_when_it_expires(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(token_ttl=1)
    with rest_client(sandbox, auth=None) as client:
        granted = client.post(TOKEN_PATH, data=GRANT).json()
        started = time.monotonic()
        assert granted["expires_in"] == 1
        headers = {"Authorization": f"Bearer {granted['access_token']}"}
        assert client.get("/v2/message/logs", headers=headers).status_code == 200
        while (response := client.get("/v2/message/logs", headers=headers)).status_code == 200:
            assert time.monotonic() - started < 3, "the token never expired"
            time.sleep(0.05)
        assert time.monotonic() - started > 0.8
    assert_failure(response, 401)
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


def test_an_unknown_token_is_an_invalid_token(anonymous: httpx.Client) -> None:
    response = anonymous.get("/v2/message/logs", headers={"Authorization": "Bearer not-a-token"})
    assert_failure(response, 401)
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


def test_the_scheme_name_is_case_insensitive(anonymous: httpx.Client) -> None:
    token = bearer_token(anonymous)
    response = anonymous.get("/v2/message/logs", headers={"Authorization": f"bearer {token}"})
    assert response.status_code == 200


def test_a_token_of_one_account_sees_only_that_account(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(extra_accounts=[("other", "pw")])
    with rest_client(sandbox, auth=None) as client:
        demo = {"Authorization": f"Bearer {bearer_token(client)}"}
        other = {"Authorization": f"Bearer {bearer_token(client, ('other', 'pw'))}"}
        client.post(
            "/v2/message/simple_send", json={"Message": "Hi", "Recipient": NUMBER}, headers=demo
        )
        assert client.get("/v2/message/logs", headers=demo).json()["totalRecords"] == 1
        assert client.get("/v2/message/logs", headers=other).json()["totalRecords"] == 0


# ---- missing, Basic and malformed authorization ---------------------------------------------


@pytest.mark.parametrize(("method", "path", "request_args"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_a_request_without_authorization_gets_a_bearer_challenge(
    anonymous: httpx.Client, method: str, path: str, request_args: dict[str, Any]
) -> None:
    response = anonymous.request(method, path, **request_args)
    assert_failure(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(("method", "path", "request_args"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_basic_authentication_works_on_every_endpoint(
    anonymous: httpx.Client, method: str, path: str, request_args: dict[str, Any]
) -> None:
    headers = {**request_args.get("headers", {}), "Authorization": basic("demo", "demo")}
    response = anonymous.request(method, path, **{**request_args, "headers": headers})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(("method", "path", "request_args"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_a_wrong_basic_password_is_refused_on_every_endpoint(
    anonymous: httpx.Client, method: str, path: str, request_args: dict[str, Any]
) -> None:
    headers = {**request_args.get("headers", {}), "Authorization": basic("demo", "wrong")}
    response = anonymous.request(method, path, **{**request_args, "headers": headers})
    assert_failure(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"


def test_a_password_containing_colons_is_split_at_the_first(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(extra_accounts=[("colon", "a:b:c")])
    with rest_client(sandbox, auth=("colon", "a:b:c")) as client:
        assert client.get("/v2/message/logs").status_code == 200


@pytest.mark.parametrize(
    "header",
    [
        b"Bearer",
        b"Bearer  two-spaces",
        b"Bearer a b",
        b"Bearer \xe9\xff",
        b"Basic",
        b"Basic !!!not-base64!!!",
        base64.b64encode(b"demo:demo"),
        b"Basic " + base64.b64encode(b"no-colon"),
        b"Basic " + base64.b64encode(b"\xff\xfe:\xff"),
        b"Basic \xe9\xff",
        b"Digest username=demo",
        b"Token abc",
    ],
    ids=[
        "bearer without token",
        "bearer double space",
        "bearer with space",
        "bearer non-ascii",
        "basic without credentials",
        "basic not base64",
        "credentials without scheme",
        "basic without colon",
        "basic not utf-8",
        "basic non-ascii",
        "digest",
        "unknown scheme",
    ],
)
def test_a_malformed_authorization_header_is_refused(
    anonymous: httpx.Client, header: bytes
) -> None:
    response = anonymous.get("/v2/message/logs", headers={b"Authorization": header})
    assert_failure(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")
