"""SIGINT and SIGTERM as one stop, for a command that runs until it is told to stop.

A thread of its own waits in a `select` on a socket that Python's C-level signal
handler writes the signal's number to (`signal.set_wakeup_fd`): the stop begins the
moment a signal arrives, whichever thread the kernel delivered it to and whatever the
main thread is doing (starting, waiting on a store), and `on_stop` callbacks (the
stop's deadline) run then. The main thread waits in `StopOnSignal.wait`, a
`threading.Event` wait, which handles an interrupted wait correctly.

Why not a queue's `get(timeout=…)` on the main thread, as `gwdesk listen` once did:
CPython 3.11's `queue.SimpleQueue.get` runs the signal handler when its wait is
interrupted, then waits again for the time left; when the handler (or taking the GIL
back from a busy thread) ran past the deadline, that time is negative, which the lock
reads as "wait for ever". The handler had set the stop event, but the loop that looks
at it never ran again: the first SIGTERM was lost (1 run in 30 with a gateway's
threads busy), a second one ended the process. `threading` locks check for that
case; the queue did not.

The Python handler takes no lock (setting a `threading.Event` takes one, and a handler
runs between two bytecodes of the main thread, which may hold it): it only counts,
and the second signal ends the process.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Final, TypeAlias

SignalHandler: TypeAlias = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
"""What `signal.signal` returns (and takes back)."""


class StopOnSignal:
    """Ctrl+C (SIGINT) and SIGTERM stop the command by one orderly path (`stop` is set,
    `wait` returns True, `on_stop` callbacks run); a second one ends the process at once,
    as that signal ends any program (what was stored stays stored).

    Python only turns SIGINT into KeyboardInterrupt when it did not start with SIGINT
    ignored, and a background job of a script starts so: the listener then ignored
    Ctrl+C and `kill -INT` alike. The handler is installed whatever was inherited (as
    Go's signal.Notify does); the previous handlers and wake-up fd come back on exit.
    Off the main thread (a test's) no handler is installed: only `stop` ends a `wait`.
    """

    SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.received = 0
        """Stop signals received (the handler's count; the second ends the process)."""
        self._previous: dict[int, SignalHandler] = {}
        self._previous_fd = -1
        self._sockets: tuple[socket.socket, socket.socket] | None = None
        self._watcher: threading.Thread | None = None
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], object]] = []

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is not threading.main_thread():
            return self
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        self._sockets = (reader, writer)
        self._previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        self._watcher = threading.Thread(
            target=self._watch, args=(reader,), name="gwdesk-signals", daemon=True
        )
        self._watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()
        if self._sockets is not None:
            signal.set_wakeup_fd(self._previous_fd)
            reader, writer = self._sockets
            writer.close()  # the watcher reads the end of the stream and returns
            if self._watcher is not None:
                self._watcher.join(5.0)
            reader.close()
            self._sockets = self._watcher = None

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a stop; True once one came."""
        return self.stop.wait(timeout)

    def on_stop(self, callback: Callable[[], object]) -> None:
        """Run `callback()` when the stop begins (at once if it has): on the signal
        watcher's thread, or on the caller's."""
        with self._lock:
            if not self.stop.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def _watch(self, reader: socket.socket) -> None:
        """The watcher's thread: a stop signal's number read from the wake-up socket."""
        while chunk := reader.recv(256):
            if any(number in self.SIGNALS for number in chunk):
                self._begin()

    def _begin(self) -> None:
        with self._lock:
            if self.stop.is_set():
                return
            self.stop.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.received += 1
        if self.received == 1:
            return  # the wake-up socket has it; the watcher begins the stop
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)


class StopDeadline:
    """The bound on a stop: if the orderly stop has not ended `within` seconds after it
    began, `last_words()` is said and the process ends with `code` at once.

    Each step of a stop has its own time-out, but a step waiting on a store that went
    away (a pool's connection wait, a commit on a dead server) may not end in time, and
    a supervisor that waits (systemd's `TimeoutStopSec`, `docker stop`) then kills. What
    was acknowledged is stored already; what was not is the gateway's to retry, as after
    a crash, which the store and outbox survive by design.
    """

    def __init__(self, within: float, last_words: Callable[[], None], code: int = 0) -> None:
        self.within = within
        self._ends: float | None = None
        self._timer = threading.Timer(within, self._expire, args=(last_words, code))
        self._timer.daemon = True
        self._timer.name = "gwdesk-stop-deadline"

    def start(self) -> None:
        """The stop began: the clock runs (once)."""
        if self._ends is None:
            self._ends = time.monotonic() + self.within
            self._timer.start()

    def left(self, at_least: float = 0.05) -> float:
        """Seconds before the deadline (all of them before `start`; at least `at_least`)."""
        if self._ends is None:
            return self.within
        return max(self._ends - time.monotonic(), at_least)

    def cancel(self) -> None:
        self._timer.cancel()

    @staticmethod
    def _expire(last_words: Callable[[], None], code: int) -> None:
        try:
            last_words()
        finally:
            os._exit(code)
