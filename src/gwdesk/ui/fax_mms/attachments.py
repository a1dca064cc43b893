"""Attachments of an MMS or a fax: a drop zone, the files with previews, and the running total.

Every file is checked the moment it is added (by the gateway layer's rules, see
`attachment_files`), and a refused file stays in the list with its reason next to
it, so the operator sees what is wrong with which file before pressing Send. The
count limit is enforced at the door: a file beyond it is not added at all. Files
are read on a worker thread when they are big, so dropping a 10 MB PDF does not
freeze the console.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from PySide6.QtCore import QEvent, QMimeData, QObject, QSize, Qt, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragLeaveEvent,
    QDropEvent,
    QKeySequence,
    QPixmap,
    QShortcut,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.image_fit import FitError, FittedPicture, can_fit, read_and_fit
from gwdesk.app.media import FileRules
from gwdesk.domain.files import format_size
from gwdesk.ui.fax_mms.attachment_files import (
    LoadedFile,
    file_badge,
    load_bytes,
    load_path,
    with_pdf_pages,
)
from gwdesk.ui.fax_mms.attachment_preview import AttachmentPreview
from gwdesk.ui.plain_text import PlainLabel, tooltip
from gwdesk.ui.tasks import TaskRunner, off_thread
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.elided_label import ElidedLabel
from gwdesk.ui.widgets.panes import column, panes
from gwdesk.ui.widgets.validity import repolish, set_role

THUMB: Final = 48
ROW_LINES: Final = 3
"""A row's name, what the file is, and why it cannot be sent: one line each."""
LOCAL_STYLE: Final = """
#DropZone { border: 2px dashed palette(mid); border-radius: 8px; }
#DropZone[hover="true"] { border-color: palette(highlight); background: palette(alternate-base); }
QProgressBar#TotalBar { border: 1px solid palette(mid); border-radius: 3px; background: palette(base); }
QProgressBar#TotalBar::chunk { background: palette(highlight); border-radius: 2px; }
QProgressBar#TotalBar[invalid="true"]::chunk { background: #d32f2f; }
QListWidget#AttachmentList::item { border-bottom: 1px solid palette(midlight); }
QListWidget#AttachmentList::item:selected {
    background: palette(alternate-base); border-left: 3px solid palette(highlight);
}
"""


def local_files(mime: QMimeData) -> tuple[list[Path], int]:
    """(files on this computer, how many other things were dropped)."""
    paths: list[Path] = []
    others = 0
    for url in mime.urls():
        if url.isLocalFile() and url.toLocalFile():
            paths.append(Path(url.toLocalFile()))
        else:
            others += 1
    return (paths, others)


class DropZone(QFrame):
    """A dashed area that takes files dragged from the desktop, with an "Add files…" button."""

    files_dropped = Signal(list)
    """list[Path] of the local files dropped."""
    refused = Signal(str)

    def __init__(self, rules: FileRules, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DropZone")
        self.setAcceptDrops(True)
        self.setAccessibleName("Drop files here")
        self.icon = QLabel()
        self.icon.setPixmap(theme.icon("attach").pixmap(32, 32))
        self.title = ElidedLabel("Drop files here")  # shortened beside the button, never cut
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.hint = QLabel(
            f"{rules.extensions} · up to {rules.max_files} files, {rules.size_label} in all"
        )
        self.hint.setProperty("role", "hint")
        self.hint.setWordWrap(True)
        self.browse = QPushButton(theme.icon("attach"), "Add files…")
        self.browse.setAccessibleName("Add files")
        self.browse.setToolTip("Choose files with a file dialog (or drop them on this area)")
        words = QVBoxLayout()
        words.setSpacing(2)
        words.addWidget(self.title)
        words.addWidget(self.hint)
        row = QHBoxLayout()
        row.addWidget(self.icon)
        row.addLayout(words, 1)
        row.addWidget(self.browse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)

    def set_compact(self, compact: bool, title: str) -> None:
        """Big while there is nothing to show; one line once files are listed (the allowed
        types move to the tooltip)."""
        self.title.setText(title)
        self.title.setToolTip(title)
        self.hint.setVisible(not compact)
        self.setToolTip(self.hint.text() if compact else "")
        self.setMinimumHeight(0 if compact else 160)
        # One line once files are listed: the list below takes the room, not the stretch.
        vertical = QSizePolicy.Policy.Fixed if compact else QSizePolicy.Policy.Preferred
        self.setSizePolicy(QSizePolicy.Policy.Preferred, vertical)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
            self._hover(True)

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self._hover(False)

    def dropEvent(self, event: QDropEvent) -> None:
        self._hover(False)
        paths, others = local_files(event.mimeData())
        event.acceptProposedAction()
        if others:
            self.refused.emit(
                "Only files on this computer can be attached; for content on the web, "
                "send an MMS by URL."
            )
        if paths:
            self.files_dropped.emit(paths)

    def _hover(self, on: bool) -> None:
        self.setProperty("hover", on)
        repolish(self)


class AttachmentRow(QWidget):
    """Thumbnail, name, type and size, and the reason when the file cannot be sent.

    Every row is as tall as any other: each text is one line, shortened with "…" to the
    row's width (whole in its tooltip, and the reason whole in the preview beside), so
    a long reason never makes one row taller than the list and hides the others."""

    remove_requested = Signal()
    fit_requested = Signal()

    def __init__(self, name: str, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.thumb = QLabel()
        self.thumb.setFixedSize(THUMB, THUMB)
        self.thumb.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.name = ElidedLabel(name, Qt.TextElideMode.ElideMiddle)  # keeps the extension
        font = self.name.font()
        font.setBold(True)
        self.name.setFont(font)
        self.info = ElidedLabel("Reading…")
        self.info.setProperty("role", "hint")
        self.reason = ElidedLabel()
        self.reason.setAccessibleName(f"Problem with {name}")
        self.reason.setProperty("role", "error")
        self.reason.hide()
        self.fit_button = QToolButton()
        self.fit_button.setAccessibleName(f"Make {name} fit")
        self.fit_button.setToolTip(
            "Shrink the picture (or convert it) to a JPEG that fits what the MMS has left; "
            "the result is shown before anything is sent"
        )
        self.fit_button.clicked.connect(self.fit_requested.emit)
        self.fit_button.hide()
        self.remove = QToolButton()
        self.remove.setIcon(theme.icon("cancel"))
        self.remove.setAutoRaise(True)
        self.remove.setToolTip(tooltip(f"Remove {name} (Delete)"))
        self.remove.setAccessibleName(f"Remove {name}")
        self.remove.clicked.connect(self.remove_requested.emit)
        self.name.setToolTip(tooltip(name))  # a file name is anyone's text
        for label in (self.name, self.info, self.reason):
            # A long file name is shortened with "…" at the row's edge (full in the
            # tooltip) rather than widening the list past its pane.
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        words = QVBoxLayout()
        words.setSpacing(1)
        words.addWidget(self.name)
        words.addWidget(self.info)
        words.addWidget(self.reason)
        words.addStretch(1)
        lines = self.fontMetrics().lineSpacing() * ROW_LINES + 2 * words.spacing()
        self.setFixedHeight(max(THUMB, lines) + 8)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.thumb, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(words, 1)
        layout.addWidget(self.fit_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.remove, 0, Qt.AlignmentFlag.AlignTop)
        self.thumb.setPixmap(QPixmap.fromImage(file_badge(name, "other", THUMB)))

    def offer_fit(self, words: str) -> None:
        """Show the button that makes the picture fit (`words`), or hide it ('')."""
        self.fit_button.setText(words)
        self.fit_button.setVisible(bool(words))

    def rename(self, name: str) -> None:
        self.name.setText(name)
        self.name.setToolTip(tooltip(name))
        self.remove.setAccessibleName(f"Remove {name}")
        self.fit_button.setAccessibleName(f"Make {name} fit")

    def show_loaded(self, loaded: LoadedFile, flagged: str = "") -> None:
        picture = loaded.preview
        if picture is not None and not loaded.error:
            pixmap = QPixmap.fromImage(picture).scaled(
                QSize(THUMB, THUMB),
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        else:
            kind = "other" if loaded.error else loaded.kind
            pixmap = QPixmap.fromImage(file_badge(loaded.name, kind, THUMB))
        self.thumb.setPixmap(pixmap)
        self.info.setText(loaded.summary())
        self.info.setToolTip(tooltip(loaded.note))
        reason = loaded.error or flagged
        self.reason.setText(f"✗ {reason}" if reason else "")
        self.reason.setToolTip(tooltip(reason))
        self.reason.setVisible(bool(reason))
        self.setToolTip(tooltip(reason or loaded.note))


@dataclass
class _Item:
    key: int
    name: str
    row: AttachmentRow
    item: QListWidgetItem
    path: Path | None = None
    """Where it was read from (a picture made to fit is read whole from there)."""
    loaded: LoadedFile | None = None
    flagged: str = ""


class AttachmentsPanel(QWidget):
    """Drop zone, file list and total on the left; the selected file's preview on the right."""

    changed = Signal()

    def __init__(
        self,
        rules: FileRules,
        tasks: TaskRunner,
        theme: Theme,
        parent: QWidget | None = None,
        *,
        noun: str = "attachment",
    ) -> None:
        super().__init__(parent)
        self.rules = rules
        self.tasks = tasks
        self.theme = theme
        self.noun = noun
        self.setStyleSheet(LOCAL_STYLE)
        self.setAcceptDrops(True)
        self._items: list[_Item] = []
        self._keys = itertools.count(1)

        self.drop_zone = DropZone(rules, theme)
        self.drop_zone.files_dropped.connect(self.add_paths)
        self.drop_zone.refused.connect(self.show_error)
        self.drop_zone.browse.clicked.connect(self.browse)
        self.list = QListWidget()
        self.list.setObjectName("AttachmentList")
        self.list.setAccessibleName(f"{noun.capitalize()}s")
        self.list.setSelectionMode(QListWidget.SelectionMode.SingleSelection)
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.currentRowChanged.connect(lambda _row: self._preview_current())
        remove = QShortcut(QKeySequence.StandardKey.Delete, self.list)
        remove.setContext(Qt.ShortcutContext.WidgetShortcut)
        remove.activated.connect(lambda: self.remove(self.list.currentRow()))
        self.total_label = QLabel()
        self.total_label.setAccessibleName("Total size")
        self.total_bar = QProgressBar()
        self.total_bar.setObjectName("TotalBar")
        self.total_bar.setTextVisible(False)
        self.total_bar.setFixedHeight(8)
        self.total_bar.setRange(0, rules.max_bytes)
        self.total_bar.setAccessibleName("Total size against the limit")
        self.error = PlainLabel()
        self.error.setAccessibleName(f"{noun.capitalize()} problem")
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()
        self.preview = AttachmentPreview(f"Select a {noun} to preview it.")
        self.preview.setMinimumWidth(220)

        left = column(
            self.drop_zone, (self.list, 1), self.total_label, self.total_bar, self.error, spacing=6
        )
        self.splitter = panes(Qt.Orientation.Horizontal, left, self.preview, stretch=(1, 1))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.list.viewport().installEventFilter(self)
        self._update_state()

    # ---- what the form reads ---------------------------------------------------------------

    def files(self) -> list[LoadedFile | None]:
        """Each listed file in order; None for one still being read."""
        return [item.loaded for item in self._items]

    def names(self) -> list[str]:
        return [item.name for item in self._items]

    def count(self) -> int:
        return len(self._items)

    def reading(self) -> bool:
        return any(item.loaded is None for item in self._items)

    def total(self) -> int:
        return sum(item.loaded.size for item in self._items if item.loaded is not None)

    def row_widget(self, index: int) -> AttachmentRow:
        return self._items[index].row

    # ---- adding and removing ---------------------------------------------------------------

    def browse(self) -> None:
        patterns = " ".join(f"*.{ext}" for ext in sorted(self.rules.types))
        dialog = QFileDialog(self, f"Add {self.noun}s")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilters([f"Files {self.rules.kind} takes ({patterns})", "All files (*)"])
        dialog.filesSelected.connect(lambda chosen: self.add_paths([Path(p) for p in chosen]))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def add_paths(self, paths: Sequence[Path]) -> None:
        """Add what fits; the rest is refused at once, naming the files left out."""
        self.clear_errors()
        room = self.rules.max_files - len(self._items)
        accepted, left_out = list(paths[: max(room, 0)]), list(paths[max(room, 0) :])
        for path in accepted:
            self._start(path)
        if left_out:
            names = ", ".join(p.name for p in left_out[:3]) + ("…" if len(left_out) > 3 else "")
            kind = self.rules.kind[0].upper() + self.rules.kind[1:]
            self.show_error(
                f"{kind} takes at most {self.rules.max_files} files, so {names} "
                f"{'was' if len(left_out) == 1 else 'were'} not added. Remove a file first."
            )
        if accepted:
            self._update_state()
            self.changed.emit()

    def _start(self, path: Path) -> None:
        key = next(self._keys)
        row = AttachmentRow(path.name, self.theme)
        item = QListWidgetItem()
        item.setData(Qt.ItemDataRole.AccessibleTextRole, path.name)
        self.list.addItem(item)
        self.list.setItemWidget(item, row)
        entry = _Item(key, path.name, row, item, path)
        row.remove_requested.connect(lambda: self.remove(self._index_of(key)))
        row.fit_requested.connect(lambda: self.fit(self._index_of(key)))
        self._items.append(entry)
        self.list.setCurrentItem(item)
        self._fit_rows()
        self.tasks.run(  # the panel's own: cancelled with it
            self._load(entry, path), key=f"load-{key}", owner=self, context="reading a file"
        )

    async def _load(self, entry: _Item, path: Path) -> None:
        # Always on a worker: even a stat can hang on a network drive, and decoding a
        # photo takes longer than a GUI frame. A PDF's small first page is rendered here.
        rules = self.rules
        loaded = await off_thread(lambda: load_path(path, rules))
        if entry not in self._items:
            return
        self._show_loaded(entry, with_pdf_pages(loaded))

    def _show_loaded(self, entry: _Item, loaded: LoadedFile) -> None:
        entry.loaded = loaded
        entry.row.show_loaded(loaded)
        entry.row.offer_fit(self._fit_offer(entry))
        self._fit_rows()
        self._update_state()
        if self.list.currentItem() is entry.item:
            self._preview_current()
        self.changed.emit()

    # ---- a picture made to fit -----------------------------------------------------------

    def _room_for(self, entry: _Item) -> int:
        """The bytes a file may take: the allowance less the other files'."""
        others = sum(e.loaded.size for e in self._items if e is not entry and e.loaded)
        return max(self.rules.max_bytes - others, 0)

    def _fit_offer(self, entry: _Item) -> str:
        """The button's words when the picture can be made to fit, else ''."""
        loaded = entry.loaded
        if loaded is None or entry.path is None or "jpg" not in self.rules.types:
            return ""
        room = self._room_for(entry)
        if not can_fit(loaded.name, loaded.size, room, bool(loaded.error)):
            return ""
        return "Shrink to fit" if loaded.size > room else "Convert to JPEG"

    def fit(self, index: int) -> asyncio.Task[None] | None:
        """Make the picture fit what is left of the allowance, as JPEG, and show it."""
        if not 0 <= index < len(self._items):
            return None
        entry = self._items[index]
        entry.row.offer_fit("")
        entry.row.info.setText("Making it fit…")
        return self.tasks.run(
            self._fit(entry), key=f"load-{entry.key}", owner=self, context="fitting a picture"
        )

    async def _fit(self, entry: _Item) -> None:
        path, room, rules = entry.path, self._room_for(entry), self.rules
        assert path is not None

        def fit_and_read() -> tuple[FittedPicture, LoadedFile]:
            fitted = read_and_fit(path, room)
            return fitted, load_bytes(fitted.name, fitted.data, rules)

        try:
            fitted, loaded = await off_thread(fit_and_read)
        except FitError as exc:
            if entry in self._items and entry.loaded is not None:
                entry.row.show_loaded(entry.loaded, str(exc))
                entry.row.offer_fit(self._fit_offer(entry))
            return
        if entry not in self._items:
            return
        entry.name, entry.path = fitted.name, None
        entry.row.rename(fitted.name)
        entry.item.setData(Qt.ItemDataRole.AccessibleTextRole, fitted.name)
        self._show_loaded(entry, replace(loaded, note=fitted.summary()))

    def remove(self, index: int) -> None:
        if not 0 <= index < len(self._items):
            return
        entry = self._items.pop(index)
        self.tasks.cancel(f"load-{entry.key}", owner=self)
        self.list.takeItem(self.list.row(entry.item))
        entry.row.deleteLater()
        self.clear_errors()
        self._update_state()
        self._preview_current()
        self.changed.emit()

    def clear(self) -> None:
        while self._items:
            self.remove(len(self._items) - 1)

    def _index_of(self, key: int) -> int:
        return next((i for i, item in enumerate(self._items) if item.key == key), -1)

    # ---- errors ------------------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        """A problem of the files as a whole (count, total, none given)."""
        self.error.setText(text)
        self.error.show()

    def flag_file(self, index: int, text: str) -> None:
        """The gateway's reason for one file, shown at that file."""
        if not 0 <= index < len(self._items):
            self.show_error(text)
            return
        entry = self._items[index]
        entry.flagged = text
        if entry.loaded is not None:
            entry.row.show_loaded(entry.loaded, text)
        self.list.setCurrentItem(entry.item)
        self._fit_rows()

    def clear_errors(self) -> None:
        self.error.hide()
        self.error.clear()
        for entry in self._items:
            if entry.flagged:
                entry.flagged = ""
                if entry.loaded is not None:
                    entry.row.show_loaded(entry.loaded)
        self._fit_rows()

    # ---- look ----------------------------------------------------------------------------

    def _update_state(self) -> None:
        count = len(self._items)
        self.list.setVisible(count > 0)
        shown_before = self.preview.isVisibleTo(self)
        self.preview.setVisible(count > 0)
        if count and not shown_before:
            # Hidden, the preview's share of the split was given away: give it back.
            whole = sum(self.splitter.sizes()) or self.width()
            self.splitter.setSizes([whole // 2, whole - whole // 2])
        room = self.rules.max_files - count
        if count == 0:
            title = f"Drop up to {self.rules.max_files} files here"
        elif room > 0:
            title = f"Drop more files here ({count} of {self.rules.max_files})"
        else:
            title = f"{count} of {self.rules.max_files} files: remove one to add another"
        self.drop_zone.set_compact(count > 0, title)
        self.drop_zone.browse.setEnabled(room > 0)
        total = self.total()
        over = total > self.rules.max_bytes
        self.total_bar.setValue(min(total, self.rules.max_bytes))
        self.total_bar.setProperty("invalid", over)
        repolish(self.total_bar)
        text = f"Total {format_size(total)} of {self.rules.size_label}"
        if over:
            text += (
                f": {format_size(total - self.rules.max_bytes)} too much, remove or shrink a file"
            )
        elif self.reading():
            text += " (still reading…)"
        self.total_label.setText(text)
        set_role(self.total_label, "error" if over else "hint")

    def _preview_current(self) -> None:
        index = self.list.currentRow()
        if not 0 <= index < len(self._items):
            self.preview.show_file(None)
            return
        entry = self._items[index]
        self.preview.show_file(entry.loaded, reading=entry.name)

    def _fit_rows(self) -> None:
        width = max(self.list.viewport().width(), 200)
        for entry in self._items:
            # A little room for the item's own border and the selection mark.
            entry.item.setSizeHint(QSize(width, entry.row.height() + 6))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.list.viewport():
            self._fit_rows()
        return super().eventFilter(watched, event)

    # ---- drops anywhere on the panel -----------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self.drop_zone.dragEnterEvent(event)

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self.drop_zone.dragLeaveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self.drop_zone.dropEvent(event)
