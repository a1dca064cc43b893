"""`gwdesk-sandbox serve`: the line it prints, its fault plan, and options it refuses."""

from __future__ import annotations

import re
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gwdesk.sandbox.cli import main
from tests.pki import PrivateCa


def test_serve_prints_its_addresses_and_runs_the_given_fault_plan() -> None:
    command = [
        sys.executable, "-m", "gwdesk.sandbox", "serve", "--db", ":memory:", "--port", "0",
        "--faults", "logs:503=1", "--seed", "5",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        match = re.fullmatch(r"rest=(http://127\.0\.0\.1:\d+) lodge=(\1/dotnet/Lodge\.asmx)", line)
        assert match, line
        base = match.group(1)
        faults = httpx.get(f"{base}/sandbox/faults").json()
        assert (faults["spec"], faults["seed"]) == ("logs:503=1", 5)
        assert httpx.get(f"{base}/v2/message/logs", auth=("demo", "demo")).status_code == 503
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    assert "Traceback" not in errors


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--faults", "logs:503=2"], "--faults: the rate of 503 must be from 0 to 1"),
        (["--faults", "everything:503=1"], "--faults: unknown endpoint 'everything'"),
        (["--timezone", "Sydney"], "--timezone: unknown time zone 'Sydney'"),
        (["--account-type", "gold"], "--account-type: invalid choice: 'gold'"),
        (["--port", "70000"], "--port must be from 0 to 65535"),
        (["--token-ttl", "0"], "--token-ttl must be more than 0 seconds"),
        (["--token-ttl", "inf"], "--token-ttl must be more than 0 seconds"),
        (["--webhook-retry-base", "-1"], "--webhook-retry-base must be from 0 to 3600"),
        (["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-key", "key.pem"], "--tls-cert and --tls-key go together"),
        (
            ["--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"],
            "--tls-cert/--tls-key: the TLS certificate '/nonexistent/cert.pem' is not a file",
        ),
    ],
)
def test_serve_refuses_a_bad_option_before_starting(
    capsys: pytest.CaptureFixture[str], args: list[str], reason: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--db", ":memory:", *args])
    assert exited.value.code == 2
    assert reason in capsys.readouterr().err


def test_serve_says_so_when_it_cannot_listen(capsys: pytest.CaptureFixture[str]) -> None:
    # 203.0.113.1 is a documentation address: no interface of this machine has it.
    code = main(["serve", "--db", ":memory:", "--host", "203.0.113.1", "--port", "8080"])
    assert code == 1
    assert capsys.readouterr().err.startswith("gwdesk-sandbox: cannot serve:")


def test_serve_with_account_type_postpaid_serves_an_account_without_credits() -> None:
    command = [
        sys.executable, "-m", "gwdesk.sandbox", "serve", "--db", ":memory:",
        "--account-type", "postpaid",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base = process.stdout.readline().split()[0].removeprefix("rest=")
        info = httpx.get(f"{base}/v2/Account/Info", auth=("demo", "demo")).json()
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert info == {"AccountName": "demo", "AccountStatus": "Active", "AccountType": "Postpaid"}


def test_serve_with_exit_with_parent_stops_when_its_stdin_closes() -> None:
    command = [
        sys.executable, "-m", "gwdesk.sandbox", "serve", "--db", ":memory:", "--exit-with-parent",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdin is not None
        assert process.stdout.readline().startswith("rest=")
        assert process.poll() is None
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_with_a_certificate_prints_https_addresses_that_verify(tmp_path: Path) -> None:
    ca = PrivateCa(tmp_path)
    cert, key = ca.issue()
    command = [
        sys.executable, "-m", "gwdesk.sandbox", "serve", "--db", ":memory:",
        "--tls-cert", str(cert), "--tls-key", str(key),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        match = re.fullmatch(r"rest=(https://127\.0\.0\.1:\d+) lodge=(\1/dotnet/Lodge\.asmx)", line)
        assert match, line
        trusted = ssl.create_default_context(cafile=str(ca.path))
        answer = httpx.get(f"{match.group(2)}?WSDL", verify=trusted)
        assert answer.status_code == 200
        assert f'location="{match.group(2)}"' in answer.text
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors


def test_serve_refuses_a_key_that_does_not_match_its_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ca = PrivateCa(tmp_path)
    cert, _ = ca.issue("one")
    _, other_key = ca.issue("two")
    args = ["serve", "--db", ":memory:", "--tls-cert", str(cert), "--tls-key", str(other_key)]
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert "not a PEM certificate and its matching, unencrypted private key" in (
        capsys.readouterr().err
    )
