"""A team's setting changes as the office's record tells them: read past the last one seen,
and said in plain words.

A team's server audits every change of a team setting itself (`gwdesk_set`, see
`gwdesk.store.pg_rules`): an audit entry of action `SETTING_CHANGED` whose subject is the
setting's name (as `gwdesk.domain.settings` declares it), whose detail is the new value as
JSON, and whose operator is the changer's name as the server knows them. A console reads
the entries after the last it has seen whenever the change feed says `settings` changed
(or everything may have), and tells its operator what changed, in the words kept here,
once, for every team setting (`WORDS`).

Everything in an entry comes from another desk: the words are plain text to be shown as
plain text (the console's `plain_text`), never markup; a value that does not read as its
declaration allows (a newer gwdesk's, a cut one) is left out of the words, not shown raw;
the receiver's ReplyPath is never repeated (it holds the listener's secret).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

from gwdesk.domain.quiet_hours import QuietHours
from gwdesk.domain.settings import (
    MARKETING_DEFAULT,
    OPT_IN_KEYWORDS,
    OPT_OUT_INSTRUCTION,
    OPT_OUT_KEYWORDS,
    QUIET_HOURS,
    QUIET_HOURS_ON,
    REPLY_RULES,
    SETTINGS,
    TEAM_REPLY_PATH,
)
from gwdesk.store.team import SETTING_CHANGED, Audit, AuditEntry

PAGE: Final = 200
"""Entries read per query: a long absence costs several short reads."""
NAME_CHARS: Final = 60
"""Longest name of a setting this gwdesk does not know that the words repeat."""
SOMEONE: Final = "Someone"


@dataclass(frozen=True, slots=True)
class Wording:
    """How a change of one setting is said."""

    subject: str
    """What the setting is, in words: "the opt-out keywords"."""
    said: Callable[[str, Any], str]
    """`said(who, value)`: the sentence for a change to `value` (the declared type)."""

    def sentence(self, who: str, value: Any, readable: bool) -> str:
        return self.said(who, value) if readable else f"{who} changed {self.subject}"


def _keywords(subject: str) -> Wording:
    return Wording(subject, lambda who, words: f"{who} changed {subject}: {', '.join(words)}")


def _marketing(who: str, marketing: bool) -> str:
    return f"{who} turned marketing {'on' if marketing else 'off'} by default"


def _instruction(who: str, instruction: str) -> str:
    return f"{who} changed the opt-out instruction to “{instruction}”"


def _reply_path(_who: str, published: str | None) -> str:
    if published:
        return "The reply receiver published a new ReplyPath"
    return "The reply receiver withdrew its ReplyPath: two-way sends wait for a new one"


def _hours_on(who: str, on: bool) -> str:
    if on:
        return f"{who} turned sending hours on: lists and sends for later wait for them"
    return f"{who} turned sending hours off: lists go at any hour"


def _hours(who: str, hours: dict[str, Any]) -> str:
    return f"{who} changed the sending hours to {QuietHours.from_json(hours).describe()}"


def _rules(who: str, rules: list[dict[str, Any]]) -> str:
    count = len(rules)
    return f"{who} changed the keyword rules: {count} rule{'s' if count != 1 else ''}"


WORDS: Final[Mapping[str, Wording]] = MappingProxyType(
    {
        OPT_OUT_KEYWORDS.name: _keywords("the opt-out keywords"),
        OPT_IN_KEYWORDS.name: _keywords("the opt-in keywords"),
        MARKETING_DEFAULT.name: Wording("whether new messages are marketing", _marketing),
        OPT_OUT_INSTRUCTION.name: Wording("the opt-out instruction", _instruction),
        TEAM_REPLY_PATH.name: Wording("the team's ReplyPath", _reply_path),
        QUIET_HOURS_ON.name: Wording("whether sending hours apply", _hours_on),
        QUIET_HOURS.name: Wording("the sending hours", _hours),
        REPLY_RULES.name: Wording("the keyword rules", _rules),
    }
)
"""Every team setting (`Place.SHARED_STORE`), by name: how its change is said."""


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One change of a team setting, as the record keeps it and as it is said."""

    id: int
    at: datetime
    operator: str
    setting: str
    text: str
    """In plain words; from another desk: show it as plain text."""


def _value(setting: str, detail: str) -> tuple[bool, Any]:
    """(whether it could be read, the value as its declaration types it)."""
    declared = SETTINGS.get(setting)
    if declared is None:
        return (False, None)
    try:
        return (True, declared.parse(json.loads(detail)))
    except (ValueError, TypeError, OverflowError, RecursionError):
        return (False, None)


def change_text(operator: str, setting: str, detail: str) -> str:
    """A setting's change in plain words: "Alex changed the opt-out keywords: STOP, HALT"."""
    who = " ".join(operator.split()) or SOMEONE
    wording = WORDS.get(setting)
    if wording is None:
        name = " ".join(setting.split())[:NAME_CHARS] or "?"
        return f"{who} changed the team setting {name}"
    readable, value = _value(setting, detail)
    return wording.sentence(who, value, readable)


def setting_change(entry: AuditEntry) -> SettingChange:
    return SettingChange(
        entry.id,
        entry.at,
        entry.operator,
        entry.subject,
        change_text(entry.operator, entry.subject, entry.detail),
    )


class SettingChanges:
    """The team's setting changes after the last one read (blocking: call it off the GUI
    thread, one read at a time)."""

    def __init__(self, audit: Audit, page: int = PAGE) -> None:
        self.audit = audit
        self.page = page
        self.last_id: int | None = None
        """The newest entry read (None: not started; the first read only starts)."""

    def begin(self) -> None:
        """Start from now: changes made before are not told. Blocking; once."""
        if self.last_id is None:
            self.last_id = self.audit.last_id()

    def read(self) -> list[SettingChange]:
        """The changes made since the last read, oldest first; none on the first (it
        starts there, `begin`). `last_id` moves once all of them are read."""
        if self.last_id is None:
            self.begin()
            return []
        found: list[SettingChange] = []
        last_id = self.last_id
        while True:
            entries = self.audit.entries(after_id=last_id, limit=self.page, action=SETTING_CHANGED)
            found.extend(setting_change(entry) for entry in entries)
            if entries:
                last_id = max(last_id, entries[-1].id)
            if len(entries) < self.page:
                self.last_id = last_id
                return found
