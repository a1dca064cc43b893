"""Characters that change how a name looks without showing themselves.

A file name holding U+202E RIGHT-TO-LEFT OVERRIDE reads backwards from that point:
`invoice<U+202E>fdp.txt` shows as `invoicetxt.pdf` on the recipient's screen.
Zero-width and other format characters hide inside a name that looks like another,
and control characters are not text at all. Names that are sent (attachments,
senders) are checked with `first_hidden` and refused with `describe_hidden`'s words,
which name the character by its code point, so the reason itself cannot be misread.
"""

from __future__ import annotations

import unicodedata
from typing import Final

#: The explicit directional formatting characters: embeddings, overrides, isolates, marks.
BIDI_CONTROLS: Final = frozenset(
    "\u202a\u202b\u202c\u202d\u202e"  # LRE, RLE, PDF, LRO, RLO
    "\u2066\u2067\u2068\u2069"  # LRI, RLI, FSI, PDI
    "\u200e\u200f\u061c"  # LRM, RLM, ALM
)
#: Control (C0, C1, DEL) and format characters (zero-width, BOM, soft hyphen, tags...),
#: surrogates left over from undecodable bytes, and the Unicode line and paragraph
#: separators: none of them shows as itself (every bidi control is a format character).
HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def is_hidden(char: str) -> bool:
    return char in BIDI_CONTROLS or unicodedata.category(char) in HIDDEN_CATEGORIES


def first_hidden(text: str) -> str | None:
    """The first character of `text` that does not show as itself, or None."""
    return next((char for char in text if is_hidden(char)), None)


def describe_hidden(char: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE, which makes it display differently from what it is`."""
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "")
    named = f"{code} {name}" if name else code
    if char in BIDI_CONTROLS:
        return f"{named}, which makes it display differently from what it is"
    category = unicodedata.category(char)
    if category == "Cc":
        return f"{named}, a control character"
    if category in ("Zl", "Zp"):
        return f"{named}, a line break"
    return f"{named}, an invisible character"


def visible(text: str) -> str:
    """`text` with each hidden character written as `⟨U+XXXX⟩`: safe to show in a reason."""
    if first_hidden(text) is None:
        return text
    return "".join(f"⟨U+{ord(c):04X}⟩" if is_hidden(c) else c for c in text)
