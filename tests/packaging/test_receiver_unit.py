"""The receiver's systemd unit (`packaging/systemd/gwdesk-receiver.service`): valid by
`systemd-analyze verify`, a `Type=notify` service with a watchdog and hardening, an
`ExecStart` that `gwdesk listen` accepts, and the one docs/team.md installs.

`systemd-analyze` comes from Debian's systemd package (it needs no running systemd),
which packaging/dev installs for the test command; without it the check skips, saying so.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from gwdesk.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "packaging" / "systemd" / "gwdesk-receiver.service"


def settings() -> dict[str, list[str]]:
    """The unit's `Key=value` lines (continuation lines joined), every value of a key."""
    found: dict[str, list[str]] = {}
    text = UNIT.read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        if line.strip() and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def test_systemd_analyze_verifies_the_unit_without_a_warning(tmp_path: Path) -> None:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip(
            "systemd-analyze is not installed (apt-get install systemd; packaging/dev does)"
        )
    checked = subprocess.run(
        [tool, "verify", str(UNIT)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert (checked.returncode, checked.stdout + checked.stderr) == (0, "")


def test_it_is_a_notify_service_with_a_watchdog_restarted_on_failure() -> None:
    unit = settings()
    assert unit["Type"] == ["notify"]
    assert unit["NotifyAccess"] == ["main"]
    assert int(unit["WatchdogSec"][0]) > 0
    assert unit["Restart"] == ["on-failure"]


def test_it_runs_as_its_own_user_with_the_system_read_only() -> None:
    unit = settings()
    assert unit["User"] == ["gwdesk"]
    assert unit["NoNewPrivileges"] == ["yes"]
    assert unit["ProtectSystem"] == ["strict"]
    assert unit["PrivateTmp"] == ["yes"]
    assert unit["ReadWritePaths"] == ["/var/lib/gwdesk"]


def test_its_command_is_one_gwdesk_listen_accepts() -> None:
    command = shlex.split(settings()["ExecStart"][0])
    assert Path(command[0]).name == "gwdesk"
    args = build_parser(command="listen").parse_args(command[1:])
    assert (args.metrics, args.log_format, args.quiet) == (("127.0.0.1", 9464), "json", True)


def test_the_team_guide_installs_this_unit() -> None:
    guide = (ROOT / "docs" / "team.md").read_text(encoding="utf-8")
    assert "packaging/systemd/gwdesk-receiver.service" in guide
    assert "Type=simple" not in guide
