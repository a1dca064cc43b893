"""Every command takes its positionals and options in any order: an option written before
a positional no longer leaves the positional unread ("unrecognized arguments")."""

from __future__ import annotations

import argparse

import pytest

from gwdesk.cli import build_parser

GATEWAY = ["--base-url", "https://gw.example", "--username", "ops"]
#: (command, positionals, options): each command with positionals, as an operator writes it.
COMMANDS = [
    ("send", ["Your order is ready"], ["--to", "0412345678", *GATEWAY]),
    ("outbox", ["resume"], ["--batch", "3", *GATEWAY]),
    ("scheduled", ["edit", "5"], ["--text", "Opens at ten", "--to", "0412345678", *GATEWAY]),
    ("optouts", ["add", "0412345678"], ["--reason", "asked by phone", *GATEWAY]),
    ("optouts", ["import", "list.csv"], ["--reason", "from the old system", *GATEWAY]),
    ("templates", ["add", "Reminder", "Hi {name}"], ["--replace", *GATEWAY]),
    ("contacts", ["export", "cards.csv"], ["--group", "Clinic", *GATEWAY]),
    ("team", ["add-operator", "postgresql://o@127.0.0.1/g", "alex"], ["--name", "Alex Wong"]),
]


def parsed(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.mark.parametrize(("command", "positionals", "options"), COMMANDS, ids=lambda c: str(c)[:30])
def test_options_before_the_positionals_read_as_after_them(
    command: str, positionals: list[str], options: list[str]
) -> None:
    after = parsed([command, *positionals, *options])
    before = parsed([command, *options, *positionals])
    between = parsed([command, positionals[0], *options, *positionals[1:]])
    assert vars(before) == vars(after) == vars(between)


def test_the_failing_line_of_the_issue_is_read() -> None:
    args = parsed(["optouts", "add", "--reason", "asked by phone", "0412345678"])
    assert (args.action, args.target, args.reason) == ("add", "0412345678", "asked by phone")


def test_an_unknown_argument_is_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        parsed(["optouts", "add", "0412345678", "stray", "--reason", "x"])
    assert refused.value.code == 2
    assert "unrecognized arguments: stray" in capsys.readouterr().err
