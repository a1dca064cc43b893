"""Text from outside shown as text: never markup, never control codes.

Replies, keyword forwards, log records, status and Lodge answers, gateway error
messages, CSV cells, file names and profile values are data. Qt guesses whether a
string is rich text (`Qt.mightBeRichText`) for labels in `AutoText`, tooltips,
message boxes and chart titles alike, and rich text fetches images: a customer's
reply `<img src="/dev/zero">` shown as a tooltip reads /dev/zero until memory runs
out. So every string from outside reaches the screen through this module:

- `PlainLabel` for labels (plain text format, control codes made visible);
- `tooltip()` for tooltips (rich text that Qt shows as exactly the characters);
- `html_text()` inside rich text the console composes itself;
- `visible()` for text drawn as plain text anyway (table cells, combo items);
- `plain_box()`, `window_title()` and `notification_text()` for the rest.

Control codes (NUL, ESC, BEL...) become their visible symbols (␀ ␛ ␇); bidi
embeddings, overrides and isolates, which would reorder the text around them
(`invoice`, U+202E, `fdp.exe` shows as `invoiceexe.pdf`), become U+FFFD.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

REPLACEMENT: Final = "\ufffd"
#: Bidi embeddings, overrides and isolates: they reorder what follows them.
BIDI_CONTROLS: Final = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ACTING: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI_CONTROLS + "\ud800-\udfff]")
_STAND_INS: Final[Mapping[int, int | str]] = MappingProxyType(
    {
        **{code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A)},
        0x7F: 0x2421,  # ␡
        **{code: REPLACEMENT for code in range(0x80, 0xA0)},
        **{ord(char): REPLACEMENT for char in BIDI_CONTROLS},
        **{code: REPLACEMENT for code in range(0xD800, 0xE000)},  # unpaired surrogates
    }
)
#: Tooltips keep their spaces, tabs and line breaks.
TOOLTIP_START: Final = '<p style="white-space:pre-wrap">'
TOOLTIP_END: Final = "</p>"


def visible(text: str) -> str:
    """`text` with every character that would act rather than show made visible.

    Line breaks stay line breaks (a CR LF or a lone CR becomes LF) and tabs stay;
    every other control code becomes its symbol, bidi controls and unpaired
    surrogates U+FFFD. Text without them comes back unchanged (the usual case).
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _ACTING.search(text) is None:
        return text
    return text.translate(_STAND_INS)


def html_text(text: str) -> str:
    """`text` for rich text the console composes: escaped, line breaks as `<br>`."""
    return html.escape(visible(text), quote=True).replace("\n", "<br>")


def tooltip(text: str | None) -> str:
    """A tooltip that shows exactly `text` (made `visible`), whatever characters it holds.

    Qt shows a tooltip as rich text when it looks like HTML, so a plain string is
    no safer than markup: `a &lt; b` would show as `a < b`. Always rich text, every
    character escaped, spaces and line breaks kept; empty for no tooltip.
    """
    if not text:
        return ""
    return f"{TOOLTIP_START}{html_text(text)}{TOOLTIP_END}"


class PlainLabel(QLabel):
    """A label for text from outside: plain text format, control codes made visible."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)

    def setText(self, text: str) -> None:
        super().setText(visible(text))
        self._hold_wrapped_height()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._hold_wrapped_height()

    def _hold_wrapped_height(self) -> None:
        """A wrapped label asks for the height its lines take at its width: splitters and
        group boxes do not pass height-for-width on, and a label squeezed to one line
        would cut the rest off."""
        if self.wordWrap() and self.width() > 0:
            needed = self.heightForWidth(self.width()) if self.text() else 0
            if needed != self.minimumHeight():
                self.setMinimumHeight(max(needed, 0))


def wrapped_label(name: str, text: str = "") -> PlainLabel:
    """A plain label that wraps its lines, named `name` for screen readers."""
    label = PlainLabel(text)
    label.setAccessibleName(name)
    label.setWordWrap(True)
    return label


def plain_box(box: QMessageBox) -> QMessageBox:
    """A message box whose every text is plain, control codes visible (call after setting them).

    `setTextFormat` covers only the main text; the informative text has a label of
    its own that Qt leaves in `AutoText`.
    """
    box.setText(visible(box.text()))
    if box.informativeText():
        box.setInformativeText(visible(box.informativeText()))
    if box.detailedText():
        box.setDetailedText(visible(box.detailedText()))  # plain already; control codes are not
    box.setTextFormat(Qt.TextFormat.PlainText)
    for label in box.findChildren(QLabel):
        label.setTextFormat(Qt.TextFormat.PlainText)
    return box


def window_title(text: str) -> str:
    """A window title: one line, visible characters, a literal `[*]` kept (Qt eats it)."""
    return " ".join(visible(text).split()).replace("[*]", "[*][*]")


def notification_text(text: str) -> str:
    """A desktop notification's line: one line, and nothing a notification server reads as markup.

    Qt hands the title and body to the desktop's notification server unescaped,
    and servers that support body markup read `<b>` or `<img>` in it; others show
    an escape literally. So `<`, `>` and `&` become look-alikes that mean nothing.
    """
    flat = " ".join(visible(text).split())
    return flat.replace("&", "\uff06").replace("<", "\u2039").replace(">", "\u203a")
