"""How a command answers the question a send asks: a flag, else the operator at a terminal.

The core decides whether a send must be asked about (`gwdesk.app.questions`); the
console shows the question as a dialog, and a command answers it here. Each concern
has the flag that answers it yes (`--force` for credits that do not cover the send); a
concern no flag answered is asked at a terminal (nothing is sent unless the answer is
yes) and refused when there is none to ask at, naming the flag, so a script never
sends what nobody agreed to.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Collection, Mapping
from typing import TextIO

from gwdesk.app.questions import Ask, Concern, SendQuestion
from gwdesk.cli import Output, UsageError

YES = ("y", "yes")


def interactive(stdin: TextIO | None = None) -> bool:
    """Whether someone can answer: the command reads from a terminal."""
    stream = stdin or sys.stdin
    return bool(stream is not None and stream.isatty())


def _read_answer(prompt: str, out: Output, stdin: TextIO) -> str:
    out.err.write(prompt)
    out.err.flush()
    return stdin.readline()


async def settle(
    question: SendQuestion | None,
    out: Output,
    *,
    flags: Mapping[Concern, str],
    given: Collection[Concern] = (),
    stdin: TextIO | None = None,
    refusal: Callable[[Ask], str] | None = None,
) -> None:
    """Go on when the send asks nothing, or every concern is answered yes: by its flag
    (`given`), else by the operator at a terminal. Otherwise `UsageError` (exit 2):
    nothing was sent. `flags` names the flag of each concern; `refusal` says a concern
    left unanswered in the send's own words (each on a line, the last the error)."""
    if question is None:
        return
    left = [ask for ask in question.asks if ask.concern not in given]
    if not left:
        return
    named = sorted({flags[ask.concern] for ask in left if ask.concern in flags})
    answer_with = f" ({' and '.join(named)} sends it anyway)" if named else ""
    stream = stdin or sys.stdin
    if not interactive(stream):
        if refusal is not None:
            *first, last = [refusal(ask) for ask in left]
            for line in first:
                out.note(line)
            raise UsageError(last)
        said = " ".join(ask.text for ask in left)
        raise UsageError(
            f"{said} There is no terminal to answer at, so nothing was sent{answer_with}."
        )
    for ask in left:
        out.note(ask.text)
    line = await asyncio.to_thread(_read_answer, f"{question.yes}? [y/N] ", out, stream)
    if line.strip().casefold() not in YES:
        raise UsageError(f"Not sent: the answer was no{answer_with}.")


async def confirm(
    question: str,
    nothing: str,
    out: Output,
    *,
    given: bool,
    flag: str = "--yes",
    stdin: TextIO | None = None,
) -> None:
    """Go on when `flag` was `given`, else when the operator answers `question` yes at a
    terminal; otherwise `UsageError` (exit 2) saying `nothing` happened. For what is no
    send's question (cancelling a scheduled send, sending it before its time)."""
    if given:
        return
    stream = stdin or sys.stdin
    if not interactive(stream):
        raise UsageError(
            f"{question}? There is no terminal to answer at, so {nothing} ({flag} answers yes)."
        )
    line = await asyncio.to_thread(_read_answer, f"{question}? [y/N] ", out, stream)
    if line.strip().casefold() not in YES:
        raise UsageError(f"The answer was no: {nothing}.")
