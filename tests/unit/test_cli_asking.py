"""How a command answers a send's question: a flag, the operator at a terminal, or a refusal."""

from __future__ import annotations

import io

import pytest

from gwdesk.app.personal import Cost
from gwdesk.app.questions import Concern, SendQuestion, credits_short, question
from gwdesk.cli import Output, UsageError
from gwdesk.cli.asking import settle

FLAGS = {Concern.CREDITS_SHORT: "--force"}


class Terminal(io.StringIO):
    """What the operator types, at a terminal."""

    def isatty(self) -> bool:
        return True


def short() -> SendQuestion:
    asked = question("Send?", 1, 2, Cost(2, 2, 1), [credits_short(Cost(2, 2, 1))], "Send anyway")
    assert asked is not None
    return asked


def output() -> Output:
    return Output(False, io.StringIO(), io.StringIO())


async def test_no_question_goes_on() -> None:
    await settle(None, output(), flags=FLAGS, stdin=io.StringIO())


async def test_its_flag_answers_the_question() -> None:
    await settle(short(), output(), flags=FLAGS, given={Concern.CREDITS_SHORT}, stdin=io.StringIO())


async def test_away_from_a_terminal_it_is_refused_naming_the_flag() -> None:
    with pytest.raises(UsageError, match=r"nothing was sent \(--force sends it anyway\)"):
        await settle(short(), output(), flags=FLAGS, stdin=io.StringIO())


async def test_at_a_terminal_yes_goes_on() -> None:
    prompts = io.StringIO()
    await settle(short(), Output(False, io.StringIO(), prompts), flags=FLAGS, stdin=Terminal("y\n"))
    assert "Send anyway? [y/N]" in prompts.getvalue()


async def test_at_a_terminal_anything_but_yes_sends_nothing() -> None:
    with pytest.raises(UsageError, match="the answer was no"):
        await settle(short(), output(), flags=FLAGS, stdin=Terminal("\n"))
