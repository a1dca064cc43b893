"""How often the console restarts a sandbox child that died, and how it names the exit."""

from __future__ import annotations

from pathlib import Path

from gwdesk.ui.sandbox_process import RestartBudget, describe_exit, sandbox_command


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_three_restarts_a_minute_are_allowed_and_a_fourth_is_not() -> None:
    clock = Clock()
    budget = RestartBudget(clock=clock)
    assert [budget.allow() for _ in range(4)] == [True, True, True, False]


def test_restarts_older_than_the_window_no_longer_count() -> None:
    clock = Clock()
    budget = RestartBudget(limit=3, window=60.0, clock=clock)
    for moment in (0.0, 10.0, 20.0):
        clock.now = moment
        assert budget.allow()
    clock.now = 59.0
    assert not budget.allow()
    clock.now = 60.0
    assert budget.allow()


def test_an_exit_by_a_signal_is_named_and_a_plain_exit_gives_its_code() -> None:
    assert describe_exit(-9) == "exit code -9: killed by SIGKILL"
    assert describe_exit(1) == "exit code 1"
    assert describe_exit(None) == "exit code unknown"


def test_a_restart_asks_for_the_port_the_child_had() -> None:
    command = sandbox_command(Path("s.sqlite3"), port=43127)
    assert command[command.index("--port") + 1] == "43127"
    fresh = sandbox_command(Path("s.sqlite3"))
    assert fresh[fresh.index("--port") + 1] == "0"
