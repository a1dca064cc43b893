"""`gwdesk send --to NUMBER`: one message through the single send's flow, as the Send tab's.

The credits question a single send asks is answered by `--force`; not at a terminal
(a subprocess's stdin is a pipe), nothing is sent without it. The MESSAGE goes as
written, braces and all.
"""

from __future__ import annotations

import json

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.test_cli import PASSWORD, run

TWO_PARTS = "x" * 200


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


def set_credits(gateway: SandboxThread, credits: int) -> None:
    httpx.put(
        f"{gateway.rest_url}/sandbox/account", json={"account": "ops", "credits": credits}
    ).raise_for_status()


def sent(gateway: SandboxThread) -> list[str]:
    return [text for (text,) in gateway.query("SELECT message FROM messages ORDER BY id")]


def test_credits_short_refuse_a_single_send_away_from_a_terminal(gateway: SandboxThread) -> None:
    set_credits(gateway, 1)
    refused = run(gateway, "send", "--to", "0412 345 678", TWO_PARTS)
    assert refused.returncode == 2
    assert "needs 2 credits and the account has 1" in refused.stderr
    assert "nothing was sent (--force sends it anyway)" in refused.stderr
    assert sent(gateway) == []


def test_force_answers_the_credits_question_of_a_single_send(gateway: SandboxThread) -> None:
    set_credits(gateway, 1)
    forced = run(gateway, "send", "--json", "--force", "--to", "0412 345 678", TWO_PARTS)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["lodged"] == 1
    assert sent(gateway) == [TWO_PARTS]


def test_a_single_sends_message_keeps_its_braces(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--to", "0412 345 678", "Code {{A1}} for {name}")
    assert done.returncode == 0, done.stderr
    assert sent(gateway) == ["Code {{A1}} for {name}"]
