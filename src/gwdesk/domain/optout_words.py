"""What a customer's reply says about their consent: STOP, START, or a word to look at.

Australia's Spam Act 2003 wants an unsubscribe honoured, and customers unsubscribe
by replying a keyword. A reply opts out when its first words are one of the opt-out
keywords (STOP, STOP ALL, UNSUBSCRIBE, OPT OUT, OPTOUT, CANCEL, END, QUIT by default;
a profile may change the list), in any case, with punctuation around the words and
spaces ignored: "Stop!", "stop please", "OPT-OUT." all count. It opts back in the
same way with START or UNSTOP. A reply that only mentions a keyword later on
("Please don't stop my order") changes nothing, but is flagged so an operator
reads it. Pure functions: the reply store applies them as it stores each reply.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

DEFAULT_OPT_OUT: Final = (
    "STOP",
    "STOP ALL",
    "UNSUBSCRIBE",
    "OPT OUT",
    "OPTOUT",
    "CANCEL",
    "END",
    "QUIT",
)
DEFAULT_OPT_IN: Final = ("START", "UNSTOP")
MAX_KEYWORDS: Final = 50
MAX_KEYWORD_LENGTH: Final = 40
#: A word: letters and digits; anything else (punctuation, hyphens, emoji) separates words.
_WORD: Final = re.compile(r"[^\W_]+")


class Intent(StrEnum):
    OPT_OUT = "opt-out"
    OPT_IN = "opt-in"
    MENTION = "mention"
    """A keyword stands later in the reply: not a change, but worth an operator's look."""


@dataclass(frozen=True, slots=True)
class Reading:
    """What a reply says: its intent and the keyword that says it (as configured)."""

    intent: Intent
    keyword: str


def words(text: str) -> tuple[str, ...]:
    """The words of `text`, case-folded and compatibility-normalised (full-width letters,
    ligatures), without the punctuation and spaces between them."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return tuple(_WORD.findall(folded))


def check_keywords(entries: Iterable[str]) -> tuple[str, ...]:
    """A profile's keyword list, tidied (upper case, single spaces, no repeats); ValueError
    naming the entry when one holds no word or is absurdly long."""
    seen: dict[tuple[str, ...], str] = {}
    for entry in entries:
        if len(entry) > MAX_KEYWORD_LENGTH:
            raise ValueError(f"the keyword {entry[:20]!r}… is longer than {MAX_KEYWORD_LENGTH}")
        key = words(entry)
        if not key:
            raise ValueError(f"{entry!r} holds no letter or digit to match")
        seen.setdefault(key, " ".join(key).upper())
    if len(seen) > MAX_KEYWORDS:
        raise ValueError(f"at most {MAX_KEYWORDS} keywords")
    return tuple(seen.values())


class Keywords:
    """The opt-out and opt-in keywords of one profile, ready to read replies with."""

    def __init__(
        self, opt_out: Sequence[str] = DEFAULT_OPT_OUT, opt_in: Sequence[str] = DEFAULT_OPT_IN
    ) -> None:
        self.opt_out = check_keywords(opt_out)
        self.opt_in = check_keywords(opt_in)
        # Longest first: "STOP ALL" is named over "STOP" when both lead the reply.
        self._rules = sorted(
            [(words(k), k, Intent.OPT_OUT) for k in self.opt_out]
            + [(words(k), k, Intent.OPT_IN) for k in self.opt_in],
            key=lambda rule: -len(rule[0]),
        )

    def __repr__(self) -> str:
        return f"Keywords(opt_out={self.opt_out!r}, opt_in={self.opt_in!r})"

    def read(self, text: str) -> Reading | None:
        """The reply's intent: a keyword leading it, else one standing later (a mention)."""
        said = words(text)
        if not said:
            return None
        for key, keyword, intent in self._rules:
            if said[: len(key)] == key:
                return Reading(intent, keyword)
        for key, keyword, _intent in self._rules:
            size = len(key)
            if any(said[i : i + size] == key for i in range(1, len(said) - size + 1)):
                return Reading(Intent.MENTION, keyword)
        return None
