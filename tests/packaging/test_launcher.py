"""The single entry point, exercised from source (`python -m gwdesk.launcher`).

`gwdesk` is the launcher: the console, a command, or (in a frozen app) the sandbox
child. In a PyInstaller build `sys.executable` is the app itself; the console starts
its sandbox child as that executable with the hidden subcommand `sandbox`. Here a
small shell script stands in for the frozen executable, so the same code path runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gwdesk import __version__
from gwdesk.frozen import SANDBOX_SUBCOMMAND
from gwdesk.ui.sandbox_process import SandboxProcess, sandbox_command
from tests.unit.test_lazy_imports import imported_after

LAUNCHER = [sys.executable, "-m", "gwdesk.launcher"]


def test_launcher_without_the_hidden_subcommand_is_gwdesk() -> None:
    done = subprocess.run([*LAUNCHER, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"gwdesk {__version__}"


def test_the_console_imports_neither_the_launcher_nor_the_sandbox_nor_the_commands() -> None:
    modules = ("gwdesk.launcher", "gwdesk.sandbox", "gwdesk.cli")
    assert imported_after("import gwdesk.ui.console", modules) == []


def test_a_command_goes_to_the_command_line_without_the_console() -> None:
    # No gateway named: the command line's usage error (exit 2), on stderr.
    statement = "from gwdesk.launcher import main; assert main(['balance']) == 2"
    assert imported_after(statement, ("gwdesk.cli", "gwdesk.ui.app", "PySide6")) == ["gwdesk.cli"]


def test_launcher_with_the_hidden_subcommand_is_gwdesk_sandbox() -> None:
    process = subprocess.Popen(
        [*LAUNCHER, SANDBOX_SUBCOMMAND, "serve", "--port", "0", "--db", ":memory:",
         "--exit-with-parent"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdin is not None
        banner = process.stdout.readline()
        assert banner.startswith("rest=http://127.0.0.1:"), banner
        process.stdin.close()  # the parent "dies": --exit-with-parent ends it
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def frozen_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Pretend to be frozen: `sys.executable` is a script that runs the launcher."""
    calls = tmp_path / "calls"
    app = tmp_path / "gwdesk"
    app.write_text(
        f'#!/bin/sh\necho "$1" >> "{calls}"\nexec "{sys.executable}" -m gwdesk.launcher "$@"\n'
    )
    app.chmod(0o755)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(app))
    return app


def test_frozen_sandbox_command_is_the_app_with_the_hidden_subcommand(
    frozen_app: Path, tmp_path: Path
) -> None:
    command = sandbox_command(tmp_path / "s.sqlite3")
    assert command[:3] == [str(frozen_app), SANDBOX_SUBCOMMAND, "serve"]


async def test_frozen_console_starts_a_working_sandbox_as_its_own_executable(
    frozen_app: Path, tmp_path: Path
) -> None:
    child = SandboxProcess(tmp_path / "sandbox" / "sandbox.sqlite3")
    try:
        addresses = await child.start()
        async with httpx.AsyncClient(auth=("demo", "demo"), timeout=10) as client:
            answer = await client.post(f"{addresses.rest_url}/v2/account/balance")
        assert answer.status_code == 200, answer.text
    finally:
        child.stop()
    assert (tmp_path / "calls").read_text().split() == [SANDBOX_SUBCOMMAND]
    assert not child.running
