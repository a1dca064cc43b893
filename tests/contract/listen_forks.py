"""`gwdesk listen` started hundreds of times cheaply: each a process of its own, forked
from one that has imported gwdesk already.

A fresh interpreter spends most of a second importing gwdesk (aiohttp, the gateway
client, psycopg); a test that starts the receiver 200 times would spend minutes of CPU
on that alone. Here one helper process (run as a script: `python listen_forks.py`)
imports it once, starts no thread, and forks a child per run that calls `gwdesk`'s own
`main`: each run is a new process with its own threads, sockets, signal handlers and
store, exactly as `gwdesk listen` runs, only its imports already done. Its stdout and
stderr are FIFOs the test reads; the helper reports the child's pid, then its exit
status and the moment it ended (CLOCK_MONOTONIC, which the test's clock shares).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Ended:
    status: int
    at: float
    """`time.monotonic()` when the helper saw it end."""
    errors: str
    """What it wrote on stderr."""


class ForkedListen:
    """One forked `gwdesk listen`: its first stdout line, its stderr, its end."""

    def __init__(self, pid: int, out: IO[str], err: IO[str], ends: queue.Queue[dict[str, Any]]):
        self.pid = pid
        self._out = out
        self._err = err
        self._ends = ends
        self._errors: list[str] = []
        self._said = threading.Condition()
        self._pump = threading.Thread(target=self._read_errors, daemon=True)
        self._pump.start()

    def _read_errors(self) -> None:
        for line in self._err:
            with self._said:
                self._errors.append(line)
                self._said.notify_all()

    def note(self, containing: str, timeout: float = 15.0) -> None:
        """Wait for a stderr line holding `containing`."""
        with self._said:
            found = self._said.wait_for(
                lambda: any(containing in line for line in self._errors), timeout
            )
        assert found, f"no note with {containing!r}: {''.join(self._errors)}"

    def line(self) -> str:
        """The next stdout line ('' once it has ended)."""
        return self._out.readline().rstrip("\n")

    def ended(self, timeout: float) -> Ended:
        try:
            end = self._ends.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"gwdesk listen (pid {self.pid}) still runs") from None
        assert end["pid"] == self.pid
        self._pump.join(10)
        self._out.close()
        self._err.close()
        return Ended(end["status"], end["at"], "".join(self._errors))


class Forks:
    """The test's side of the helper: `start(*args, env=…)` forks one `gwdesk listen`."""

    def __init__(self, helper: subprocess.Popen[str], folder: Path) -> None:
        self.helper = helper
        self.folder = folder
        self._replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self._ends: queue.Queue[dict[str, Any]] = queue.Queue()
        self._runs = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.helper.stdout is not None
        for line in self.helper.stdout:
            message = json.loads(line)
            (self._ends if "status" in message else self._replies).put(message)

    def start(self, *args: str, env: dict[str, str]) -> ForkedListen:
        self._runs += 1
        out, err = self.folder / f"out{self._runs}", self.folder / f"err{self._runs}"
        os.mkfifo(out)
        os.mkfifo(err)
        request = {"argv": ["listen", *args], "env": env, "out": str(out), "err": str(err)}
        assert self.helper.stdin is not None
        self.helper.stdin.write(json.dumps(request) + "\n")
        self.helper.stdin.flush()
        pid = self._replies.get(timeout=30)["pid"]
        reading_out = open(out, encoding="utf-8")  # noqa: SIM115 - closed by `ended`
        reading_err = open(err, encoding="utf-8")  # noqa: SIM115
        out.unlink()
        err.unlink()
        return ForkedListen(pid, reading_out, reading_err, self._ends)


@contextmanager
def forked_listens() -> Iterator[Forks]:
    """The helper process, stopped (with whatever it forked) at the end."""
    folder = Path(tempfile.mkdtemp(prefix="gwdesk-forks-"))
    helper = subprocess.Popen(
        [sys.executable, __file__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        yield Forks(helper, folder)
    finally:
        assert helper.stdin is not None
        helper.stdin.close()
        try:
            helper.wait(timeout=30)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
        for leftover in folder.iterdir():
            leftover.unlink()
        folder.rmdir()


# ---- the helper process --------------------------------------------------------------------


def _child(request: dict[str, Any]) -> int:
    """In the fork: the FIFOs as stdout and stderr, the run's environment, then `gwdesk`."""
    from gwdesk.cli import main

    out = os.open(request["out"], os.O_WRONLY)
    err = os.open(request["err"], os.O_WRONLY)
    null = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin = open(0, encoding="utf-8")  # noqa: SIM115 - the process's own, to its end
    sys.stdout = open(1, "w", encoding="utf-8")  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 - as Python's own
    try:
        code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 70
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError):
            stream.flush()
    return code


def _helper() -> None:
    import gwdesk.cli.listen
    import gwdesk.gateway.service
    import gwdesk.store.postgres  # noqa: F401

    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            os._exit(_child(request))
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        at = time.monotonic()
        print(
            json.dumps({"pid": pid, "status": os.waitstatus_to_exitcode(status), "at": at}),
            flush=True,
        )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _helper()
