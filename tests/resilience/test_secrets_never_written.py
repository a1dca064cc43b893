"""Real flows with a distinctive password: neither it nor the OAuth token lands anywhere.

After the CLI, the gateway service and the console have sent, failed and logged, every
file under the config and data dirs (profiles, SQLite stores with their -wal and -shm
files, the log file), everything printed, every log record, and the reprs of the
objects and errors involved are searched for the password (and its Basic encoding)
and for the access token. Tokens of CLI subprocesses are not known to the test: any
token-shaped string whose digest the sandbox issued counts as a leak.
"""

from __future__ import annotations

import base64
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import AuthenticationError
from gwdesk.gateway.service import GatewayService
from gwdesk.paths import AppPaths
from gwdesk.profiles import ProfileStore
from gwdesk.sandbox.db import token_digest
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.console import configure_logging
from tests.conftest import SandboxFactory
from tests.contract.rest_support import send_one, sending_with
from tests.ui.conftest import (  # noqa: F401 - the console's fixtures, used here too
    UiBundle,
    ui,
)
from tests.ui.send_support import fill, send_and_wait, send_tab

PASSWORD = "Pw-5ecret-9f3a"
WRONG_PASSWORD = "Pw-wr0ng-41d7"
USER = "ops"
GWDESK = str(Path(sys.executable).with_name("gwdesk"))
TOKEN_SHAPE = re.compile(rb"[A-Za-z0-9_-]{43,}")
"""`secrets.token_urlsafe(32)`, the sandbox's tokens, possibly inside a longer run."""


def secret_forms(*passwords: str) -> list[bytes]:
    """A password as text and inside a Basic authorization header."""
    forms = []
    for password in passwords:
        forms.append(password.encode())
        forms.append(base64.b64encode(f"{USER}:{password}".encode()))
    return forms


def hermetic_files() -> list[Path]:
    roots = [Path(os.environ["GWDESK_CONFIG_DIR"]), Path(os.environ["GWDESK_DATA_DIR"])]
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def leaks(secrets: Iterable[bytes], texts: dict[str, bytes]) -> list[str]:
    return [
        f"{where}: {secret!r}"
        for where, body in texts.items()
        for secret in secrets
        if secret in body
    ]


def file_texts() -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in hermetic_files()}


def issued_tokens_in(sandbox: SandboxThread, texts: dict[str, bytes]) -> list[str]:
    """Where a token the sandbox issued appears (every 43-character window is tried)."""
    issued = {bytes(row[0]) for row in sandbox.query("SELECT token_hash FROM tokens")}
    found = []
    for where, body in texts.items():
        for run in TOKEN_SHAPE.finditer(body):
            chunk = run.group()
            for start in range(len(chunk) - 42):
                if token_digest(chunk[start : start + 43].decode()) in issued:
                    found.append(where)
    return found


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[(USER, PASSWORD)])


@pytest.fixture
def profile(gateway: SandboxThread) -> Profile:
    saved = Profile(name="leak-check", rest_url=gateway.rest_url, username=USER)
    ProfileStore().save(saved)
    return saved


@pytest.fixture
def gwdesk_log() -> Iterator[Path]:
    """The console's own log file, at INFO as it runs, for the length of a test."""
    paths = AppPaths.default()
    root = logging.getLogger("gwdesk")
    before, level = list(root.handlers), root.level
    configure_logging(paths)
    yield paths.log_file
    for handler in root.handlers:
        if handler not in before:
            handler.close()
            root.removeHandler(handler)
    root.setLevel(level)


def cli(*args: str, password: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GWDESK_PASSWORD": password}
    return subprocess.run([GWDESK, *args], capture_output=True, env=env, timeout=60)


def test_cli_sends_status_outbox_and_a_refused_login_leave_no_secret(
    gateway: SandboxThread, profile: Profile
) -> None:
    runs = {
        "send": cli(
            "send", "--profile", profile.name, "--to", "0412345678", "Hi", password=PASSWORD
        ),
        "send -v --json": cli(
            "send",
            "-v",
            "--json",
            "--profile",
            profile.name,
            "--to",
            "0412345679",
            "Hi",
            password=PASSWORD,
        ),
        "status": cli(
            "status", "-v", "--profile", profile.name, "--external-id", "x-1", password=PASSWORD
        ),
        "outbox": cli("outbox", "list", "--profile", profile.name, password=PASSWORD),
        "wrong": cli(
            "send",
            "-v",
            "--profile",
            profile.name,
            "--to",
            "0412345678",
            "Hi",
            password=WRONG_PASSWORD,
        ),
    }
    assert [r.returncode for r in runs.values()] == [0, 0, 0, 0, 3], runs["wrong"].stderr
    assert gateway.query("SELECT COUNT(*) FROM tokens")[0][0] >= 3
    printed = {
        f"{name} {stream}": getattr(done, stream)
        for name, done in runs.items()
        for stream in ("stdout", "stderr")
    }
    texts = {**file_texts(), **printed}
    assert any(p.endswith(".sqlite3-wal") or p.endswith(".sqlite3") for p in texts)
    assert leaks(secret_forms(PASSWORD, WRONG_PASSWORD), texts) == []
    assert issued_tokens_in(gateway, texts) == []


async def test_service_sends_and_a_refused_login_leave_no_secret(
    gateway: SandboxThread,
    profile: Profile,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    folder = AppPaths.default().data  # the store is searched too
    async with (
        GatewayService(profile, Secret(PASSWORD)) as service,
        sending_with(service, folder) as sending,
    ):
        message = (await send_one(sending, "Hello", "0412345678")).sent[0].message
        assert message is not None
        await service.status(message_id=message.message_id)
        token = (await service.rest.tokens.get()).reveal()
        shown = [repr(service), repr(profile), repr(service.credentials), repr(message)]
    async with (
        GatewayService(profile, Secret(WRONG_PASSWORD)) as refused,
        sending_with(refused, folder) as sending,
    ):
        outcome = await send_one(sending, "Hello", "0412345678")
        shown += [repr(refused), repr(refused.credentials), repr(outcome)]
    error = outcome.error
    assert isinstance(error, AuthenticationError)
    shown += [
        repr(error),
        str(error),
        repr(error.args),
        repr(error.__cause__),
        repr(error.__context__),
    ]
    out, err = capfd.readouterr()
    texts = {
        **file_texts(),
        "stdout": out.encode(),
        "stderr": err.encode(),
        "log records": "\n".join(r.getMessage() for r in caplog.records).encode(),
        "reprs": "\n".join(shown).encode(),
    }
    forms = [*secret_forms(PASSWORD, WRONG_PASSWORD), token.encode()]
    assert leaks(forms, texts) == []


async def test_console_send_and_an_authentication_failure_leave_no_secret(
    ui: UiBundle,  # noqa: F811 - the imported fixture
    gateway: SandboxThread,
    profile: Profile,
    qtbot: QtBot,
    gwdesk_log: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    tab = await send_tab(ui, qtbot)
    await ui.session.activate(profile, Secret(PASSWORD))
    fill(tab, "0412345678", "From the console")
    await send_and_wait(tab)
    assert ui.session.service is not None
    token = (await ui.session.service.rest.tokens.get()).reveal()
    sent = tab.status_label.text()
    await ui.session.activate(profile, Secret(WRONG_PASSWORD))
    fill(tab, "0412345679", "This one is refused")
    await send_and_wait(tab)
    refused = tab.status_label.text()
    assert refused.startswith("Not sent:")
    assert "authenticat" in refused.lower() or "password" in refused.lower()
    await ui.session.close()
    logging.getLogger("gwdesk").info("console leak check done")
    out, err = capfd.readouterr()
    entries = tab.history.entries()
    texts = {
        **file_texts(),
        "stdout": out.encode(),
        "stderr": err.encode(),
        "log records": "\n".join(r.getMessage() for r in caplog.records).encode(),
        "screen": "\n".join([sent, refused, *(repr(e) for e in entries)]).encode(),
        "errors reported": repr(ui.reporter.errors).encode(),
    }
    assert str(gwdesk_log) in texts
    forms = [*secret_forms(PASSWORD, WRONG_PASSWORD), token.encode()]
    assert leaks(forms, texts) == []
