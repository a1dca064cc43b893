"""The REST face answers a token request and a single send over loopback."""

from __future__ import annotations

import httpx

from gwdesk.sandbox.server import SandboxThread


def test_password_grant_then_simple_send_is_lodged(sandbox: SandboxThread) -> None:
    with httpx.Client(base_url=sandbox.rest_url) as client:
        token = client.post(
            "/v2/oauth/access_token",
            data={"grant_type": "password", "username": "demo", "password": "demo"},
        ).json()["access_token"]
        response = client.post(
            "/v2/message/simple_send",
            json={"Message": "Hello", "Recipient": "+61412345678"},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert response.status_code == 200
    message = response.json()["Data"]["Message"]
    assert message["PhoneNumber"] == "61412345678"
    assert message["Status"] == "ACTIVE"
    assert sandbox.query("SELECT to_number FROM messages") == [("61412345678",)]
