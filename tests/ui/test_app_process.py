"""`gwdesk` as an operator starts it: a real process, offscreen, with its sandbox child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

GWDESK = Path(sys.executable).with_name("gwdesk")


@pytest.fixture
def home(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Fresh config and data dirs for the child; afterwards no process may still use them."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GWDESK_CONFIG_DIR": str(tmp_path / "config"),
        "GWDESK_DATA_DIR": str(tmp_path / "data"),
    }
    yield env
    for pid in processes_mentioning(str(tmp_path)):  # only if a test failed: clean up
        os.kill(pid, signal.SIGKILL)


def processes_mentioning(text: str) -> list[int]:
    """Processes whose command line mentions `text` (the sandbox child names its database)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if text in command:
            found.append(int(entry.name))
    return found


def wait_for_line(path: Path, text: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.is_file() and text in path.read_text(encoding="utf-8", errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} never said {text!r}")


def gone_soon(text: str, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while processes_mentioning(text):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_quit_after_runs_the_console_on_the_sandbox_and_exits_cleanly(
    home: dict[str, str],
) -> None:
    done = subprocess.run(
        [str(GWDESK), "--sandbox", "--quit-after", "1"],
        env=home,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    data = Path(home["GWDESK_DATA_DIR"])
    log = (data / "gwdesk.log").read_text(encoding="utf-8")
    assert "connected to the sandbox gateway at http://127.0.0.1:" in log
    assert "ERROR" not in log
    assert gone_soon(str(data))
    assert (Path(home["GWDESK_CONFIG_DIR"]) / "console.ini").is_file()  # window state saved


def test_plain_gwdesk_opens_the_console_on_the_sandbox_and_ctrl_c_quits_cleanly(
    home: dict[str, str],
) -> None:
    data = Path(home["GWDESK_DATA_DIR"])
    console = subprocess.Popen(
        [str(GWDESK)], env=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_line(data / "gwdesk.log", "connected to the sandbox gateway")
        assert len(processes_mentioning(str(data / "sandbox"))) == 1
        console.send_signal(signal.SIGINT)
        _out, err = console.communicate(timeout=30)
    finally:
        if console.poll() is None:
            console.kill()
            console.communicate()
    assert console.returncode == 0, err
    assert "Traceback" not in err
    assert gone_soon(str(data))


def test_an_unknown_console_option_is_a_usage_error_not_a_traceback(
    home: dict[str, str],
) -> None:
    done = subprocess.run(
        [str(GWDESK), "--sandbox", "--colour", "pink"],
        env=home,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "unrecognized arguments: --colour pink" in done.stderr
    assert "Traceback" not in done.stderr
