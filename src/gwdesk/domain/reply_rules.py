"""Keyword rules on customers' replies: what they match and what they do, checked here.

A profile's rules are an ordered list (a team setting, so every desk and the receiver
run the same ones). The first rule that matches a reply acts on it; the rest are not
looked at. A rule matches

- **whole**: the whole reply is its words ("Hours?" is HOURS),
- **first word**: the reply starts with its words ("hours please" is HOURS), or
- **pattern**: a wildcard pattern over the whole reply (`*` any run of characters,
  `?` one), in any case. Patterns are matched by a linear-time matcher, never by a
  backtracking regular-expression engine: no pattern can take exponential time, and a
  pattern's length and its wildcards are bounded too.

and does up to one of each action: reply with a text (at most `per_day` automatic
replies to one customer in 24 hours, by any rule), assign the conversation, set its
state, tag it, forward the reply to an HTTP endpoint (signed JSON).

STOP comes first and cannot be overridden: a reply that opts out or back in runs no
rule, and a rule cannot take an opt-out or opt-in keyword. A rule whose automatic
reply it would itself match (a phone that echoes would start a loop) is refused with
why. Pure: the store keeps the list, `app/reply_rules.py` runs it.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final
from urllib.parse import urlsplit

from gwdesk.domain.errors import InputRefused
from gwdesk.domain.optout_words import Keywords, words

MAX_RULES: Final = 50
MAX_NAME: Final = 60
MAX_VALUE: Final = 200
MAX_WILDCARDS: Final = 10
MAX_REPLY: Final = 612
"""An automatic reply's text at most: four concatenated SMS parts."""
MAX_PER_DAY: Final = 10
MAX_URL: Final = 500
MATCHED_TEXT: Final = 2000
"""Characters of a reply a pattern looks at (a reply longer than this is matched by its
start): bounds the matcher's work per reply whatever the gateway sends."""
STATES: Final = ("open", "waiting", "done")
"""What a rule may set a conversation to (a snooze needs a time a rule cannot know)."""


class Match(StrEnum):
    WHOLE = "whole"
    FIRST_WORD = "first word"
    PATTERN = "pattern"


class Do(StrEnum):
    REPLY = "reply"
    ASSIGN = "assign"
    STATE = "state"
    TAG = "tag"
    FORWARD = "forward"


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a rule does: `value` is the reply's text, the operator, the state, the
    tag or the URL; `per_day` bounds a reply's repeats to one customer."""

    do: Do
    value: str
    per_day: int = 1

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"do": self.do.value, "value": self.value}
        if self.do is Do.REPLY:
            shown["per_day"] = self.per_day
        return shown

    def describe(self) -> str:
        """The action in a few words (plain text: the caller escapes it for its medium)."""
        if self.do is Do.REPLY:
            return f"reply {self.value!r} (at most {self.per_day} a day to one customer)"
        if self.do is Do.FORWARD:
            return f"forward to {self.value}"
        return f"{self.do.value} {self.value}"


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    match: Match
    value: str
    actions: tuple[Action, ...]
    on: bool = True

    def action(self, do: Do) -> Action | None:
        return next((action for action in self.actions if action.do is do), None)

    def matches(self, text: str) -> bool:
        """Whether this rule takes a reply of `text` (on or not: `RuleSet.first` skips
        the ones turned off)."""
        return _takes(self, _wanted(self), _Said(text))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "match": self.match.value,
            "value": self.value,
            "actions": [action.to_json() for action in self.actions],
            "on": self.on,
        }

    def describe(self) -> str:
        state = "" if self.on else " (off)"
        doing = "; ".join(action.describe() for action in self.actions)
        return f"{self.name}{state}: when the reply is {self.match.value} {self.value!r}: {doing}"


@dataclass(frozen=True, slots=True)
class RuleSet:
    """A profile's rules in order."""

    rules: tuple[Rule, ...] = ()
    _plan: tuple[tuple[Rule, tuple[str, ...] | str], ...] = field(
        init=False, repr=False, compare=False
    )
    """The rules turned on, each with what it looks for worked out once (its words, or
    its pattern folded): a reply's words and folded text are then worked out once too."""

    def __post_init__(self) -> None:
        plan = tuple((rule, _wanted(rule)) for rule in self.rules if rule.on)
        object.__setattr__(self, "_plan", plan)

    def first(self, text: str, keywords: Keywords | None = None) -> Rule | None:
        """The rule that acts on a reply of `text`: none for an opt-out or opt-in reply."""
        if keywords is not None and _consent(text, keywords):
            return None
        said = _Said(text)
        return next((rule for rule, wanted in self._plan if _takes(rule, wanted, said)), None)

    def named(self, name: str) -> Rule | None:
        key = name.casefold()
        return next((rule for rule in self.rules if rule.name.casefold() == key), None)

    def to_json(self) -> list[dict[str, Any]]:
        return [rule.to_json() for rule in self.rules]

    def with_rule(
        self, rule: Rule, keywords: Keywords | None = None, at: int | None = None
    ) -> RuleSet:
        """This set with `rule` added (at position `at`, else last), checked against the
        others and the opt-out keywords; `InputRefused` says why not."""
        check_rule(rule, keywords)
        if self.named(rule.name) is not None:
            raise InputRefused("name", f"A rule is already called {rule.name!r}.")
        if len(self.rules) >= MAX_RULES:
            raise InputRefused("name", f"A profile has at most {MAX_RULES} rules.")
        rules = list(self.rules)
        rules.insert(len(rules) if at is None else max(0, min(at, len(rules))), rule)
        return RuleSet(tuple(rules))

    def one(self, name: str) -> Rule:
        """Rule `name` (any case); `InputRefused` when there is none."""
        found = self.named(name)
        if found is None:
            raise InputRefused("name", f"No rule is called {name[:MAX_NAME]!r}.")
        return found

    def without(self, name: str) -> RuleSet:
        self.one(name)
        key = name.casefold()
        return RuleSet(tuple(rule for rule in self.rules if rule.name.casefold() != key))


@dataclass(frozen=True, slots=True)
class Draft:
    """A rule as typed in a form or on the command line, before it is checked."""

    name: str
    match: str
    value: str
    reply: str = ""
    per_day: int = 1
    assign: str = ""
    state: str = ""
    tag: str = ""
    forward: str = ""

    def rule(self, keywords: Keywords | None = None) -> Rule:
        """The checked rule; `InputRefused` names the field to fix."""
        try:
            match = Match(self.match)
        except ValueError:
            choices = ", ".join(m.value for m in Match)
            raise InputRefused("match", f"A rule matches by {choices}.") from None
        actions = [
            Action(do, value.strip(), self.per_day if do is Do.REPLY else 1)
            for do, value in (
                (Do.REPLY, self.reply),
                (Do.ASSIGN, self.assign),
                (Do.STATE, self.state),
                (Do.TAG, self.tag),
                (Do.FORWARD, self.forward),
            )
            if value.strip()
        ]
        rule = Rule(self.name.strip(), match, self.value.strip(), tuple(actions))
        check_rule(rule, keywords)
        return rule


def check_rule(rule: Rule, keywords: Keywords | None = None) -> None:
    """Refuse a rule that cannot be kept, naming the field and why."""
    _plain("name", rule.name, MAX_NAME)
    _plain("value", rule.value, MAX_VALUE)
    if rule.match is Match.PATTERN:
        if rule.value.count("*") + rule.value.count("?") > MAX_WILDCARDS:
            raise InputRefused("value", f"A pattern has at most {MAX_WILDCARDS} wildcards.")
    elif not words(rule.value):
        raise InputRefused("value", "A keyword needs at least one letter or digit.")
    if keywords is not None and rule.match is not Match.PATTERN and _consent(rule.value, keywords):
        raise InputRefused(
            "value",
            f"{rule.value!r} opts a customer out or back in: STOP handling comes first and "
            "no rule can take it.",
        )
    if not rule.actions:
        raise InputRefused("actions", "A rule does at least one thing.")
    seen = [action.do for action in rule.actions]
    if len(set(seen)) != len(seen):
        raise InputRefused("actions", "A rule does each kind of thing at most once.")
    for action in rule.actions:
        _check_action(rule, action)


def _check_action(rule: Rule, action: Action) -> None:
    if action.do is Do.REPLY:
        _plain("reply", action.value, MAX_REPLY, lines=True)
        if not 1 <= action.per_day <= MAX_PER_DAY:
            raise InputRefused(
                "per_day", f"An automatic reply goes 1 to {MAX_PER_DAY} times a day."
            )
        if rule.matches(action.value):
            raise InputRefused(
                "reply",
                "The automatic reply would itself match this rule: a phone that echoes it "
                "would start a loop. Word the reply so it does not match.",
            )
    elif action.do is Do.ASSIGN:
        _plain("assign", action.value, 200)
    elif action.do is Do.STATE:
        if action.value not in STATES:
            raise InputRefused("state", f"A rule sets a conversation {', '.join(STATES)}.")
    elif action.do is Do.TAG:
        _plain("tag", action.value, 40)
    else:
        check_forward_url(action.value)


def check_forward_url(url: str) -> str:
    """An endpoint a reply may be forwarded to: https, or http on this machine (a local
    service, tests); no user name or password in it (the signing secret is the keyring's)."""
    _plain("forward", url, MAX_URL)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise InputRefused("forward", "Not a web address.") from None
    del port
    if parts.username is not None or parts.password is not None:
        raise InputRefused("forward", "No user name or password in the address.")
    loopback = (parts.hostname or "") in ("127.0.0.1", "localhost", "::1")
    if not parts.hostname or not (parts.scheme == "https" or (parts.scheme == "http" and loopback)):
        raise InputRefused("forward", "An https address (http only to this machine).")
    return url


def _plain(name: str, value: str, limit: int, *, lines: bool = False) -> None:
    if not value.strip():
        raise InputRefused(name, f"The {name} is empty.")
    if len(value) > limit:
        raise InputRefused(name, f"The {name} is longer than {limit} characters.")
    allowed = "\n" if lines else ""
    if any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in value):
        raise InputRefused(name, f"The {name} has control characters.")


def _consent(text: str, keywords: Keywords) -> bool:
    reading = keywords.read(text)
    return reading is not None and reading.intent.value in ("opt-out", "opt-in")


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


class _Said:
    """A reply's text as rules look at it (its start: `MATCHED_TEXT`), its words and its
    folded form each worked out once, when a rule first asks."""

    __slots__ = ("_cut", "_folded", "_words")

    def __init__(self, text: str) -> None:
        self._cut = text[:MATCHED_TEXT]
        self._words: tuple[str, ...] | None = None
        self._folded: str | None = None

    def words(self) -> tuple[str, ...]:
        if self._words is None:
            self._words = words(self._cut)
        return self._words

    def folded(self) -> str:
        if self._folded is None:
            self._folded = _folded(self._cut)
        return self._folded


def _wanted(rule: Rule) -> tuple[str, ...] | str:
    """What `rule` looks for: its pattern folded, or its words."""
    return _folded(rule.value) if rule.match is Match.PATTERN else words(rule.value)


def _takes(rule: Rule, wanted: tuple[str, ...] | str, said: _Said) -> bool:
    """Whether `rule`, looking for `wanted` (`_wanted`), takes the reply `said`."""
    if isinstance(wanted, str):
        return glob_match(wanted, said.folded())
    got = said.words()
    return got == wanted or (rule.match is Match.FIRST_WORD and got[: len(wanted)] == wanted)


def glob_match(pattern: str, text: str) -> bool:
    """`*` and `?` wildcards over the whole of `text`, in O(len(pattern) × len(text)) at
    worst: on a mismatch only the last `*` is retried, one character further on (the
    classic greedy matcher), so no input backtracks exponentially. The usual shapes
    (`word`, `*word*`, `word*`, `*word`) are string tests."""
    inner = pattern.strip("*")
    if "*" not in inner and "?" not in inner:
        starred = pattern.startswith("*"), pattern.endswith("*")
        if starred == (True, True):
            return inner in text
        if starred == (False, True):
            return text.startswith(inner)
        if starred == (True, False):
            return text.endswith(inner)
        return text == inner
    p = t = 0
    star = -1
    resume = 0
    while t < len(text):
        if p < len(pattern) and pattern[p] == "*":
            star, resume = p, t
            p += 1
        elif p < len(pattern) and pattern[p] in ("?", text[t]):
            p += 1
            t += 1
        elif star >= 0:
            resume += 1
            p, t = star + 1, resume
        else:
            return False
    return all(ch == "*" for ch in pattern[p:])


# ---- kept as JSON --------------------------------------------------------------------


def rules_from_json(value: object) -> RuleSet:
    """The rules a place keeps (`ValueError` when it holds anything else): each checked
    as when it was added, so a hand-edited or hostile value is refused whole."""
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, list) or len(value) > MAX_RULES:
        raise ValueError(f"rules are a list of at most {MAX_RULES}")
    rules: list[Rule] = []
    for item in value:
        rule = _rule_from_json(item)
        try:
            check_rule(rule)
        except InputRefused as exc:
            raise ValueError(exc.message) from None
        if any(kept.name.casefold() == rule.name.casefold() for kept in rules):
            raise ValueError(f"two rules are called {rule.name!r}")
        rules.append(rule)
    return RuleSet(tuple(rules))


def _rule_from_json(item: object) -> Rule:
    if not isinstance(item, dict):
        raise ValueError("a rule is an object")
    actions = item.get("actions")
    if not isinstance(actions, list):
        raise ValueError("a rule's actions are a list")
    return Rule(
        _text(item, "name"),
        Match(_text(item, "match")),
        _text(item, "value"),
        tuple(_action_from_json(action) for action in actions[:5]),
        item.get("on", True) is not False,
    )


def _action_from_json(item: object) -> Action:
    if not isinstance(item, dict):
        raise ValueError("an action is an object")
    per_day = item.get("per_day", 1)
    if not isinstance(per_day, int) or isinstance(per_day, bool):
        raise ValueError("per_day is a whole number")
    return Action(Do(_text(item, "do")), _text(item, "value"), per_day)


def _text(item: Mapping[str, object], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} is text")
    return value


def rules_text(rules: Iterable[Rule]) -> Sequence[str]:
    """Each rule as one line (plain text), in order."""
    return [f"{n}. {rule.describe()}" for n, rule in enumerate(rules, 1)]
