"""`gwdesk listen` stops on Ctrl+C or SIGTERM by one orderly path; a second one ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from gwdesk.cli.stop_signal import StopDeadline, StopOnSignal


@pytest.fixture
def ignored() -> Iterator[None]:
    """Both signals ignored, as a background job of a script starts (and so that a
    handler that is not installed fails the test instead of stopping pytest)."""
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in previous.items():
        signal.signal(signum, handler)


@pytest.mark.usefixtures("ignored")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_sets_the_stop_event_even_when_it_was_ignored(signum: int) -> None:
    stop = threading.Event()
    with StopOnSignal(stop) as signals:
        signal.raise_signal(signum)
        assert signals.wait(5.0)
        assert stop.is_set()


def test_without_a_signal_the_wait_ends_at_its_timeout_with_no_stop() -> None:
    stop = threading.Event()
    with StopOnSignal(stop) as signals:
        assert not signals.wait(0.01)
    assert not stop.is_set()


@pytest.mark.usefixtures("ignored")
def test_a_signal_sent_from_another_thread_ends_the_wait_at_once() -> None:
    with StopOnSignal(threading.Event()) as signals:
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start()
        started = time.monotonic()
        assert signals.wait(30.0)
        assert time.monotonic() - started < 5.0


def test_a_wait_interrupted_by_a_slow_handler_still_ends() -> None:
    """The cause of the lost first SIGTERM: CPython 3.11's `SimpleQueue.get(timeout)` waits
    for ever when a handler runs past its deadline. `wait` ends however long one takes."""
    script = (
        "import os, signal, threading, time\n"
        "from gwdesk.cli.stop_signal import StopOnSignal\n"
        "slow = lambda signum, frame: time.sleep(0.3)\n"
        "with StopOnSignal(threading.Event()) as signals:\n"
        "    signal.signal(signal.SIGUSR1, slow)\n"
        "    threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGUSR1)).start()\n"
        "    threading.Timer(0.15, os.kill, (os.getpid(), signal.SIGTERM)).start()\n"
        "    print('stopped:', signals.wait(0.2) or signals.wait(5.0), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=20
    )
    assert done.stdout == "stopped: True\n", done.stderr


@pytest.mark.usefixtures("ignored")
def test_the_previous_handlers_come_back_afterwards() -> None:
    with StopOnSignal(threading.Event()):
        assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_ends_the_process_at_once(signum: int) -> None:
    script = (
        "import signal, threading\n"
        "from gwdesk.cli.stop_signal import StopOnSignal\n"
        "with StopOnSignal(threading.Event()) as signals:\n"
        f"    signal.raise_signal({signum})\n"
        "    print('stopping:', signals.wait(5.0), flush=True)\n"
        f"    signal.raise_signal({signum})\n"
        "    print('still running', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == -signum, done.stderr
    assert done.stdout == "stopping: True\n"


def test_a_stop_past_its_deadline_ends_the_process_with_its_last_words() -> None:
    script = (
        "import time\n"
        "from gwdesk.cli.stop_signal import StopDeadline\n"
        "deadline = StopDeadline(0.2, lambda: print('late', flush=True), code=0)\n"
        "deadline.start()\n"
        "time.sleep(30)\n"
        "print('still running', flush=True)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=20
    )
    assert (done.returncode, done.stdout) == (0, "late\n")
    assert time.monotonic() - started < 10


def test_a_stop_within_its_deadline_is_left_alone() -> None:
    said: list[str] = []
    deadline = StopDeadline(0.2, lambda: said.append("late"))
    deadline.start()
    deadline.cancel()
    time.sleep(0.4)
    assert said == []
