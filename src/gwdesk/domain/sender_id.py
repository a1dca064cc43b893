"""A message's sender as the recipient's phone will show it: ACMA's Sender ID rules.

The gateway accepts a sender number or a name (the real service takes names longer
than 11 characters), but Australian handsets and ACMA's Sender ID Register decide
what the recipient sees. From 1 July 2026 an alphanumeric sender that is not
registered shows as "Unverified"; the register takes names of 2 to 11 characters
in ASCII 32 to 126, not all digits, without a space or underscore at either end,
and never "Unverified" itself. An alphanumeric sender cannot be replied to, so a
message that asks for a reply (or carries "Reply STOP") cannot come from one.

`check_sender_id` reads what the operator typed: a number is normalised as a number;
a name is kept as typed, with errors (the message would mislead or break: refused
before sending) and warnings (it will go, but may show differently).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from gwdesk.domain.numbers import NumberError, normalise

MIN_NAME: Final = 2
MAX_NAME: Final = 11
"""What handsets show and the Sender ID Register takes."""
MAX_SENDER: Final = 50
"""What the gateway takes at most (longer is refused by the console before it asks)."""
RESERVED: Final = "unverified"
_EDGES: Final = (" ", "_")


class SenderKind(StrEnum):
    NUMBER = "number"
    NAME = "name"


@dataclass(frozen=True, slots=True)
class SenderCheck:
    """A sender read by the rules: its kind, the value to send, and what to tell."""

    kind: SenderKind
    value: str
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def can_receive_replies(self) -> bool:
        return self.kind is SenderKind.NUMBER


@dataclass
class _Notes:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _looks_numeric(text: str) -> bool:
    """Digits with the usual phone punctuation, and at least a few digits."""
    stripped = text.strip()
    allowed = set("0123456789+ ()-.")
    digits = sum(c.isdigit() for c in stripped)
    return bool(stripped) and all(c in allowed for c in stripped) and digits >= 3


def check_sender_id(text: str, region: str) -> SenderCheck:
    """What `text` is as a sender, and every rule it breaks (an empty text is no sender:
    the account's default applies; callers do not ask)."""
    if _looks_numeric(text):
        try:
            return SenderCheck(SenderKind.NUMBER, normalise(text, region))
        except NumberError as exc:
            return SenderCheck(
                SenderKind.NUMBER, text, errors=(f"The sender number is not usable: {exc.reason}.",)
            )
    notes = _Notes()
    _name_rules(text, notes)
    return SenderCheck(SenderKind.NAME, text, tuple(notes.errors), tuple(notes.warnings))


def _name_rules(name: str, notes: _Notes) -> None:
    outside = sorted({c for c in name if not 32 <= ord(c) <= 126})
    if outside:
        shown = ", ".join(f"U+{ord(c):04X}" for c in outside[:3])
        notes.errors.append(
            f"A sender name may hold only plain ASCII letters, digits, spaces and punctuation; "
            f"it holds {shown}."
        )
    if len(name) > MAX_SENDER:
        notes.errors.append(f"A sender name is at most {MAX_SENDER} characters.")
    if name.strip().casefold() == RESERVED:
        notes.errors.append(
            '"Unverified" is what phones show for unregistered senders; choose another.'
        )
    if name[:1] in _EDGES or name[-1:] in _EDGES:
        notes.errors.append("A sender name may not start or end with a space or an underscore.")
    if name.strip().isdigit():
        notes.errors.append("A sender name may not be all digits: use a phone number instead.")
    if len(name) > MAX_NAME:
        notes.warnings.append(
            f"{len(name)} characters: phones show at most {MAX_NAME}, and the Sender ID "
            'Register takes no longer name, so it may show as "Unverified".'
        )
    elif len(name) < MIN_NAME:
        notes.warnings.append(
            f"One character: the Sender ID Register takes names of {MIN_NAME} to {MAX_NAME}, "
            'so it may show as "Unverified".'
        )
