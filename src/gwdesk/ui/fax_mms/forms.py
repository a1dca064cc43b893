"""The two compose views of the Fax/MMS tab: MMS (single, by URL, multi) and fax.

Each is the message on the left (who, subject, text) and the content on the right
(attachments with previews, or a URL). Errors are shown under the input they are
about; the values are only read, never cleared, so a failed send loses nothing.
"""

from __future__ import annotations

import itertools
from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.media import (
    FAX_RULES,
    MMS_RULES,
    Attached,
    MediaForm,
    Mode,
    Target,
    http_url,
    split_numbers,
)
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.numbers import DEFAULT_REGION, check_recipients
from gwdesk.ui.fax_mms.attachment_files import LoadedFile
from gwdesk.ui.fax_mms.attachments import AttachmentsPanel
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.field_errors import error_label, stacked, text_field
from gwdesk.ui.widgets.message_editor import SubmitTextEdit
from gwdesk.ui.widgets.panes import panes
from gwdesk.ui.widgets.recipient_edit import RecipientEdit
from gwdesk.ui.widgets.validity import set_invalid, set_role

URL_HELP: Final = (
    "It fetches the address when it sends the MMS, so the address must be reachable "
    "from the gateway, not only from this computer. What it finds there must be "
    "something an MMS may carry: {types}; {size} at most."
)


def url_explainer(theme: Theme) -> QFrame:
    """What happens to the address, where attachments would be listed otherwise."""
    frame = QFrame()
    frame.setObjectName("UrlExplainer")
    frame.setStyleSheet("#UrlExplainer { border: 2px dashed palette(mid); border-radius: 8px; }")
    icon = QLabel()
    icon.setPixmap(theme.icon("import").pixmap(40, 40))
    icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
    title = QLabel("The gateway downloads the content itself")
    font = title.font()
    font.setBold(True)
    title.setFont(font)
    title.setAlignment(Qt.AlignmentFlag.AlignCenter)
    text = QLabel(URL_HELP.format(types=MMS_RULES.extensions, size=MMS_RULES.size_label))
    text.setWordWrap(True)
    text.setAlignment(Qt.AlignmentFlag.AlignCenter)
    text.setProperty("role", "hint")
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(24, 12, 24, 12)
    layout.addStretch(1)
    layout.addWidget(icon)
    layout.addWidget(title)
    layout.addWidget(text)
    layout.addStretch(1)
    return frame


def text_edit(name: str, placeholder: str) -> SubmitTextEdit:
    edit = SubmitTextEdit()
    edit.setAccessibleName(name)
    edit.setPlaceholderText(placeholder)
    edit.setTabChangesFocus(True)
    return edit


def chain_focus(*widgets: QWidget) -> None:
    """Tab moves through `widgets` in this order (hidden ones are skipped)."""
    for first, second in itertools.pairwise(widgets):
        QWidget.setTabOrder(first, second)


class RecipientList(QWidget):
    """Several numbers, one a line, with a live count of the usable ones."""

    def __init__(self, region: str = DEFAULT_REGION, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.region = region
        self.edit = QPlainTextEdit()
        self.edit.setAccessibleName("MMS recipients")
        self.edit.setPlaceholderText("One number a line, e.g.\n0412 345 678\n+61 413 222 333")
        self.edit.setTabChangesFocus(True)
        self.edit.setToolTip(
            "Each number gets its own MMS with the same subject, text and attachments, "
            "all lodged in one document. Duplicates are sent once."
        )
        self.edit.setMaximumHeight(120)
        self.feedback = PlainLabel()
        self.feedback.setAccessibleName("MMS recipients check")
        self.feedback.setWordWrap(True)
        self.setFocusProxy(self.edit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.edit)
        layout.addWidget(self.feedback)
        self.edit.textChanged.connect(self.update_feedback)
        self.update_feedback()

    def text(self) -> str:
        return self.edit.toPlainText()

    def set_text(self, text: str) -> None:
        self.edit.setPlainText(text)

    def set_region(self, region: str) -> None:
        self.region = region
        self.update_feedback()

    def update_feedback(self) -> None:
        entries = split_numbers(self.text())
        set_invalid(self.edit, False)
        if not entries:
            self.feedback.setText(f"National numbers are read in region {self.region}.")
            set_role(self.feedback, "hint")
            return
        checked = check_recipients(entries, self.region)
        count = len(checked.numbers)
        text = f"{count} recipient{'' if count == 1 else 's'} ready"
        if checked.duplicates:
            plural = "s" if checked.duplicates > 1 else ""
            text += f" ({checked.duplicates} duplicate{plural} sent once)"
        if checked.rejected:
            first = checked.rejected[0]
            text += f" · not usable: {first.text!r}: {first.reason}"
            if len(checked.rejected) > 1:
                text += f" (and {len(checked.rejected) - 1} more)"
        self.feedback.setText(text)
        set_role(self.feedback, "error" if checked.rejected else "ok")

    def show_error(self, message: str) -> None:
        self.feedback.setText(message)
        set_role(self.feedback, "error")
        set_invalid(self.edit, True)


def attached(files: list[LoadedFile | None], names: list[str]) -> tuple[Attached, ...]:
    return tuple(
        Attached(name, reading=True)
        if loaded is None
        else Attached(loaded.name, loaded.content, loaded.error)
        for loaded, name in zip(files, names, strict=True)
    )


class ComposeForm(QWidget):
    """What the MMS and fax forms share: errors at fields, Ctrl+Enter, the region."""

    submit_requested = Signal()

    def __init__(
        self,
        mode: Mode,
        attachments: AttachmentsPanel,
        *,
        recipient_name: str,
        text_name: str,
        text_placeholder: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.mode = mode
        self.attachments = attachments
        self.recipient = RecipientEdit(accessible_name=recipient_name)
        self.subject = QLineEdit()
        self.subject.setClearButtonEnabled(True)
        self.subject_error = error_label("Subject problem")
        self.text = text_edit(text_name, text_placeholder)
        self.text_error = error_label(f"{text_name} problem")
        self.text.submit_requested.connect(self.submit_requested.emit)

    def lay_out(self, message: QWidget, content: QWidget) -> None:
        """The message on the left, what it carries (files, a link) on the right."""
        split = panes(Qt.Orientation.Horizontal, message, content, stretch=(2, 3), sizes=(480, 720))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    def set_region(self, region: str) -> None:
        self.recipient.set_region(region)

    def files(self) -> tuple[Attached, ...]:
        return attached(self.attachments.files(), self.attachments.names())

    def clear_errors(self) -> None:
        for label, widget in ((self.subject_error, self.subject), (self.text_error, self.text)):
            label.hide()
            set_invalid(widget, False)
        self.recipient.update_feedback()
        self.attachments.clear_errors()

    def show_error(self, target: Target, message: str) -> bool:
        """Show `message` at its input and focus it; False when no input fits."""
        if target.kind == "recipient":
            self.recipient.feedback.setText(message)
            set_role(self.recipient.feedback, "error")
            self.recipient.set_invalid(True)
            self.recipient.setFocus()
            return True
        if target.kind in ("subject", "text"):
            label, widget = (
                (self.subject_error, self.subject)
                if target.kind == "subject"
                else (self.text_error, self.text)
            )
            label.setText(message)
            label.show()
            set_invalid(widget, True)
            widget.setFocus()
            return True
        if target.kind == "file":
            self.attachments.flag_file(target.index, message)
            self.attachments.list.setFocus()
            return True
        if target.kind == "files":
            self.attachments.show_error(message)
            self.attachments.drop_zone.browse.setFocus()
            return True
        return False


class MmsForm(ComposeForm):
    """MMS, MMS by URL and multi-MMS: one form, so switching keeps what was typed."""

    def __init__(self, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(
            Mode.MMS,
            AttachmentsPanel(MMS_RULES, tasks, theme),
            recipient_name="MMS recipient",
            text_name="MMS text",
            text_placeholder="Optional: the text shown with the content. Ctrl+Enter sends.",
            parent=parent,
        )
        self.recipients = RecipientList()
        self.subject.setAccessibleName("MMS subject")
        self.subject.setPlaceholderText("Optional: the title the phone shows")
        self.count = QLabel()
        self.count.setProperty("role", "hint")
        self.count.setAccessibleName("MMS text length")
        self.text.textChanged.connect(self._count)
        # Not a QStackedWidget: that would be as tall as the recipient list even when the
        # single recipient field is shown.
        self.to_box = stacked(self.recipient, self.recipients)

        self.message_box = QGroupBox("MMS")
        form = QFormLayout(self.message_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.to_label = QLabel("&To")
        self.to_label.setBuddy(self.recipient.edit)
        form.addRow(self.to_label, self.to_box)
        subject_label = QLabel("&Subject")
        subject_label.setBuddy(self.subject)
        form.addRow(subject_label, stacked(self.subject, self.subject_error))
        text_label = QLabel("Te&xt")
        text_label.setBuddy(self.text)
        form.addRow(text_label, stacked(self.text, self.count, self.text_error))

        self.attachments_box = QGroupBox("Attachments")
        QVBoxLayout(self.attachments_box).addWidget(self.attachments)

        self.url = text_field(
            "Content URL", placeholder="https://example.com/offer.jpg", clear=True
        )
        self.url.textChanged.connect(self._check_url)
        self.url_check = PlainLabel()
        self.url_check.setAccessibleName("Content URL check")
        self.url_check.setWordWrap(True)
        self.url_box = QGroupBox("Content from a web address")
        url_form = QFormLayout()
        url_label = QLabel("&URL")
        url_label.setBuddy(self.url)
        url_form.addRow(url_label, stacked(self.url, self.url_check))
        url_layout = QVBoxLayout(self.url_box)
        url_layout.addLayout(url_form)
        url_layout.addWidget(url_explainer(theme), 1)
        self.content_stack = QStackedWidget()
        self.content_stack.addWidget(self.attachments_box)
        self.content_stack.addWidget(self.url_box)

        self.lay_out(self.message_box, self.content_stack)
        chain_focus(
            self.recipient.edit,
            self.recipients.edit,
            self.subject,
            self.text,
            self.attachments.drop_zone.browse,
            self.attachments.list,
            self.url,
        )
        self._count()
        self._check_url()
        self.set_mode(Mode.MMS)

    def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        multi = mode is Mode.MULTI_MMS
        self.message_box.setTitle(mode.label)
        self.recipient.setVisible(not multi)
        self.recipients.setVisible(multi)
        self.to_label.setBuddy(self.recipients.edit if multi else self.recipient.edit)
        by_url = mode is Mode.MMS_URL
        self.content_stack.setCurrentIndex(1 if by_url else 0)

    def set_region(self, region: str) -> None:
        super().set_region(region)
        self.recipients.set_region(region)

    def values(self) -> MediaForm:
        return MediaForm(
            self.mode,
            recipient=self.recipient.text(),
            recipients=self.recipients.text(),
            subject=self.subject.text(),
            text=self.text.toPlainText(),
            url=self.url.text(),
            files=self.files(),
        )

    def clear_errors(self) -> None:
        super().clear_errors()
        self.recipients.update_feedback()
        self._check_url()

    def show_error(self, target: Target, message: str) -> bool:
        if target.kind == "recipient" and self.mode is Mode.MULTI_MMS:
            self.recipients.show_error(message)
            self.recipients.setFocus()
            return True
        if target.kind == "url":
            self.url_check.setText(message)
            set_role(self.url_check, "error")
            set_invalid(self.url, True)
            self.url.setFocus()
            return True
        if target.kind in ("file", "files") and self.mode is Mode.MMS_URL:
            return False
        return super().show_error(target, message)

    def _count(self) -> None:
        count = len(self.text.toPlainText())
        self.count.setText(f"{count:,} character{'' if count == 1 else 's'}")

    def _check_url(self) -> None:
        text = self.url.text().strip()
        set_invalid(self.url, False)
        if not text:
            self.url_check.setText("An http or https address.")
            set_role(self.url_check, "hint")
            return
        try:
            http_url(text, "URL")
        except ValidationError:
            self.url_check.setText("Not an http(s) address yet.")
            set_role(self.url_check, "hint")
            return
        self.url_check.setText("✓ The gateway will fetch this address.")
        set_role(self.url_check, "ok")


class FaxForm(ComposeForm):
    """An eFax: number, subject, cover page, and up to three files with their pages."""

    def __init__(self, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(
            Mode.FAX,
            AttachmentsPanel(FAX_RULES, tasks, theme, noun="file"),
            recipient_name="Fax number",
            text_name="Cover page",
            text_placeholder="Optional: the cover page's text. Ctrl+Enter sends.",
            parent=parent,
        )
        self.subject.setAccessibleName("Fax subject")
        self.subject.setPlaceholderText("Optional: printed on the cover page")
        self.box = QGroupBox("Fax")
        form = QFormLayout(self.box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for text, widget, buddy in (
            ("Fax &number", self.recipient, self.recipient.edit),
            ("&Subject", stacked(self.subject, self.subject_error), self.subject),
            ("&Cover page", stacked(self.text, self.text_error), self.text),
        ):
            label = QLabel(text)
            label.setBuddy(buddy)
            form.addRow(label, widget)
        self.files_box = QGroupBox("Files")
        QVBoxLayout(self.files_box).addWidget(self.attachments)
        self.lay_out(self.box, self.files_box)
        chain_focus(
            self.recipient.edit,
            self.subject,
            self.text,
            self.attachments.drop_zone.browse,
            self.attachments.list,
        )
        self.set_region(self.recipient.region)

    def set_region(self, region: str) -> None:
        super().set_region(region)
        self.recipient.edit.setPlaceholderText(f"e.g. (02) 9999 8888 (read in region {region})")

    def values(self) -> MediaForm:
        return MediaForm(
            Mode.FAX,
            recipient=self.recipient.text(),
            subject=self.subject.text(),
            text=self.text.toPlainText(),
            files=self.files(),
        )
