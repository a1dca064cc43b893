"""How a command answers a send's question: a flag, the operator at a terminal, or a refusal."""

from __future__ import annotations

import io

import pytest

from gwdesk.app.personal import Cost
from gwdesk.app.questions import Concern, SendQuestion, credits_short, question
from gwdesk.cli import Output, UsageError
from gwdesk.cli.asking import confirm, settle

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


async def test_a_confirmation_given_by_its_flag_goes_on() -> None:
    await confirm(
        "Cancel send #3", "nothing was cancelled", output(), given=True, stdin=io.StringIO()
    )


async def test_a_confirmation_away_from_a_terminal_is_refused_naming_the_flag() -> None:
    with pytest.raises(UsageError, match=r"so nothing was cancelled \(--yes answers yes\)"):
        await confirm("Cancel send #3", "nothing was cancelled", output(), given=False,
                      stdin=io.StringIO("y\n"))  # fmt: skip


async def test_a_confirmation_answered_yes_at_a_terminal_goes_on() -> None:
    prompts = io.StringIO()
    await confirm("Cancel send #3", "nothing was cancelled", Output(False, io.StringIO(), prompts),
                  given=False, stdin=Terminal("yes\n"))  # fmt: skip
    assert prompts.getvalue() == "Cancel send #3? [y/N] "


async def test_a_confirmation_answered_anything_else_is_refused() -> None:
    with pytest.raises(UsageError, match=r"The answer was no: nothing was cancelled\."):
        await confirm("Cancel send #3", "nothing was cancelled", output(), given=False,
                      stdin=Terminal("\n"))  # fmt: skip
