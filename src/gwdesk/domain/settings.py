"""Every setting gwdesk keeps, declared once: name, type, default, where it is kept, what it does.

Settings live in four places, and each declaration says which:

- the profiles file (`profiles.json` in the config folder): choices that belong
  with the profiles, for the console and the command line alike;
- the profile's store (its data file, table `settings`): what belongs to one
  workstation's use of a profile, such as its reply listener, its operator and its
  tables' layout;
- the shared store (table `settings` where the profile's shared data lives: the same
  file, or the team's PostgreSQL server): what a team agrees on, such as the opt-out
  keywords and the office receiver's ReplyPath;
- the console's window state (`console.ini`, through Qt's `QSettings`): how the
  window was left.

Whoever reads or writes a setting goes through its declaration: `read` turns what
a place holds into the declared type, and anything else (a file edited by hand,
a damaged one, a value out of range) is the default, never an error; `write`
refuses a value the declaration does not allow. Here in the domain, with no I/O,
so the store, the console and the command line all share one declaration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Generic, TypeVar

from gwdesk.domain.optout_words import DEFAULT_OPT_IN, DEFAULT_OPT_OUT, check_keywords
from gwdesk.domain.quiet_hours import QuietHours
from gwdesk.domain.reply_rules import rules_from_json

T = TypeVar("T")
#: What a marketing message ends with unless the profile says otherwise.
DEFAULT_INSTRUCTION: Final = "Reply STOP to opt out"


class Place(StrEnum):
    """Where a setting is kept."""

    PROFILES_FILE = "profiles file"
    PROFILE_STORE = "profile store"
    SHARED_STORE = "shared store"
    WINDOW_STATE = "window state"


@dataclass(frozen=True, slots=True)
class Setting(Generic[T]):
    """One setting: how it is named and kept, its default, and how its values are checked."""

    name: str
    """Unique across gwdesk, dotted by subject (`listener.port`)."""
    default: T
    place: Place
    about: str
    """One sentence: what the setting does."""
    parse: Callable[[object], T]
    """A kept value as the declared type; raises `ValueError` when it is not one."""
    key: str = ""
    """The name in its place when that differs (the keys older files already use)."""

    @property
    def stored_as(self) -> str:
        return self.key or self.name

    def read(self, kept: object) -> T:
        """What a place holds (None: nothing) as the declared type; the default otherwise."""
        if kept is None:
            return self.default
        try:
            return self.parse(kept)
        except (ValueError, TypeError, OverflowError):
            return self.default

    def write(self, value: T) -> T:
        """The value to keep; `ValueError` when the declaration does not allow it."""
        return self.parse(value)


# ---- kinds of value ------------------------------------------------------------------------


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "false", "0"):
        return value.strip().lower() in ("true", "1")
    raise ValueError(f"not a yes or no: {value!r}")


def _integer(low: int | None, high: int | None) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool):
            raise ValueError("a yes or no is not a number")
        if isinstance(value, str):
            digits = value.strip()
            if not digits.lstrip("-").isascii() or not digits.lstrip("-").isdigit():
                raise ValueError(f"not a whole number: {value!r}")
            value = int(digits)
        if not isinstance(value, int):
            raise ValueError(f"not a whole number: {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"{value} is outside {low}…{high}")
        return value

    return parse


def _text(limit: int) -> Callable[[object], str]:
    def parse(value: object) -> str:
        if not isinstance(value, str):
            raise ValueError(f"not text: {value!r}")
        if len(value) > limit:
            raise ValueError(f"longer than {limit} characters")
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError("holds a control character")
        return value

    return parse


def _words(value: object) -> tuple[str, ...]:
    """A keyword list, tidied (`optout_words.check_keywords`); at least one keyword."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError(f"not a list of keywords: {value!r}")
    if not all(isinstance(v, str) for v in value):
        raise ValueError("a keyword is not text")
    words = check_keywords(value)
    if not words:
        raise ValueError("at least one keyword")
    return words


def _bytes(value: object) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raise ValueError(f"not bytes: {value!r}")


def _optional(parse: Callable[[object], T]) -> Callable[[object], T | None]:
    def optional(value: object) -> T | None:
        return None if value is None else parse(value)

    return optional


def flag(name: str, default: bool, place: Place, about: str, *, key: str = "") -> Setting[bool]:
    return Setting(name, default, place, about, _flag, key)


def integer(
    name: str,
    default: int,
    place: Place,
    about: str,
    *,
    low: int | None = None,
    high: int | None = None,
    key: str = "",
) -> Setting[int]:
    return Setting(name, default, place, about, _integer(low, high), key)


def optional_integer(
    name: str, place: Place, about: str, *, low: int, high: int, key: str = ""
) -> Setting[int | None]:
    return Setting(name, None, place, about, _optional(_integer(low, high)), key)


def text(
    name: str, default: str, place: Place, about: str, *, limit: int = 4096, key: str = ""
) -> Setting[str]:
    return Setting(name, default, place, about, _text(limit), key)


def optional_text(
    name: str, place: Place, about: str, *, limit: int = 4096, key: str = ""
) -> Setting[str | None]:
    return Setting(name, None, place, about, _optional(_text(limit)), key)


def keywords(
    name: str, default: tuple[str, ...], place: Place, about: str
) -> Setting[tuple[str, ...]]:
    return Setting(name, default, place, about, _words)


def blob(name: str, place: Place, about: str, *, key: str = "") -> Setting[bytes]:
    return Setting(name, b"", place, about, _bytes, key)


# ---- the settings --------------------------------------------------------------------------

DEFAULT_PROFILE: Final = optional_text(
    "profiles.default",
    Place.PROFILES_FILE,
    "The profile the console opens and the command line uses when none is named.",
    limit=200,
    key="default",
)
LISTENER_ENABLED: Final = flag(
    "listener.enabled",
    True,
    Place.PROFILE_STORE,
    "Whether the reply listener starts with the profile: the operator's last start or stop.",
)
LISTENER_HOST: Final = text(
    "listener.host",
    "127.0.0.1",
    Place.PROFILE_STORE,
    "The interface the reply listener binds to; loopback unless the operator chose another.",
    limit=253,
)
LISTENER_PUBLIC_HOST: Final = optional_text(
    "listener.public_host",
    Place.PROFILE_STORE,
    "The host name the ReplyPath gives when the gateway reaches the listener by another name.",
    limit=253,
)
LISTENER_PORT: Final = optional_integer(
    "listener.port",
    Place.PROFILE_STORE,
    "The reply listener's port, remembered once bound so the ReplyPath stays valid.",
    low=1,
    high=65535,
)
LISTENER_SECRET: Final = text(
    "listener.secret",
    "",
    Place.PROFILE_STORE,
    "The secret path segment of the ReplyPath, made once per profile (empty: not made yet).",
    limit=200,
)
OUTBOX_TOLD_UP_TO: Final = integer(
    "outbox.told_up_to",
    0,
    Place.PROFILE_STORE,
    "The newest unfinished send the Outbox window showed: only newer ones open it by itself.",
    low=0,
)
REPLIES_SEEN_UP_TO: Final = integer(
    "replies.seen_up_to",
    0,
    Place.PROFILE_STORE,
    "The newest reply the operator has seen: replies stored after it count as unread.",
    low=0,
)
RULES_DONE_UP_TO: Final = integer(
    "replies.rules_done_up_to",
    0,
    Place.PROFILE_STORE,
    "The newest reply this desk's keyword rules looked at: after a stop, they run from there.",
    low=0,
)
LOGS_HEADER: Final = text(
    "logs.header",
    "",
    Place.PROFILE_STORE,
    "The Logs table's columns: which are shown, their order, widths and sort.",
    limit=65536,
)
OPT_OUT_KEYWORDS: Final = keywords(
    "optouts.opt_out_keywords",
    DEFAULT_OPT_OUT,
    Place.SHARED_STORE,
    "Replies led by one of these words (any case, punctuation aside) opt the sender out.",
)
OPT_IN_KEYWORDS: Final = keywords(
    "optouts.opt_in_keywords",
    DEFAULT_OPT_IN,
    Place.SHARED_STORE,
    "Replies led by one of these words opt the sender back in (only the customer can).",
)
MARKETING_DEFAULT: Final = flag(
    "sending.marketing_default",
    False,
    Place.SHARED_STORE,
    "Whether a new message is marked as marketing (it then carries the opt-out instruction).",
)
OPT_OUT_INSTRUCTION: Final = text(
    "sending.opt_out_instruction",
    DEFAULT_INSTRUCTION,
    Place.SHARED_STORE,
    "What a marketing message ends with, so the recipient knows how to opt out.",
    limit=100,
)


def _sending_hours(value: object) -> dict[str, Any]:
    """Quiet hours as `domain.quiet_hours` writes them (checked by reading them back)."""
    written: dict[str, Any] = QuietHours.from_json(value).to_json()
    return written


QUIET_HOURS_ON: Final = flag(
    "sending.quiet_hours_on",
    True,
    Place.SHARED_STORE,
    "Whether lists and sends for later keep to the sending hours on each recipient's clock.",
)
QUIET_HOURS: Final = Setting(
    "sending.quiet_hours",
    QuietHours().to_json(),
    Place.SHARED_STORE,
    "When lists and sends for later may reach each recipient, on their own clock.",
    _sending_hours,
)
TEAM_REPLY_PATH: Final = optional_text(
    "team.reply_path",
    Place.SHARED_STORE,
    "The ReplyPath the office's receiver (gwdesk listen --store) publishes for two-way sends.",
    limit=2000,
)


def _reply_rules(value: object) -> list[dict[str, Any]]:
    """Keyword rules as `domain.reply_rules` writes them (checked by reading them back)."""
    return rules_from_json(value).to_json()


REPLY_RULES: Final[Setting[list[dict[str, Any]]]] = Setting(
    "replies.rules",
    [],
    Place.SHARED_STORE,
    "The keyword rules run on each customer's reply, in order (auto-reply, assign, forward...).",
    _reply_rules,
)
OWN_NUMBER: Final = text(
    "sending.own_number",
    "",
    Place.PROFILE_STORE,
    "The operator's own mobile (international digits; empty: none): where "
    '"Send a test to me" sends a batch\'s first message.',
    limit=32,
)
REPEAT_WINDOW_HOURS: Final = integer(
    "sending.repeat_window_hours",
    24,
    Place.PROFILE_STORE,
    "How many hours back a list send of the same text to most of a list is named in its question.",
    low=1,
    high=24 * 30,
)
WINDOW_GEOMETRY: Final = blob(
    "window.geometry",
    Place.WINDOW_STATE,
    "Where the console's window was and how big, restored when it opens.",
    key="window/geometry",
)
WINDOW_TAB: Final = integer(
    "window.tab",
    0,
    Place.WINDOW_STATE,
    "The tab shown when the console last closed, shown again when it opens.",
    low=0,
    high=99,
    key="window/tab",
)

SETTINGS: Final[Mapping[str, Setting[Any]]] = {
    setting.name: setting
    for setting in (
        DEFAULT_PROFILE,
        LISTENER_ENABLED,
        LISTENER_HOST,
        LISTENER_PUBLIC_HOST,
        LISTENER_PORT,
        LISTENER_SECRET,
        REPLIES_SEEN_UP_TO,
        RULES_DONE_UP_TO,
        LOGS_HEADER,
        OPT_OUT_KEYWORDS,
        OPT_IN_KEYWORDS,
        MARKETING_DEFAULT,
        OPT_OUT_INSTRUCTION,
        QUIET_HOURS_ON,
        QUIET_HOURS,
        TEAM_REPLY_PATH,
        REPLY_RULES,
        OWN_NUMBER,
        REPEAT_WINDOW_HOURS,
        WINDOW_GEOMETRY,
        WINDOW_TAB,
    )
}
"""Every setting by name."""


def kept_in(place: Place) -> list[Setting[Any]]:
    """The settings a place keeps."""
    return [setting for setting in SETTINGS.values() if setting.place is place]
