"""Message templates: `{field}` placeholders, `{field|fallback}`, and `{{` `}}` for braces.

"Hi {first name|there}, your check-up at {clinic} is due on {due}" is sent to each
recipient with their own values: a CSV column's header or a contact's field names a
field, in any letter case and spacing (`{First  Name}` is `first name`). A value
that is missing or blank takes the placeholder's fallback; without one the
recipient cannot be sent to (`MissingValue` names the field), so no message ever
goes out with a hole in it.

A template that cannot be read (a brace left open, a placeholder without a name)
is refused when it is parsed, with the character position of the fault, before
any recipient is looked at. Pure: no I/O; rendering is a join over pieces parsed
once, fast enough for 100,000 recipients.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from gwdesk.domain.hidden_chars import describe_hidden, first_hidden

#: Longer templates are refused before parsing: ten SMS parts are about 1,530 characters.
MAX_TEMPLATE: Final = 10_000
MAX_FIELD_NAME: Final = 64
BRACE_HINT: Final = "write {{ or }} for a brace in the text"
_BRACE: Final = re.compile(r"[{}]")


class TemplateError(ValueError):
    """A template that cannot be read; `position` is the 1-based character of the fault."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(f"{reason} (character {position:,}).")
        self.reason = reason
        self.position = position


def field_key(name: str) -> str:
    """How a field is matched: spacing collapsed, letter case folded (`First  Name` ->
    `first name`), the same for placeholders, CSV headers and contacts' fields."""
    return " ".join(name.split()).casefold()


@dataclass(frozen=True, slots=True)
class Placeholder:
    name: str
    """As written (spacing trimmed): what a refusal names."""
    key: str
    """`field_key(name)`: what values are looked up by."""
    fallback: str | None
    """What a missing or blank value becomes; None: the recipient cannot be sent to."""
    position: int
    """1-based character of its `{`."""

    @property
    def shown(self) -> str:
        """`{first name}` or `{first name|there}`, as an operator would write it."""
        tail = f"|{self.fallback}" if self.fallback is not None else ""
        return f"{{{self.name}{tail}}}"


class MissingValue(LookupError):
    """A recipient with no value for a placeholder that has no fallback."""

    def __init__(self, placeholder: Placeholder) -> None:
        super().__init__(f"no value for {placeholder.shown}")
        self.placeholder = placeholder


Piece = str | Placeholder


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template (`parse_template`): literal text and placeholders, in order."""

    source: str
    pieces: tuple[Piece, ...]

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Placeholder))

    @property
    def fields(self) -> tuple[str, ...]:
        """The field keys the template asks for, each once, in order of first use."""
        return tuple(dict.fromkeys(p.key for p in self.placeholders))

    @property
    def personal(self) -> bool:
        """Whether it has any placeholder (a template without one is the same for all)."""
        return any(isinstance(p, Placeholder) for p in self.pieces)

    @property
    def literal(self) -> str:
        """The text around the placeholders (braces unescaped), without any value."""
        return "".join(p for p in self.pieces if isinstance(p, str))

    def required(self) -> tuple[Placeholder, ...]:
        """The placeholders without a fallback: each recipient needs a value for them."""
        return tuple(p for p in self.placeholders if p.fallback is None)

    def render(self, values: Mapping[str, str]) -> str:
        """The text for one recipient; `values` is keyed by `field_key`. A missing or
        empty value takes the fallback; without one `MissingValue` is raised."""
        out: list[str] = []
        for piece in self.pieces:
            if isinstance(piece, str):
                out.append(piece)
                continue
            value = values.get(piece.key)
            if not value:
                if piece.fallback is None:
                    raise MissingValue(piece)
                value = piece.fallback
            out.append(value)
        return "".join(out)

    def merged(self, values: Mapping[str, str]) -> tuple[tuple[Placeholder, str], ...]:
        """The values a rendering takes from `values` (fallbacks aside), each with its
        placeholder: what a report names when a value changes the message."""
        used = []
        for piece in self.placeholders:
            value = values.get(piece.key)
            if value:
                used.append((piece, value))
        return tuple(used)


def _placeholder(inner: str, start: int) -> Placeholder:
    name, bar, fallback = inner.partition("|")
    name = name.strip()
    if not name:
        raise TemplateError(
            "A placeholder has no field name: write {first name} or {first name|there}, "
            f"or {BRACE_HINT}",
            start,
        )
    hidden = first_hidden(inner)
    if hidden is not None:
        raise TemplateError(
            f"The placeholder holds {describe_hidden(hidden)}",
            start + 1 + inner.index(hidden),
        )
    if len(name) > MAX_FIELD_NAME:
        raise TemplateError(
            f"The field name {name[:20]!r}… is longer than {MAX_FIELD_NAME} characters", start
        )
    return Placeholder(name, field_key(name), fallback.strip() if bar else None, start)


def parse_template(text: str) -> Template:
    """Read a template; `TemplateError` with the position of the first fault."""
    if len(text) > MAX_TEMPLATE:
        raise TemplateError(
            f"The template is {len(text):,} characters long; at most {MAX_TEMPLATE:,} are taken",
            MAX_TEMPLATE + 1,
        )
    pieces: list[Piece] = []
    literal: list[str] = []
    index, length = 0, len(text)
    while index < length:
        found = _BRACE.search(text, index)
        if found is None:
            literal.append(text[index:])
            break
        at = found.start()
        literal.append(text[index:at])
        if text.startswith("{{", at) or text.startswith("}}", at):
            literal.append(text[at])
            index = at + 2
            continue
        if text[at] == "}":
            raise TemplateError(f"This }} closes no placeholder: {BRACE_HINT}", at + 1)
        end = text.find("}", at + 1)
        opened = text.find("{", at + 1)
        if end == -1:
            raise TemplateError(
                f"This {{ is never closed: end the placeholder with }}, or {BRACE_HINT}", at + 1
            )
        if opened != -1 and opened < end:
            raise TemplateError(
                f"This {{ is not closed before the next {{ (character {opened + 1:,}): "
                f"end the placeholder with }}, or {BRACE_HINT}",
                at + 1,
            )
        if literal:
            pieces.append("".join(literal))
            literal = []
        pieces.append(_placeholder(text[at + 1 : end], at + 1))
        index = end + 1
    tail = "".join(literal)
    if tail:
        pieces.append(tail)
    return Template(text, tuple(pieces))
