"""A command builds only its own module's parser: the table of homes matches the modules."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from gwdesk.cli import COMMAND_HOMES, COMMAND_MODULES, build_parser


def registered_by(module: str) -> set[str]:
    parser = build_parser(importlib.import_module(module).COMMANDS)
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_every_command_a_module_registers_has_that_module_as_its_home(module: str) -> None:
    assert registered_by(module) == {c for c, home in COMMAND_HOMES.items() if home == module}


def test_every_home_is_one_of_the_command_modules() -> None:
    assert set(COMMAND_HOMES.values()) == set(COMMAND_MODULES)


def test_a_known_command_imports_no_other_commands_module() -> None:
    probe = (
        "import sys\n"
        "from gwdesk.cli import main\n"
        "try:\n"
        "    main(['team', 'status', 'postgresql://gwdesk:hunter2@db.invalid/office'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('gwdesk.cli.') or m == 'aiohttp'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert "must not hold a password" in done.stderr
    assert done.stdout.strip() == "['gwdesk.cli.team']"


def test_a_mistyped_command_is_told_every_command_there_is() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gwdesk.launcher", "sned", "<b>x</b>"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "invalid choice: 'sned'" in done.stderr
    assert all(name in done.stderr for name in ("send", "team", "optouts", "lodge-status"))
