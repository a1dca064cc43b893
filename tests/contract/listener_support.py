"""A reply listener on loopback for tests, storing into a real profile file."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from gwdesk.replies import ListenerInfo, ListenerLimits, ReplyInbox, ReplyListener
from gwdesk.replies.template import ReplyTemplate
from gwdesk.store.replies import ReplyStore
from gwdesk.store.shared import SharedData

GWDESK = str(Path(sys.executable).with_name("gwdesk"))
SYDNEY = ZoneInfo("Australia/Sydney")
CUSTOMER = "61412345678"
OURS = "61400000000"


@dataclass
class Running:
    store: ReplyStore
    inbox: ReplyInbox
    listener: ReplyListener
    info: ListenerInfo

    @property
    def template(self) -> ReplyTemplate:
        return self.info.template

    def url(self, **values: str) -> str:
        """A filled-in reply webhook URL, as the gateway would call it."""
        return self.template.fill(webhook_values(**values))


def webhook_values(**overrides: str) -> dict[str, str]:
    values = {
        "FROM": CUSTOMER,
        "TO": OURS,
        "MSG": "Yes please",
        "SENTDTS": "05-Jan-2024 14:04:05",
        "RCVDDTS": "05-Jan-2024 14:04:07",
    }
    values.update(overrides)
    return values


@contextmanager
def running_listener(
    data: Path | SharedData,
    *,
    local: Path | None = None,
    busy_timeout: float = 2.0,
    **options: Any,
) -> Iterator[Running]:
    """A started listener (ephemeral port unless given) with its store and inbox; `data`:
    where replies are stored (a profile's file, or a team's server with the `local` file)."""
    options.setdefault("port", 0)
    options.setdefault("limits", ListenerLimits())
    store = ReplyStore(data, local=local, busy_timeout=busy_timeout)
    inbox = ReplyInbox(store).start()
    listener = ReplyListener(inbox, options.pop("zone", SYDNEY), **options)
    try:
        info = listener.start()
        yield Running(store, inbox, listener, info)
    finally:
        listener.stop()
        inbox.close()
        store.close()


# ---- `gwdesk listen` as a real process -----------------------------------------------------


@dataclass
class Listening:
    process: subprocess.Popen[str]
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    notes: queue.Queue[str] = field(default_factory=queue.Queue)
    """stderr lines as they come (`note` waits for one)."""
    _seen_notes: list[str] = field(default_factory=list)
    _pumps: list[threading.Thread] = field(default_factory=list)

    def line(self, timeout: float = 10.0) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout} s") from None

    def note(self, containing: str, timeout: float = 10.0) -> str:
        """The first stderr line holding `containing`, waiting for it to be written."""
        for seen in self._seen_notes:
            if containing in seen:
                return seen
        while True:
            try:
                line = self.notes.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no note with {containing!r} within {timeout} s") from None
            self._seen_notes.append(line)
            if containing in line:
                return line

    def stop(self, how: int = signal.SIGINT) -> tuple[int, str]:
        self.process.send_signal(how)
        code = self.process.wait(timeout=15)
        for pump in self._pumps:
            pump.join(timeout=15)
        while True:
            try:
                self._seen_notes.append(self.notes.get_nowait())
            except queue.Empty:
                break
        return code, "".join(f"{line}\n" for line in self._seen_notes)


Starter = Callable[..., Listening]


@contextmanager
def listen_processes() -> Iterator[Starter]:
    """Starts `gwdesk listen` processes (stdout lines queued); kills what is left at the end."""
    started: list[Listening] = []

    def run(
        *args: str,
        password: str | None = None,
        ctrl_c_ignored: bool = False,
        env: dict[str, str] | None = None,
    ) -> Listening:
        env = dict(os.environ if env is None else env)
        if password is not None:
            env["GWDESK_PASSWORD"] = password
        # A background job of a script starts with SIGINT ignored (and exec keeps it so).
        shell = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"] if ctrl_c_ignored else []
        process = subprocess.Popen(
            [*shell, GWDESK, "listen", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        listening = Listening(process)

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                listening.lines.put(line.rstrip("\n"))

        def pump_errors() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                listening.notes.put(line.rstrip("\n"))

        for target in (pump, pump_errors):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            listening._pumps.append(thread)
        started.append(listening)
        return listening

    try:
        yield run
    finally:
        for listening in started:
            if listening.process.poll() is None:
                listening.process.kill()
                listening.process.wait()
            for stream in (listening.process.stdout, listening.process.stderr):
                if stream is not None:
                    stream.close()
