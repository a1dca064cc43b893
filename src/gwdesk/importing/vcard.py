"""vCard text (2.1, 3.0, 4.0) to contact cards, as phones and address books export it.

What is read: `FN` (or, without it, `N`'s given and family names) as the name; each
`TEL` as a number (`tel:` URIs too; one marked preferred first); `NOTE` as the
notes; `CATEGORIES` as groups; every `X-` property (`X-CLINIC`) as a field named
after it without the prefix (`CLINIC`), and `N`'s given and family names as the
fields `first name` and `last name`. The rest (photos, addresses, e-mail) is left.

Lines are unfolded (a line starting with a space or tab continues the last one),
quoted-printable values are decoded (with their soft line breaks and `CHARSET`),
as are base64 ones, and text values are unescaped (`\\n`, `\\,`, `\\;`, `\\\\`).
A card that is never closed, holds a number that is not usable, or any value a
contact may not hold (`gwdesk.domain.contacts.card_problem`: control characters,
endless values) is listed with its line and reason; the others are read.
"""

from __future__ import annotations

import base64
import binascii
import quopri
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from gwdesk.domain.contacts import ContactCard, card_problem, unique_fields, unique_groups
from gwdesk.importing.decoding import ImportFailed
from gwdesk.importing.fastnumbers import CachedNormaliser, Unusable
from gwdesk.importing.recipients import InvalidRow
from gwdesk.importing.table import MAX_ROWS

#: A card with more properties than this is not a contact someone keeps.
MAX_PROPERTIES: Final = 2_000
_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
_ESCAPE: Final = re.compile(r"\\(.)", re.DOTALL)
_UNESCAPED: Final = {"n": "\n", "N": "\n", ",": ",", ";": ";", "\\": "\\"}
_COMMA: Final = re.compile(r"(?<!\\),")


@dataclass(frozen=True, slots=True)
class Property:
    name: str
    """Upper case, without its group (`item1.`)."""
    grouped: bool
    params: dict[str, list[str]]
    """Parameter names upper case; a vCard 2.1 bare parameter (`;CELL`) is a TYPE."""
    value: str


@dataclass(slots=True)
class _Card:
    line: int
    properties: list[Property] = field(default_factory=list)
    problem: str = ""


def unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group(0)), text)


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, unfolded line): continuation lines joined, quoted-printable soft
    breaks (a QP value ending in `=`) joined to the next line."""
    pieces: list[str] = []
    start, qp = 0, False
    for index, line in enumerate(_LINE_BREAK.split(text), start=1):
        if pieces:
            if line[:1] in (" ", "\t"):
                pieces.append(line[1:])
                continue
            if qp and pieces[-1].endswith("="):
                pieces[-1] = pieces[-1][:-1]
                pieces.append(line)
                continue
            yield (start, "".join(pieces))
        pieces, start = [line], index
        qp = "QUOTED-PRINTABLE" in line.split(":", 1)[0].upper()
    if pieces:
        yield (start, "".join(pieces))


def _outside_quotes(text: str, mark: str) -> Iterator[int]:
    """Where `mark` occurs outside double quotes (in one pass of C-speed finds: a hostile
    line of megabytes costs no more than reading it)."""
    start = 0
    while True:
        found = text.find(mark, start)
        if found == -1:
            return
        quote = text.find('"', start, found)
        if quote == -1:
            yield found
            start = found + 1
            continue
        close = text.find('"', quote + 1)
        if close == -1:
            return
        start = close + 1


def _split_head(line: str) -> tuple[str, str] | None:
    """(name and parameters, value): split at the first colon outside quotes."""
    colon = next(_outside_quotes(line, ":"), None)
    return None if colon is None else (line[:colon], line[colon + 1 :])


def _split_params(head: str) -> list[str]:
    parts, start = [], 0
    for semicolon in _outside_quotes(head, ";"):
        parts.append(head[start:semicolon])
        start = semicolon + 1
    parts.append(head[start:])
    return parts


def _params(parts: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for part in parts:
        if not part:
            continue
        name, equals, value = part.partition("=")
        key = name.strip().upper() if equals else "TYPE"
        values = value if equals else name
        for item in values.split(","):
            found.setdefault(key, []).append(item.strip().strip('"'))
    return found


def parse_property(line: str) -> Property | None:
    """One content line, or None when it is not one (no colon)."""
    split = _split_head(line)
    if split is None:
        return None
    head, value = split
    parts = _split_params(head)
    qualified = parts[0].strip()
    group, dot, name = qualified.rpartition(".")
    return Property(name.upper(), bool(dot and group), _params(parts[1:]), value)


def decoded(prop: Property) -> str:
    """The property's value as text: quoted-printable or base64 decoded (in its CHARSET)."""
    encoding = [e.upper() for e in prop.params.get("ENCODING", [])]
    types = [t.upper() for t in prop.params.get("TYPE", [])]
    charset = (prop.params.get("CHARSET") or ["utf-8"])[0] or "utf-8"
    raw: bytes | None = None
    if "QUOTED-PRINTABLE" in encoding or "QUOTED-PRINTABLE" in types:
        raw = quopri.decodestring(prop.value.encode("utf-8", "replace"))
    elif any(e in ("B", "BASE64") for e in encoding):
        try:
            raw = base64.b64decode(prop.value.encode("ascii", "replace"), validate=False)
        except (binascii.Error, ValueError):
            raise ValueError(f"its {prop.name} is not valid base64") from None
    if raw is None:
        return prop.value
    try:
        return raw.decode(charset, errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


def _preferred(prop: Property) -> bool:
    types = [t.upper() for t in prop.params.get("TYPE", [])]
    return "PREF" in types or prop.params.get("PREF", ["100"])[0] == "1"


def _number_text(value: str) -> str:
    text = value.strip()
    if text.lower().startswith("tel:"):
        text = text[4:].split(";", 1)[0]
    return text


def card_from(card: _Card, reader: CachedNormaliser) -> ContactCard | str:
    """The card, or why it cannot be kept."""
    name = ""
    given = family = ""
    numbers: list[tuple[bool, str]] = []
    notes: list[str] = []
    groups: list[str] = []
    fields: list[tuple[str, str]] = []
    for prop in card.properties:
        try:
            value = decoded(prop)
        except ValueError as exc:
            return str(exc)
        if prop.name == "FN":
            name = unescape(value).strip()
        elif prop.name == "N":
            parts = [unescape(p).strip() for p in re.split(r"(?<!\\);", value)]
            family, given = [*parts, "", ""][:2]
        elif prop.name == "TEL":
            text = _number_text(value)
            if not text:
                continue
            result = reader.read(text)
            if isinstance(result, Unusable):
                return f"TEL {text[:40]!r} is not a usable number: {result.reason}"
            numbers.append((not _preferred(prop), result))
        elif prop.name == "NOTE":
            notes.append(unescape(value))
        elif prop.name == "CATEGORIES":
            groups.extend(unescape(g) for g in _COMMA.split(value))
        elif prop.name.startswith("X-") and not prop.grouped and len(prop.name) > 2:
            fields.append((prop.name[2:], unescape(value)))
    if not name:
        name = " ".join(p for p in (given, family) if p)
    named = [("first name", given), ("last name", family)]
    ordered = tuple(dict.fromkeys(n for _, n in sorted(numbers, key=lambda item: item[0])))
    made = ContactCard(
        name=name,
        numbers=ordered,
        fields=unique_fields((*named, *fields)),
        groups=unique_groups(groups),
        notes="\n".join(n for n in notes if n.strip()).strip(),
    )
    return card_problem(made) or made


def _cards(text: str) -> Iterator[_Card]:
    card: _Card | None = None
    depth = 0
    for line_number, line in logical_lines(text):
        stripped = line.strip()
        upper = stripped.upper()
        if upper == "BEGIN:VCARD":
            if card is None:
                card, depth = _Card(line_number), 1
            else:
                depth += 1  # an embedded card (AGENT): not a contact of its own
            continue
        if card is None:
            continue
        if upper == "END:VCARD":
            depth -= 1
            if depth == 0:
                yield card
                card = None
            continue
        if depth > 1 or not stripped or card.problem:
            continue
        prop = parse_property(line)
        if prop is None:
            card.problem = f"line {line_number} is not a vCard property (no colon)"
        elif len(card.properties) >= MAX_PROPERTIES:
            card.problem = f"it has more than {MAX_PROPERTIES:,} lines"
        else:
            card.properties.append(prop)
    if card is not None:
        card.problem = "it is never closed (no END:VCARD before the file ends)"
        yield card


@dataclass(frozen=True, slots=True)
class ReadCards:
    cards: tuple[ContactCard, ...]
    rows: tuple[int, ...]
    """The line each card begins on."""
    invalid: tuple[InvalidRow, ...]


def read_vcards(text: str, region: str) -> ReadCards:
    """Every card of a vCard file's text (`ImportFailed` when there is none)."""
    reader = CachedNormaliser(region)
    cards: list[ContactCard] = []
    rows: list[int] = []
    invalid: list[InvalidRow] = []
    seen: dict[str, int] = {}
    total = 0
    for found in _cards(text):
        total += 1
        if total > MAX_ROWS:
            raise ImportFailed(f"The file has more than {MAX_ROWS:,} cards; split it.")
        shown = _shown(found)
        if found.problem:
            invalid.append(InvalidRow(found.line, shown, found.problem))
            continue
        made = card_from(found, reader)
        if isinstance(made, str):
            invalid.append(InvalidRow(found.line, shown, made))
            continue
        again = next((seen[n] for n in made.numbers if n in seen), None)
        if again is not None:
            invalid.append(
                InvalidRow(found.line, shown, f"a number of it is on the card of line {again}")
            )
            continue
        seen.update(dict.fromkeys(made.numbers, found.line))
        cards.append(made)
        rows.append(found.line)
    if not total:
        raise ImportFailed("There is no vCard in the file (no BEGIN:VCARD line).")
    return ReadCards(tuple(cards), tuple(rows), tuple(invalid))


def _shown(card: _Card) -> str:
    """What an unusable card is listed as: its FN, else the line it begins on."""
    for prop in card.properties:
        if prop.name == "FN":
            return unescape(prop.value)[:100]
    return "BEGIN:VCARD"
