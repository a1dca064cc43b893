"""An SMS text editor that shows what the text costs while it is typed.

One stray character ("é" is GSM-7, but "‘" or an emoji is not) turns the whole
message into UCS-2 and cuts a part from 160 to 70 characters, so the editor
highlights every character that does that, names them, and keeps a live count of
characters, parts, encoding and room left in the part (`gwdesk.domain.segments`).

Self-contained so the Send and Batch tabs and the reply box can share it: it knows
nothing of sending; it emits `changed` and, on Ctrl+Enter, `submit_requested`
(`SubmitTextEdit`, which the Fax / MMS forms use for their texts too). A marketing
message ends with the profile's opt-out instruction (`set_appended`): the count is
of the text as it will go, instruction included, so the parts shown are the parts paid.

Where the text is a template (`templates=True`: the Send and Batch tabs, a
conversation's reply box), its placeholders (`{first name}`, `{clinic|Glebe}`) are
marked as such and listed under the count, and a template that cannot be read (a
brace left open) says where, as it is typed.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QKeyEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from gwdesk.app.sms import with_instruction
from gwdesk.domain.segments import MAX_PARTS, Encoding, SegmentInfo, count_segments, is_gsm7
from gwdesk.domain.templates import Template, TemplateError, parse_template
from gwdesk.ui.plain_text import PlainLabel, tooltip
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.validity import set_invalid, set_role

#: Separators Qt keeps inside a document for what the operator typed as a new line.
_LINE_BREAKS: Final = str.maketrans({"\u2029": "\n", "\u2028": "\n"})
#: Characters named in the label before "and N more" (the tooltip lists more).
NAMED_IN_LABEL: Final = 8
NAMED_IN_TOOLTIP: Final = 40
COUNT_DELAY_MS: Final = 40
HIGHLIGHT: Final = QColor("#ffb300")
PLACEHOLDER_FILL: Final = QColor(30, 136, 229, 45)
PLACEHOLDER_TEXT: Final = QColor("#1565c0")
#: Placeholders named in the line under the count before "and N more".
NAMED_PLACEHOLDERS: Final = 6
#: Widget-scoped: the application sheet has no warning colour for labels.
LOCAL_STYLE: Final = 'QLabel[role="warning"] { color: #e65100; font-weight: 600; }'


def document_text(document: QTextDocument) -> str:
    """The text exactly as typed: `toPlainText` would turn a no-break space into a space,
    and that space would then be counted as GSM-7 while the highlighter marks it."""
    return document.toRawText().translate(_LINE_BREAKS)


def shown_character(char: str) -> str:
    """A character as a label can show it: invisible and combining ones by code point,
    right-to-left ones followed by a left-to-right mark so a list of them keeps its order."""
    category = unicodedata.category(char)
    if not char.isprintable() or char.isspace() or category in ("Mn", "Me", "Cf", "Zs"):
        return f"U+{ord(char):04X}"
    if unicodedata.bidirectional(char) in ("R", "AL"):
        return f"{char}\u200e"
    return char


def describe_character(char: str) -> str:
    name = unicodedata.name(char, "unnamed character").lower()
    return f"{shown_character(char)}  U+{ord(char):04X} {name}"


def ucs2_summary(info: SegmentInfo) -> str:
    """`é, ‘ force UCS-2: 70 characters per part`, or what GSM-7 text allows."""
    if info.encoding is Encoding.GSM7:
        return "GSM-7 text: 160 characters per part, 153 each when split."
    chars = info.non_gsm
    named = ", ".join(shown_character(c) for c in chars[:NAMED_IN_LABEL])
    if len(chars) > NAMED_IN_LABEL:
        named += f" and {len(chars) - NAMED_IN_LABEL} more"
    verb = "forces" if len(chars) == 1 else "force"
    return f"{named} {verb} UCS-2: {info.per_part} characters per part."


def counter_text(info: SegmentInfo) -> str:
    chars = "character" if info.characters == 1 else "characters"
    parts = "part" if info.parts == 1 else "parts"
    return (
        f"{info.characters:,} {chars} · {info.parts} {parts} · {info.encoding} · "
        f"{info.remaining} left in this part"
    )


def limit_text(info: SegmentInfo) -> tuple[str, str]:
    """(message, role) about the gateway's 10-part limit; empty when far from it."""
    if info.too_long:
        return (
            f"Too long: {info.parts} parts; the gateway takes at most {MAX_PARTS} "
            f"({MAX_PARTS * 153:,} GSM-7 or {MAX_PARTS * 67} UCS-2 characters).",
            "error",
        )
    if info.parts == MAX_PARTS:
        return (f"At the {MAX_PARTS}-part limit: this part is the last one allowed.", "warning")
    if info.parts == MAX_PARTS - 1:
        return (f"{info.parts} parts: one more part reaches the {MAX_PARTS}-part limit.", "hint")
    return ("", "hint")


def placeholder_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `{...}` placeholder in one line, in code points; `{{` and `}}`
    are literal braces, and a `{` never closed on the line marks nothing."""
    spans: list[tuple[int, int]] = []
    index, length = 0, len(text)
    while index < length:
        opened = text.find("{", index)
        if opened < 0:
            break
        if text.startswith("{{", opened):
            index = opened + 2
            continue
        closed = text.find("}", opened + 1)
        if closed < 0:
            break
        spans.append((opened, closed + 1))
        index = closed + 1
    return spans


def utf16_offsets(text: str) -> list[int]:
    """The UTF-16 position of each code point of `text` (and of its end)."""
    offsets, position = [], 0
    for char in text:
        offsets.append(position)
        position += 2 if ord(char) > 0xFFFF else 1
    offsets.append(position)
    return offsets


LIST_FILLING: Final = (
    "Placeholders, filled in for each recipient",
    "each recipient's own is in the totals and the preview",
)
ONE_FILLING: Final = (
    "Placeholders, filled from the fields of the contact holding the number",
    "Preview shows the message filled in",
)


def template_summary(template: Template, filling: tuple[str, str] = LIST_FILLING) -> str:
    """`Placeholders, filled in for each recipient: {first name}, {clinic|Glebe}. …`."""
    shown = list(dict.fromkeys(p.shown for p in template.placeholders))
    named = ", ".join(shown[:NAMED_PLACEHOLDERS])
    if len(shown) > NAMED_PLACEHOLDERS:
        named += f" and {len(shown) - NAMED_PLACEHOLDERS} more"
    head, count = filling
    return f"{head}: {named}. The count above is of the text as written; {count}."


class Ucs2Highlighter(QSyntaxHighlighter):
    """Marks the characters that force UCS-2, and (for a template) its placeholders.

    Qt positions are UTF-16 units and Python sees code points, so an emoji (a
    surrogate pair) advances the position by two.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.templates = False
        self.marked = QTextCharFormat()
        self.marked.setBackground(HIGHLIGHT)
        self.marked.setForeground(QColor("#212121"))
        self.marked.setToolTip("This character forces UCS-2 (70 characters per part).")
        self.placeholder = QTextCharFormat()
        self.placeholder.setBackground(PLACEHOLDER_FILL)
        self.placeholder.setForeground(PLACEHOLDER_TEXT)
        self.placeholder.setFontWeight(QFont.Weight.DemiBold)
        self.placeholder.setToolTip("A placeholder: each recipient's own value goes here.")

    def highlightBlock(self, text: str) -> None:
        self._mark_ucs2(text)
        if self.templates and "{" in text:
            spans = placeholder_spans(text)
            if spans:
                offsets = utf16_offsets(text)
                for start, end in spans:
                    at = offsets[start]
                    self.setFormat(at, offsets[end] - at, self.placeholder)

    def _mark_ucs2(self, text: str) -> None:
        position = 0
        run_start = -1
        for char in text:
            width = 2 if ord(char) > 0xFFFF else 1
            marked = not is_gsm7(char) and char != "\u2028"
            if marked and run_start < 0:
                run_start = position
            elif not marked and run_start >= 0:
                self.setFormat(run_start, position - run_start, self.marked)
                run_start = -1
            position += width
        if run_start >= 0:
            self.setFormat(run_start, position - run_start, self.marked)


class SubmitTextEdit(QPlainTextEdit):
    """Plain text only; Ctrl+Enter asks to send instead of inserting a line: every
    compose box's text (an SMS here, an MMS text or a fax's cover page)."""

    submit_requested = Signal()

    def __init__(self, parent: QWidget | None = None, *, size_hint: QSize | None = None) -> None:
        super().__init__(parent)
        self._size_hint = size_hint

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            event.accept()
            self.submit_requested.emit()
            return
        super().keyPressEvent(event)

    def sizeHint(self) -> QSize:
        return self._size_hint or super().sizeHint()


class MessageEditor(QWidget):
    """Editor + counter + UCS-2 line + limit warning."""

    changed = Signal()
    submit_requested = Signal()

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        accessible_name: str = "Message",
        templates: bool = False,
        filling: tuple[str, str] = LIST_FILLING,
    ) -> None:
        """`templates`: the text may hold placeholders, filled as `filling` says
        (`LIST_FILLING` for a list's rows, `ONE_FILLING` for one number's contact)."""
        super().__init__(parent)
        self.templates = templates
        self.filling = filling
        self.setStyleSheet(LOCAL_STYLE)
        self.edit = SubmitTextEdit(size_hint=QSize(420, 160))
        self.edit.setAccessibleName(accessible_name)
        self.edit.setPlaceholderText("Type the message. Ctrl+Enter sends.")
        self.edit.setTabChangesFocus(True)
        self.edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        font = QFont(self.edit.font())
        font.setPointSizeF(font.pointSizeF() * 1.08)
        self.edit.setFont(font)
        self.setFocusProxy(self.edit)
        self.highlighter = Ucs2Highlighter(self.edit.document())
        self.highlighter.templates = templates
        self.counter = QLabel()
        self.counter.setObjectName("CounterLabel")
        self.counter.setAccessibleName("Message length")
        self.counter.setToolTip(
            "Characters, SMS parts, encoding, and the room left before another part is needed"
        )
        self.encoding_label = PlainLabel()
        self.encoding_label.setAccessibleName("Encoding")
        self.encoding_label.setWordWrap(True)
        self.limit_label = QLabel()
        self.limit_label.setAccessibleName("Length limit")
        self.limit_label.setWordWrap(True)
        self.limit_label.hide()
        self.appended_label = PlainLabel()  # the profile's instruction: the operator's text
        self.appended_label.setAccessibleName("Opt-out instruction")
        self.appended_label.setProperty("role", "hint")
        self.appended_label.setWordWrap(True)
        self.appended_label.hide()
        self.template_label = PlainLabel()  # placeholder names are the operator's text
        self.template_label.setAccessibleName("Placeholders")
        self.template_label.setWordWrap(True)
        self.template_label.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.counter)
        layout.addWidget(self.template_label)
        layout.addWidget(self.appended_label)
        layout.addWidget(self.encoding_label)
        layout.addWidget(self.limit_label)

        self._text = ""
        self._appended = ""
        self._counted = ""
        self._info = count_segments("")
        self._template: Template | TemplateError | None = None
        self._template_text: str | None = None
        self._timer = single_shot(self, COUNT_DELAY_MS, self.refresh)
        self.edit.textChanged.connect(self._typed)
        self.edit.submit_requested.connect(self.submit_requested.emit)
        self.refresh()

    # ---- value -------------------------------------------------------------------------

    def text(self) -> str:
        return document_text(self.edit.document())

    def set_text(self, text: str) -> None:
        """Replace the text (a restored draft) and count it at once."""
        self.edit.setPlainText(text)
        self.refresh()

    def clear(self) -> None:
        self.set_text("")

    def set_appended(self, instruction: str) -> None:
        """Count the text with `instruction` on a line of its own after it (a marketing
        message's opt-out instruction); "" counts the text alone."""
        if instruction != self._appended:
            self._appended = instruction
            self.refresh()

    def sent_text(self) -> str:
        """The text as it will be sent: what was typed, and the instruction if any."""
        text = self.text()
        return with_instruction(text, self._appended) if self._appended and text.strip() else text

    def template(self) -> Template | TemplateError | None:
        """The text read as a template (`templates=True`): a `Template`, the
        `TemplateError` saying why it cannot be read, or None for text with no brace."""
        if self._timer.isActive():
            self.refresh()
        return self._template

    def info(self) -> SegmentInfo:
        """The count of the current text (counted now if the debounce has not run yet)."""
        if self._timer.isActive():
            self.refresh()
        return self._info

    # ---- state -------------------------------------------------------------------------

    def set_invalid(self, invalid: bool) -> None:
        set_invalid(self.edit, invalid)

    def _typed(self) -> None:
        self._timer.start()
        self.changed.emit()

    def refresh(self) -> None:
        self._timer.stop()
        text = self.text()
        counted = self.sent_text() if text.strip() else text
        if counted != self._counted or text != self._text:
            self._text, self._counted = text, counted
            self._info = count_segments(counted)
        info = self._info
        self.counter.setText(counter_text(info))
        self.appended_label.setVisible(bool(self._appended))
        if self._appended:
            added = "counted above" if counted != text else "already at the end of the text"
            self.appended_label.setText(
                f"Marketing: ends with “{' '.join(self._appended.split())}” on its own line "
                f"({added}), so the recipient can opt out."
            )
        self.encoding_label.setText(ucs2_summary(info))
        set_role(self.encoding_label, "warning" if info.encoding is Encoding.UCS2 else "hint")
        self.encoding_label.setToolTip(
            tooltip("\n".join(describe_character(c) for c in info.non_gsm[:NAMED_IN_TOOLTIP]))
            if info.non_gsm
            else "Every character is in the GSM 03.38 alphabet."
        )
        self._show_template(text)
        message, role = limit_text(info)
        self.limit_label.setText(message)
        set_role(self.limit_label, role)
        self.limit_label.setVisible(bool(message))
        self.set_invalid(info.too_long)

    def _show_template(self, text: str) -> None:
        if text == self._template_text:
            return
        self._template_text = text
        if not self.templates or ("{" not in text and "}" not in text):
            self._template = None
            self.template_label.hide()
            return
        try:
            self._template = parse_template(text)
        except TemplateError as exc:
            self._template = exc
            self.template_label.setText(f"Not a usable template: {exc}")
            set_role(self.template_label, "error")
            self.template_label.show()
            return
        if not self._template.personal:
            self.template_label.setText("{{ and }} are sent as single braces.")
            set_role(self.template_label, "hint")
        else:
            self.template_label.setText(template_summary(self._template, self.filling))
            set_role(self.template_label, "hint")
        self.template_label.show()
