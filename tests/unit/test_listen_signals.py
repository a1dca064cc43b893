"""`gwdesk listen` stops on Ctrl+C or SIGTERM by one orderly path; a second one ends it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from gwdesk.cli.listen import StopOnSignal


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
    with StopOnSignal(stop):
        signal.raise_signal(signum)
        assert stop.is_set()


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
        "from gwdesk.cli.listen import StopOnSignal\n"
        "with StopOnSignal(threading.Event()) as signals:\n"
        f"    signal.raise_signal({signum})\n"
        "    print('stopping:', signals.stop.is_set(), flush=True)\n"
        f"    signal.raise_signal({signum})\n"
        "    print('still running', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == -signum, done.stderr
    assert done.stdout == "stopping: True\n"
