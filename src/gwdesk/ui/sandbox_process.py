"""The embedded sandbox gateway as a child process of the console.

A child process, not a thread: the sandbox's work (batch loading, webhooks, a
million-row log listing) must never compete with the GUI thread for the GIL.
Its first stdout line names its addresses; closing the console stops it, and it
exits on its own when the console dies (its stdin closes). The console tells the
child which demo account to serve (`SANDBOX_ACCOUNT`), so the two agree without
the console importing the sandbox's code.

A child that dies (not stopped by the console) is restarted on the same database,
on the same port when it can be bound again (`restart`), within a budget
(`RestartBudget`: a child that keeps dying is given up on, and the console says so);
the controller waits for its exit on a thread of its own, never polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from gwdesk.frozen import SANDBOX_SUBCOMMAND, is_frozen
from gwdesk.private_files import open_private, private_folder
from gwdesk.ui.tasks import off_thread

#: The hidden first argument that makes a frozen gwdesk run as `gwdesk-sandbox`
#: (`gwdesk.launcher` hands it on).


@dataclass(frozen=True, slots=True)
class SandboxAccount:
    """The embedded sandbox's demo account, as the console asks its child to serve it."""

    username: str = "demo"
    password: str = "demo"  # noqa: S105 - the sandbox's public demo account, not a secret
    namespace: str = "http://sandbox.gwdesk.local/Lodge"
    timezone: str = "Australia/Sydney"

    def options(self) -> list[str]:
        return [
            "--user", self.username,
            "--password", self.password,
            "--namespace", self.namespace,
            "--timezone", self.timezone,
        ]  # fmt: skip


SANDBOX_ACCOUNT: Final = SandboxAccount()


class SandboxStartError(RuntimeError):
    """The sandbox did not come up; the message says why, in plain words."""


@dataclass(frozen=True, slots=True)
class SandboxAddresses:
    rest_url: str
    lodge_url: str


#: Restarts of a child that died allowed within `RESTART_WINDOW` seconds, then given up.
MAX_RESTARTS: Final = 3
RESTART_WINDOW: Final = 60.0


class RestartBudget:
    """At most `limit` restarts within `window` seconds: a child that keeps dying (a
    broken database, a port war) is not restarted for ever."""

    def __init__(
        self,
        limit: int = MAX_RESTARTS,
        window: float = RESTART_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._recent: deque[float] = deque()

    def allow(self) -> bool:
        """Whether one more restart is allowed now (counted if it is)."""
        now = self.clock()
        while self._recent and now - self._recent[0] >= self.window:
            self._recent.popleft()
        if len(self._recent) >= self.limit:
            return False
        self._recent.append(now)
        return True


def describe_exit(code: int | None) -> str:
    """`exit code 1`, or `killed by SIGKILL` for a signal (a negative code)."""
    if code is None:
        return "exit code unknown"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"exit code {code}: killed by {name}"
    return f"exit code {code}"


def sandbox_command(db: Path, *extra: str, port: int = 0) -> list[str]:
    """The command line that runs `gwdesk-sandbox serve` with this interpreter (or frozen app).

    A frozen app's `sys.executable` is the app itself, which takes a hidden
    subcommand for this (`gwdesk.launcher`); `-m` would mean nothing to it.
    """
    if is_frozen():
        base = [sys.executable, SANDBOX_SUBCOMMAND]
    else:
        base = [sys.executable, "-m", "gwdesk.sandbox"]
    return [
        *base,
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--db",
        str(db),
        "--exit-with-parent",
        *SANDBOX_ACCOUNT.options(),
        *extra,
    ]


def parse_banner(line: str) -> SandboxAddresses:
    """Read `rest=URL lodge=URL`, the one line the sandbox prints once it listens."""
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    if "rest" not in fields or "lodge" not in fields:
        raise SandboxStartError(f"the sandbox printed an unexpected first line: {line[:200]!r}")
    return SandboxAddresses(fields["rest"], fields["lodge"])


class SandboxProcess:
    """Start, watch and stop the child sandbox."""

    def __init__(self, db: Path, *extra_args: str) -> None:
        self.db = db
        self.extra_args = extra_args
        self._process: subprocess.Popen[str] | None = None
        self.addresses: SandboxAddresses | None = None
        self.start_timeout = 30.0
        self.stopped = False
        """The console stopped it (its exit is no death to restart after)."""

    @property
    def pid(self) -> int | None:
        """The child's process id while it is ours (for logs and tests)."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def port(self) -> int:
        """The port it listens on (0 before it started)."""
        if self.addresses is None:
            return 0
        return urlsplit(self.addresses.rest_url).port or 0

    def wait(self) -> int | None:
        """Block until the child exits; its exit code (None: there was none). For a
        thread of its own: it may wait for the console's life."""
        process = self._process
        return None if process is None else process.wait()

    async def restart(self) -> bool:
        """Start a child that died again, on the same database and, if it can be bound
        again, the same port; True when the addresses changed (the session must follow).
        `SandboxStartError` when it cannot start at all."""
        old, port = self.addresses, self.port
        dead, self._process = self._process, None
        if dead is not None:
            _close_streams(dead)
        try:
            await self.start(port=port)
        except SandboxStartError:
            if not port:
                raise
            await self.start(port=0)  # the port was taken meanwhile: any port
        return self.addresses != old

    def _spawn(self, port: int = 0) -> subprocess.Popen[str]:
        private_folder(self.db.parent)
        # stderr goes to a file, not a pipe nobody drains (a full pipe would stall the child).
        with open_private(self.log_path, "a", encoding="utf-8") as log:
            return subprocess.Popen(  # noqa: S603 - our own interpreter and module
                sandbox_command(self.db, *self.extra_args, port=port),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                encoding="utf-8",
            )

    async def start(self, *, port: int = 0) -> SandboxAddresses:
        """Launch the child (on `port`, 0: any) and wait (off the event loop) for its
        banner line."""
        self.stopped = False
        process = await off_thread(lambda: self._spawn(port))
        self._process = process
        stdout = process.stdout
        assert stdout is not None
        try:
            line = await asyncio.wait_for(off_thread(stdout.readline), self.start_timeout)
        except TimeoutError:
            self.stop()
            raise SandboxStartError(
                f"the sandbox did not start within {self.start_timeout:.0f} s"
            ) from None
        if not line:
            stderr = await off_thread(self._drain_stderr)
            self.stop()
            raise SandboxStartError(f"the sandbox exited at start: {stderr[-500:].strip()}")
        self.addresses = parse_banner(line)
        return self.addresses

    @property
    def log_path(self) -> Path:
        return self.db.with_suffix(".log")

    def _drain_stderr(self) -> str:
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the child to stop (SIGTERM), and kill it if it does not."""
        self.stopped = True
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
        _close_streams(process)


def _close_streams(process: subprocess.Popen[str]) -> None:
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
