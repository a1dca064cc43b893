"""A real Secret Service for tests: gnome-keyring-daemon on a private D-Bus session bus.

The bus has its own configuration with no service directories, so nothing can be
auto-activated on it: the only Secret Service there is the daemon started here, whose
login keyring is created and unlocked with a throw-away password given on stdin. Both
processes are children of the test and are ended by their handles.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

UNLOCK_PASSWORD: Final = "keyring-unlock"
BUS_CONFIG: Final = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def missing_programs() -> list[str]:
    return [p for p in ("dbus-daemon", "gnome-keyring-daemon") if shutil.which(p) is None]


def _owned(address: str) -> bool:
    from jeepney import DBus, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    with open_dbus_connection(bus=address) as conn:
        reply = conn.send_and_get_reply(
            new_method_call(DBus(), "NameHasOwner", "s", ("org.freedesktop.secrets",))
        )
        return bool(reply.body[0])


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextmanager
def private_secret_service(base: Path) -> Iterator[dict[str, str]]:
    """Yield the environment (bus address, home) under which the Secret Service answers."""
    home = base / "home"
    runtime = base / "run"
    for folder in (home, runtime):
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
    config = base / "bus.conf"
    config.write_text(BUS_CONFIG.format(dir=runtime), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    bus = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    daemon: subprocess.Popen[bytes] | None = None
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().decode().strip()
        if not address:
            raise RuntimeError("dbus-daemon printed no address")
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        daemon = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert daemon.stdin is not None
        daemon.stdin.write(UNLOCK_PASSWORD.encode())
        daemon.stdin.close()
        deadline = time.monotonic() + 15
        while not _owned(address):
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("gnome-keyring-daemon did not take the Secret Service name")
            time.sleep(0.05)
        yield env
    finally:
        if daemon is not None:
            _stop(daemon)
        _stop(bus)
