"""The Batch tab's merge fields: which column or contact field fills each placeholder.

Shown when the message is a template. Each placeholder takes, unless the operator
says otherwise, the column (or the recipient's contact field) of the same name in
any letter case; the combo beside it says which that is, and offers every other
column and contact field, or none (the placeholder's fallback then stands). Beside
each, the value the first recipient gets, so a wrong column is seen at once.
Column headers and field names come from a file: shown as plain text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QGroupBox, QVBoxLayout, QWidget

from gwdesk.app.merge import FieldMap, offered_sources
from gwdesk.app.personal import PersonalPlan, Recipients
from gwdesk.domain.templates import Placeholder, Template
from gwdesk.importing.table import Table
from gwdesk.ui.plain_text import PlainLabel, visible

AUTO: Final = "\x00same name"
NONE: Final = "\x00none"
EXAMPLE_CHARS: Final = 40
HINT: Final = (
    "Each placeholder takes the column, or the recipient's contact field, of the same name "
    "(any letter case). Choose another here; the first recipient's value is beside it."
)


def _shown_value(value: str | None) -> str:
    if value is None:
        return "—"
    flat = " ".join(value.split())
    return flat if len(flat) <= EXAMPLE_CHARS else flat[: EXAMPLE_CHARS - 1] + "…"


class MergeBox(QGroupBox):
    """Placeholder → source, one row each."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Merge fields", parent)
        self.setToolTip(HINT)  # each combo's first choice says what "the same name" is
        self.rows = QWidget()
        self.grid = QGridLayout(self.rows)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setHorizontalSpacing(10)
        self.grid.setColumnStretch(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.rows)
        self.combos: dict[str, QComboBox] = {}
        self.examples: dict[str, PlainLabel] = {}
        self._chosen: dict[str, str | None] = {}
        self._shape: tuple[object, ...] = ()
        self.hide()

    def mapping(self) -> FieldMap:
        """What the operator chose (a placeholder left on its own name is not named)."""
        return dict(self._chosen)

    def show_fields(
        self,
        template: Template | None,
        columns: Sequence[tuple[str, str]],
        fields: Sequence[str],
    ) -> None:
        """The template's placeholders, and the sources they may take: (key, header) of
        each column, and the contact fields' keys."""
        if template is None or not template.personal:
            self.hide()
            return
        placeholders = _first_of_each(template)
        shape = (tuple(p.shown for p in placeholders), tuple(columns), tuple(fields))
        self.show()
        if shape == self._shape:
            return
        self._shape = shape
        keys = {p.key for p in placeholders}
        self._chosen = {k: v for k, v in self._chosen.items() if k in keys}
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.combos, self.examples = {}, {}
        column_keys = [key for key, _title in columns]
        for row, placeholder in enumerate(placeholders):
            name = PlainLabel(placeholder.shown)
            name.setAccessibleName(f"Placeholder {placeholder.shown}")
            combo = QComboBox()
            combo.setAccessibleName(f"Source of {placeholder.shown}")
            combo.addItem(_same_name(placeholder, column_keys, columns, fields), AUTO)
            for key, title in columns:
                combo.addItem(f"Column: {visible(title) or key}", key)
            for key in fields:
                combo.addItem(f"Contact field: {visible(key)}", key)
            fallback = placeholder.fallback
            combo.addItem(
                f"No value: “{visible(fallback)}” (the fallback)"
                if fallback is not None
                else "No value (the recipient cannot be sent to)",
                NONE,
            )
            chosen = self._chosen.get(placeholder.key, AUTO)
            at = combo.findData(NONE if chosen is None else chosen)
            combo.setCurrentIndex(max(0, at))
            combo.activated.connect(lambda _i, k=placeholder.key, c=combo: self._picked(k, c))
            example = PlainLabel("")
            example.setAccessibleName(f"Example of {placeholder.shown}")
            example.setProperty("role", "hint")
            self.grid.addWidget(name, row, 0)
            self.grid.addWidget(combo, row, 1)
            self.grid.addWidget(example, row, 2)
            self.combos[placeholder.key] = combo
            self.examples[placeholder.key] = example

    def show_plan(
        self,
        template: Template | None,
        table: Table | None,
        recipients: Recipients | None,
        plan: PersonalPlan | None,
    ) -> None:
        """A plan landed (or why not): the sources its recipients offer (a file's columns
        by their headers, then contact fields), and the first recipient's values."""
        if recipients is not None and template is not None:
            keys, fields = offered_sources(table, recipients)
            titles = table.titles() if table is not None else []
            columns = [(k, titles[i] or f"Column {i + 1}") for i, k in enumerate(keys)]
            self.show_fields(template, columns, fields)
        else:
            self.show_fields(template, [], [])
        if plan is not None:
            first = plan.messages[0] if plan.messages else None
            self.set_examples(first.recipient.values if first is not None else None)

    def choose(self, key: str, source: str | None) -> None:
        """Point placeholder `key` at `source` (None: no value) as the operator would."""
        combo = self.combos[key]
        combo.setCurrentIndex(max(0, combo.findData(NONE if source is None else source)))
        self._picked(key, combo)

    def _picked(self, key: str, combo: QComboBox) -> None:
        data = combo.currentData()
        if data == AUTO:
            self._chosen.pop(key, None)
        else:
            self._chosen[key] = None if data == NONE else str(data)
        self.changed.emit()

    def set_examples(self, values: Mapping[str, str] | None) -> None:
        """The first recipient's values (None: no recipient yet)."""
        for key, label in self.examples.items():
            label.setText("" if values is None else f"e.g. {_shown_value(values.get(key))}")


def _first_of_each(template: Template) -> list[Placeholder]:
    seen: dict[str, Placeholder] = {}
    for placeholder in template.placeholders:
        seen.setdefault(placeholder.key, placeholder)
    return list(seen.values())


def _same_name(
    placeholder: Placeholder,
    column_keys: Sequence[str],
    columns: Sequence[tuple[str, str]],
    fields: Sequence[str],
) -> str:
    """What "the same name" resolves to, in words."""
    key = placeholder.key
    if key in column_keys:
        title = columns[column_keys.index(key)][1]
        return f"Same name: the column {visible(title) or key}"
    if key in fields:
        return f"Same name: the contact field {visible(key)}"
    return f"Same name: the contact field {visible(key)}, where a contact has it"
