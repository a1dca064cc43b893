"""sd_notify without libsystemd: where the datagram goes and when the watchdog is asked for."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from gwdesk.cli.systemd_notify import SystemdNotifier


def test_without_a_notify_socket_nothing_is_sent_and_nothing_fails() -> None:
    notifier = SystemdNotifier.from_environment({})
    assert not notifier.enabled
    notifier.ready("listening")
    notifier.watchdog()
    notifier.stopping()


def test_a_socket_path_gets_the_lines_of_one_datagram(tmp_path: Path) -> None:
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as supervisor:
        supervisor.bind(str(path))
        notifier = SystemdNotifier.from_environment({"NOTIFY_SOCKET": str(path)})
        notifier.ready("listening on http://127.0.0.1:8642")
        notifier.close()
        assert supervisor.recv(4096) == b"READY=1\nSTATUS=listening on http://127.0.0.1:8642"


def test_an_at_name_is_the_abstract_namespace() -> None:
    name = f"gwdesk-unit-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as supervisor:
        supervisor.bind(b"\0" + name.encode())
        notifier = SystemdNotifier.from_environment({"NOTIFY_SOCKET": f"@{name}"})
        notifier.stopping()
        notifier.close()
        assert supervisor.recv(4096) == b"STOPPING=1\nSTATUS=stopping"


def test_a_socket_nobody_listens_on_is_logged_not_raised(tmp_path: Path) -> None:
    notifier = SystemdNotifier.from_environment({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    notifier.watchdog()
    notifier.close()


def test_the_watchdog_is_pinged_at_half_its_time() -> None:
    notifier = SystemdNotifier.from_environment(
        {"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000"}
    )
    assert notifier.watchdog_every == 15.0


def test_a_watchdog_for_another_process_or_malformed_is_not_ours() -> None:
    other = {"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}
    assert SystemdNotifier.from_environment(other).watchdog_every is None
    malformed = {"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "-5"}
    assert SystemdNotifier.from_environment(malformed).watchdog_every is None
    mine = {**other, "WATCHDOG_PID": str(os.getpid())}
    assert SystemdNotifier.from_environment(mine).watchdog_every == 15.0
