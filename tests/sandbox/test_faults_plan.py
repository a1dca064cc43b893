"""The fault spec grammar, determinism under a seed, and runtime control of the plan."""

from __future__ import annotations

import httpx
import pytest

from gwdesk.sandbox.cli import main
from gwdesk.sandbox.config import SandboxConfig
from gwdesk.sandbox.faults import FaultSpecError, parse_spec
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.sandbox.faults_support import client, lodged, set_faults, simple_send

MIXED = "simple_send:503=0.15,429=0.1@2,500=0.1,html=0.05,malformed=0.1,drop_before=0.05"


def outcomes(sandbox: SandboxThread, count: int) -> list[str]:
    """What each of `count` sends got: a status and fault header, or a dropped connection."""
    seen = []
    with client(sandbox) as http:
        for _ in range(count):
            try:
                response = simple_send(http)
            except (httpx.RemoteProtocolError, httpx.ReadError):
                seen.append("dropped")
                continue
            seen.append(f"{response.status_code}:{response.headers.get('X-Sandbox-Fault', '')}")
    return seen


# ---- grammar --------------------------------------------------------------------------------


def test_a_spec_names_endpoints_effects_and_arguments() -> None:
    spec = parse_spec(
        "send+simple_send:503=0.1@30,drop_after=0.05; *:latency=0.01-0.05; logs:slow=0.05@3"
    )
    plan = spec.describe()
    assert plan["send"] == {
        "latency": [0.01, 0.05],
        "503": {"rate": 0.1, "arg": 30},
        "drop_after": 0.05,
    }
    assert plan["logs"] == {"latency": [0.01, 0.05], "slow": {"rate": 0.05, "arg": 3}}
    assert plan["token"] == {"latency": [0.01, 0.05]}
    assert "wsdl" not in plan


def test_an_empty_spec_injects_nothing() -> None:
    assert parse_spec("").endpoints == {}
    assert parse_spec("  ;  ").endpoints == {}


def test_a_named_endpoint_beats_the_wildcard_whatever_the_order() -> None:
    plan = parse_spec("send:503=0.2;*:503=0.9").describe()
    assert plan["send"] == {"503": 0.2}
    assert plan["status"] == {"503": 0.9}


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("send", "needs 'endpoint:effect=value'"),
        ("sned:503=0.1", "unknown endpoint 'sned'"),
        ("send:502=0.1", "unknown effect '502'"),
        ("send:503", "needs a value"),
        ("send:503=lots", "must be a number"),
        ("send:503=1.5", "from 0 to 1"),
        ("send:503=nan", "finite"),
        ("send:503=0.6,500=0.6", "add up to 1.2"),
        ("send:latency=0.5-0.1", "runs backwards"),
        ("send:latency=-1", "seconds or a range LOW-HIGH"),
        ("send:latency=abc", "must be a number"),
        ("send:slow=0.1@9999", "from 0 to 600"),
        ("send:429=0.1@1.5", "whole seconds"),
        ("send:html=0.1@404", "html takes a status"),
        ("send:drop_after=0.1@3", "takes no @ argument"),
        ("send:", "names no effect"),
    ],
)
def test_a_bad_spec_is_refused_with_its_reason(spec: str, reason: str) -> None:
    with pytest.raises(FaultSpecError) as caught:
        parse_spec(spec)
    assert reason in str(caught.value)


def test_a_sandbox_with_a_bad_spec_does_not_start() -> None:
    with pytest.raises(FaultSpecError, match="unknown endpoint"):
        SandboxThread(SandboxConfig(faults="nowhere:503=1")).start().stop()


def test_the_cli_refuses_a_bad_spec_before_starting(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--db", ":memory:", "--faults", "send:503=2"])
    assert exited.value.code == 2
    assert "--faults: the rate of 503 must be from 0 to 1" in capsys.readouterr().err


# ---- determinism ----------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_faults_in_the_same_order(
    sandbox_factory: SandboxFactory,
) -> None:
    first = outcomes(sandbox_factory(faults=MIXED, seed=42), 50)
    second = outcomes(sandbox_factory(faults=MIXED, seed=42), 50)
    assert first == second
    assert len(set(first)) >= 4


def test_another_seed_gives_other_faults(sandbox_factory: SandboxFactory) -> None:
    assert outcomes(sandbox_factory(faults=MIXED, seed=1), 50) != outcomes(
        sandbox_factory(faults=MIXED, seed=2), 50
    )


def test_replacing_the_plan_with_its_seed_replays_the_sequence(sandbox: SandboxThread) -> None:
    assert set_faults(sandbox, MIXED, seed=9).status_code == 200
    first = outcomes(sandbox, 30)
    assert set_faults(sandbox, MIXED, seed=9).status_code == 200
    assert outcomes(sandbox, 30) == first


# ---- runtime control ------------------------------------------------------------------------


def test_the_control_route_shows_the_spec_and_counts_each_kind(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="simple_send:503=1;status:latency=0.01", seed=5)
    with client(sandbox) as http:
        simple_send(http)
        simple_send(http)
        http.get("/v2/message/status", params={"message_id": "1"})
        state = http.get("/sandbox/faults").json()
    assert state["spec"] == "simple_send:503=1;status:latency=0.01"
    assert state["seed"] == 5
    assert state["requests"] == {"simple_send": 2, "status": 1}
    assert state["injected"]["503"] == 2
    assert state["injected"]["latency"] == 1
    assert state["injected"]["drop_after"] == 0
    assert state["by_endpoint"] == {"simple_send": {"503": 2}, "status": {"latency": 1}}


def test_putting_a_spec_replaces_the_plan_and_resets_the_counts(sandbox: SandboxThread) -> None:
    with client(sandbox) as http:
        assert simple_send(http).status_code == 200
        replaced = set_faults(sandbox, "simple_send:drop_before=1", seed=None)
        assert replaced.status_code == 200
        assert replaced.json()["requests"] == {}
        assert replaced.json()["seed"] is None
        with pytest.raises(httpx.RemoteProtocolError):
            simple_send(http)
        assert set_faults(sandbox, "").status_code == 200
        assert simple_send(http).status_code == 200
    assert lodged(sandbox) == 2


def test_putting_a_bad_spec_is_a_400_that_keeps_the_old_plan(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(faults="simple_send:503=1")
    response = set_faults(sandbox, "simple_send:503=0.7,500=0.7")
    assert response.status_code == 400
    assert response.json() == {
        "error": "Bad fault spec: the fault rates of simple_send add up to 1.4; at most 1."
    }
    with client(sandbox) as http:
        assert simple_send(http).status_code == 503


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "must be JSON"),
        (b'["send:503=1"]', 'string "spec"'),
        (b'{"spec": 5}', 'string "spec"'),
        (b'{"spec": "", "seed": "x"}', "whole number"),
        (b'{"spec": "", "seed": true}', "whole number"),
        (b'{"spec": "", "sede": 1}', "Unknown field(s): sede"),
    ],
)
def test_a_malformed_put_is_a_400_with_a_reason(
    sandbox: SandboxThread, body: bytes, reason: str
) -> None:
    response = httpx.put(
        f"{sandbox.rest_url}/sandbox/faults",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert reason in response.json()["error"]
