"""Text from outside, made safe to write on an operator's terminal.

A customer's reply, a gateway's message or a file name may hold characters a
terminal acts on instead of showing: escape sequences (ESC, the 8-bit CSI U+009B)
that set the window title, clear the screen, write the clipboard (OSC 52) or hide
a link (OSC 8); line breaks that start a fake line; bidirectional overrides and
invisible format characters that make a line read differently from what it holds.
`terminal_safe` shows each of them as a visible escape (`\\x1b`, `\\u202e`, `\\n`),
so a line says exactly what it holds and nothing else; every other character,
accents, emoji and CJK included, is left as it is.

Backslashes are left alone too: escaping is idempotent (a line escaped twice reads
as if escaped once, so no layer can double an escape, and a Windows path or a
Python repr in a message stays readable). The one ambiguity that leaves: text that
spells an escape literally (the four characters `\\x1b`) looks like the character;
it is harmless, since neither can act on the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Final

from gwdesk.domain.hidden_chars import is_hidden

_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NOT_ASCII_RUN: Final = re.compile("[^ -~]+")


def _visible(char: str) -> str:
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escaped(text: str, escape: Callable[[str], str]) -> str:
    # str.isprintable() is False for every hidden category, so most text is returned
    # as it is; otherwise only runs outside printable ASCII are looked at closely.
    if text.isprintable():
        return text

    def run(match: re.Match[str]) -> str:
        chars = match.group()
        if chars.isprintable():
            return chars
        return "".join(escape(c) if is_hidden(c) else c for c in chars)

    return _NOT_ASCII_RUN.sub(run, text)


def terminal_safe(text: str) -> str:
    """`text` for one line of a terminal: hidden characters shown as escapes (see above)."""
    return _escaped(text, _visible)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


def terminal_json(data: object) -> str:
    """`data` as one line of JSON that decodes to exactly `data` and is safe on a terminal.

    `json.dumps(ensure_ascii=False)` escapes only C0 controls: C1 controls (the
    8-bit CSI), bidi overrides, U+2028 and lone surrogates would reach the terminal
    raw. They only ever stand inside JSON strings, where `\\uXXXX` means the same.
    """
    return _escaped(json.dumps(data, ensure_ascii=False, default=str), _json_escape)
