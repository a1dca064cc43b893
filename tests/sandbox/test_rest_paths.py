"""Paths match in any letter case, as on the real service (IIS and ASP.NET route so).

The real documentation itself writes `/v2/Replies/GetByDate` beside `/v2/message/send`,
so clients copy either spelling.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.lodge_support import NS, NUMBER, call, text_result
from tests.sandbox.rest_support import DEMO, assert_failure, assert_success, rest_client

MESSAGE = {"Message": "Hello", "Recipient": NUMBER}


@pytest.fixture
def api(sandbox: SandboxThread) -> Iterator[httpx.Client]:
    with rest_client(sandbox) as client:
        yield client


@pytest.mark.parametrize(
    "path", ["/v2/message/simple_send", "/V2/MESSAGE/SIMPLE_SEND", "/v2/Message/Simple_Send"]
)
def test_simple_send_is_routed_in_any_case(api: httpx.Client, path: str) -> None:
    data = assert_success(api.post(path, json=MESSAGE))
    assert data["Message"]["PhoneNumber"] == NUMBER


def test_send_is_routed_in_any_case(api: httpx.Client) -> None:
    body = {"Message": "Hello", "Recipients": [NUMBER]}
    assert assert_success(api.post("/v2/Message/Send", json=body))["Message"]["MessageId"]


def test_status_and_logs_are_routed_in_any_case(api: httpx.Client) -> None:
    message_id = assert_success(api.post("/v2/message/simple_send", json=MESSAGE))["Message"][
        "MessageId"
    ]
    [status] = api.get("/V2/Message/Status", params={"message_id": message_id}).json()
    assert status["MessageId"] == message_id
    logs = api.get("/v2/MESSAGE/logs", params={"message_id": message_id}).json()
    assert logs["totalRecords"] == 1


@pytest.mark.parametrize(
    "path", ["/v2/Replies/GetByDate", "/V2/REPLIES/GETBYDATE", "/v2/replies/getbydate"]
)
def test_the_replies_backfill_is_routed_in_any_case(api: httpx.Client, path: str) -> None:
    body = api.get(path).json()
    assert body["Items"] == []
    assert body["PageNumber"] == 1


@pytest.mark.parametrize("path", ["/v2/Account/Info", "/v2/account/info", "/V2/ACCOUNT/INFO"])
def test_account_info_is_routed_in_any_case(api: httpx.Client, path: str) -> None:
    assert api.get(path).json()["AccountName"] == "demo"


def test_the_balance_is_routed_in_any_case(api: httpx.Client) -> None:
    assert assert_success(api.post("/V2/Account/Balance"))["Currency"] == "AUD"


def test_the_token_endpoint_is_routed_in_any_case(sandbox: SandboxThread) -> None:
    form = {"grant_type": "password", "username": DEMO[0], "password": DEMO[1]}
    with rest_client(sandbox, auth=None) as client:
        response = client.post("/V2/OAuth/Access_Token", data=form)
    assert response.status_code == 200, response.text
    assert response.json()["token_type"] == "bearer"


def test_an_unknown_path_in_any_case_is_a_404_envelope(api: httpx.Client) -> None:
    message = assert_failure(api.get("/V2/Nothing/Here"), 404)
    assert message == "No such endpoint: /V2/Nothing/Here."


def test_a_wrong_method_in_any_case_is_a_405_envelope(api: httpx.Client) -> None:
    response = api.get("/V2/MESSAGE/SEND")
    assert_failure(response, 405)
    assert "POST" in response.headers["allow"]


def test_faults_apply_whatever_the_case(sandbox_factory: SandboxFactory) -> None:
    sandbox = sandbox_factory(faults="replies:503=1")
    with rest_client(sandbox) as client:
        response = client.get("/v2/replies/GETBYDATE")
    assert_failure(response, 503)
    assert response.headers["x-sandbox-fault"] == "503"


# ---- the Lodge address, as IIS serves an .asmx ------------------------------------------------


def test_the_lodge_http_port_is_routed_in_any_case(sandbox: SandboxThread) -> None:
    address = sandbox.lodge_url.replace("/dotnet/Lodge.asmx", "/DOTNET/LODGE.ASMX")
    form = {"Username": "demo", "Pwd": "demo", "PhoneNumber": NUMBER, "PhoneMessage": "Hi"}
    response = httpx.post(f"{address}/lodgesmsmessage", data=form)
    assert response.status_code == 200, response.text
    assert "Message sent successfully." in response.text


def test_the_lodge_soap_address_and_wsdl_are_routed_in_any_case(sandbox: SandboxThread) -> None:
    address = sandbox.lodge_url.replace("/dotnet/Lodge.asmx", "/Dotnet/lodge.asmx")
    with httpx.Client() as client:
        params = {"Username": "demo", "Pwd": "demo", "PhoneNumber": NUMBER, "PhoneMessage": "Hi"}
        result = text_result(call(client, address, "LodgeSMSMessage", params), "LodgeSMSMessage")
        wsdl = client.get(f"{address}?wsdl")
    assert result == "Message sent successfully."
    assert wsdl.status_code == 200
    assert NS in wsdl.text
