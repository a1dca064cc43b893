"""Opt-outs tab: who has said STOP to this account, how and when, and every change since.

What is checked, read, written and read again is the flow's
(`gwdesk.app.optout_editing.OptOutEditing`, one per profile): here an operator searches
the list, opts a number out or back in by hand, imports a list and exports it, and the
tab shows what the flow answers. Every read and write runs off the GUI thread; the view
refreshes when replies arrive (a STOP may have changed it), when the profile switches
and, for a team profile, when another desk changed the list. Beside the list, the
profile's Rules: which keywords opt out and back in, whether a new message is
marketing, and the instruction a marketing message ends with. When they change at
another desk (the session reads a team's rules again and says so, `rules_changed`), the
Rules show them, unless the operator is editing them (`follow_rules`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from PySide6.QtCore import QItemSelection, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHeaderView,
    QPushButton,
    QTableView,
    QWidget,
)

from gwdesk.app.optout_editing import (
    OPTOUT_TABLES,
    RULES_CHANGED_ELSEWHERE,
    CheckedChange,
    OptOut,
    OptOutChange,
    OptOutEditing,
    OptOutListing,
    Rules,
    RulesError,
    RulesFollow,
    StoreError,
    TypedRules,
    follow_rules,
    saved_rules_text,
)
from gwdesk.domain.numbers import DEFAULT_REGION, display
from gwdesk.ui.formatting import local_time, sentence_time
from gwdesk.ui.listing_tab import NOT_CONNECTED, ListingTab, ListingWords
from gwdesk.ui.models.rows import Column, RowsModel
from gwdesk.ui.optouts.change_dialog import ChangeDialog
from gwdesk.ui.optouts.rules import RulesBox
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner, off_thread
from gwdesk.ui.team_hub import TableWatch
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.listing import csv_to_save, dated_csv, file_to_open, row_table, selected_row
from gwdesk.ui.widgets.panes import panes, titled

WORDS: Final = ListingWords(
    search="Search the opt-out list",
    search_hint="Search numbers, reasons, keywords or operators",
    counts="Opt-out counts",
    result="Opt-outs result",
    empty=(
        "Nobody has opted out of this account yet. A customer who replies STOP (or "
        "another opt-out keyword) is listed here at once, and every send leaves them out."
    ),
)
OUT_COLOUR: Final = QColor("#d32f2f")
IN_COLOUR: Final = QColor("#2e7d32")
FILE_FILTER: Final = "CSV or text files (*.csv *.txt);;All files (*)"


def state_text(opted_out: bool) -> str:
    return "opted out" if opted_out else "opted in"


CURRENT: Final[list[Column[OptOut]]] = [
    Column("Number", lambda o: display(o.number), "The number as the gateway writes it"),
    Column(
        "State",
        lambda o: state_text(o.opted_out),
        "Opted out: every send from this account leaves it out",
        colour=lambda o: OUT_COLOUR if o.opted_out else IN_COLOUR,
    ),
    Column("Since", lambda o: local_time(o.at, False), "When (your time)", sort_key=lambda o: o.at),
    Column(
        "How",
        lambda o: o.how.value,
        "A keyword reply (and by which channel), by hand, or an import",
    ),
    Column("By", lambda o: o.by, "The customer, or the operator who changed it"),
    Column("Keyword", lambda o: o.keyword or "", "The keyword the customer replied"),
    Column("Reason", lambda o: o.reason, "Why an operator changed it"),
]
HISTORY: Final[list[Column[OptOutChange]]] = [
    Column("When", lambda c: local_time(c.at, False), sort_key=lambda c: c.at),
    Column(
        "Change",
        lambda c: state_text(c.opted_out) + ("" if c.applied else " (no change)"),
        "No change: the number was already so, or a later change came first",
        colour=lambda c: (OUT_COLOUR if c.opted_out else IN_COLOUR) if c.applied else None,
    ),
    Column("How", lambda c: c.how.value),
    Column("By", lambda c: c.by),
    Column("Keyword", lambda c: c.keyword or ""),
    Column("Reason", lambda c: c.reason),
]


def _table(model: RowsModel[OptOut] | RowsModel[OptOutChange], name: str) -> QTableView:
    table = row_table(name, model)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    return table


class OptOutsTab(ListingTab):
    title = "Opt-outs"
    icon_name = "optout"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent, WORDS)
        self.flow: OptOutEditing | None = None
        """The profile's opt-out list and rules, as edited here (None: no profile)."""
        self.show_opted_in = QCheckBox("Show opted back in")
        self.show_opted_in.setToolTip("Also list numbers that opted back in (START, or by hand)")
        self.add_button = QPushButton(theme.icon("optout"), "Opt out a number…")
        self.remove_button = QPushButton(theme.icon("status"), "Opt back in…")
        self.remove_button.setToolTip("Resubscribe the selected number, with a reason")
        self.import_button = QPushButton(theme.icon("import"), "Import…")
        self.import_button.setToolTip("Opt out every number of a CSV or text file")
        self.export_button = QPushButton(theme.icon("export"), "Export…")
        self.export_button.setToolTip("Save the list as CSV (a spreadsheet opens it safely)")

        self.model: RowsModel[OptOut] = RowsModel(CURRENT, self)
        self.table = _table(self.model, "Opt-out list")
        self.history_model: RowsModel[OptOutChange] = RowsModel(HISTORY, self)
        self.history_table = _table(self.history_model, "History of the number")
        self.history_table.setMinimumHeight(8 * self.history_table.fontMetrics().height())
        self.history_box = titled("History", self.history_table)
        lists = panes(
            Qt.Orientation.Vertical,
            self.with_empty_note(self.table),
            self.history_box,
            stretch=(3, 1),
        )
        self.rules = RulesBox()
        buttons = (self.add_button, self.remove_button, self.import_button, self.export_button)
        body = self.lay_out(self.show_opted_in, buttons, lists, self.rules)
        body.setSizes([720, 380])

        self.show_opted_in.toggled.connect(lambda _on: self.refresh())
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self.add_button.clicked.connect(lambda: self.change(opt_out=True))
        self.remove_button.clicked.connect(lambda: self.change(opt_out=False))
        self.import_button.clicked.connect(self.choose_import)
        self.export_button.clicked.connect(self.choose_export)
        self.rules.save_requested.connect(self.save_rules)
        self.connect_tracked(session.replies.replies_arrived, lambda _d: self.refresh_soon())
        # A team's list changes at other desks too (a STOP they stored, a number they added).
        TableWatch(session.team, OPTOUT_TABLES, self.refresh_soon, self)
        self.connect_tracked(session.rules_changed, self._rules_changed)
        self.on_session_changed()

    # ---- reading -----------------------------------------------------------------------

    def on_session_changed(self) -> None:
        store, profile = self.session.store, self.session.profile
        region = profile.region if profile else DEFAULT_REGION
        self.flow = OptOutEditing(store.optouts, store.settings, region) if store else None
        enabled = self.flow is not None
        for button in (self.add_button, self.import_button, self.export_button):
            button.setEnabled(enabled)
        self.remove_button.setEnabled(False)
        self.rules.setEnabled(enabled)
        self.rules.say("", "hint")
        if self.flow is not None:
            self.tasks.run(
                self._load_rules(self.flow), key="rules", owner=self, context="reading the rules"
            )
        self.refresh()

    def refresh(self) -> None:
        flow = self.flow
        if flow is None:
            self.model.set_rows([])
            self.history_model.set_rows([])
            self.counts.setText(NOT_CONNECTED)
            self.show_empty(not self.search.text().strip())
            return
        self.tasks.run(self._load(flow), key="load", owner=self, context="reading the opt-outs")

    async def _load(self, flow: OptOutEditing, select: str | None = None) -> None:
        search, opted_in = self.search.text(), self.show_opted_in.isChecked()
        try:
            listing = await off_thread(lambda: flow.listing(search, include_opted_in=opted_in))
        except StoreError as exc:
            self.say(str(exc), "error")
            return
        if flow is not self.flow:
            return  # the profile switched meanwhile: its own load follows
        self._show(listing)
        if select is not None:
            self._select(select)

    def _show(self, listing: OptOutListing) -> None:
        selected = self.selected()
        self.model.set_rows(listing.rows)
        self.counts.setText(listing.counts)
        self.show_empty(listing.empty)
        if selected is not None:
            self._select(selected.number)

    def selected(self) -> OptOut | None:
        return selected_row(self.table, OptOut)

    def _select(self, number: str) -> None:
        for row, optout in enumerate(self.model.rows):
            if optout.number == number:
                self.table.selectRow(row)
                return

    def _selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        optout = self.selected()
        self.remove_button.setEnabled(optout is not None and optout.opted_out)
        flow = self.flow
        if optout is None or flow is None:
            self.history_model.set_rows([])
            self.history_box.setTitle("History")
            return
        self.history_box.setTitle(f"History of {display(optout.number)}")
        self.tasks.run(
            self._load_history(flow, optout.number),
            key="history",
            owner=self,
            context="reading a number's history",
        )

    async def _load_history(self, flow: OptOutEditing, number: str) -> None:
        try:
            changes = await off_thread(lambda: flow.history(number))
        except StoreError as exc:
            self.say(str(exc), "error")
            return
        current = self.selected()
        if current is not None and current.number == number:
            self.history_model.set_rows(changes)

    # ---- rules -------------------------------------------------------------------------

    def _rules_changed(self) -> None:
        """The rules may have changed (here, or at another desk of the team): show them as
        kept, unless the operator is editing them."""
        flow = self.flow
        if flow is None:
            return
        saving = self.tasks.running("save-rules", owner=self)
        follow = follow_rules(editing=self.rules.edited(), saving=saving)
        if follow is RulesFollow.WARN:
            self.rules.say(RULES_CHANGED_ELSEWHERE, "warning")
        elif follow is RulesFollow.SHOW:
            self.tasks.run(
                self._load_rules(flow, keep_edits=True),
                key="rules",
                owner=self,
                context="reading the rules",
            )

    async def _load_rules(self, flow: OptOutEditing, *, keep_edits: bool = False) -> None:
        try:
            rules = await off_thread(flow.read_rules)
        except StoreError as exc:
            self.rules.say(f"The rules could not be read: {exc}", "error")
            return
        if flow is not self.flow:
            return
        if keep_edits and self.rules.edited():
            self.rules.say(RULES_CHANGED_ELSEWHERE, "warning")  # typed while they were read
            return
        self.rules.show_rules(rules)

    def save_rules(self, typed: TypedRules) -> None:
        """Have the flow check the rules as typed (a refusal at its field, at once), then
        keep them in the profile and have the session apply them."""
        flow = self.flow
        if flow is None:
            return
        try:
            rules = flow.check_rules(typed)
        except RulesError as exc:
            self.rules.show_error(exc.field, exc.message)
            return
        self.rules.say("Saving…", "hint")
        self.tasks.run(
            self._save_rules(flow, rules),
            key="save-rules",
            owner=self,
            context="saving the rules",
        )

    async def _save_rules(self, flow: OptOutEditing, rules: Rules) -> None:
        try:
            await off_thread(lambda: flow.save_rules(rules))
        except StoreError as exc:
            self.rules.say(f"The rules were not saved: {exc}", "error")
            return
        if flow is not self.flow:
            return
        self.rules.show_rules(rules)  # kept: no longer the operator's edits
        try:
            await self.session.apply_rules()
        except StoreError as exc:
            self.rules.say(f"The rules were saved but not applied: {exc}", "error")
            return
        text, warns = saved_rules_text(rules)
        self.rules.say(text, "warning" if warns else "ok")

    # ---- changing ----------------------------------------------------------------------

    def change(self, *, opt_out: bool) -> None:
        """Ask for a number and a reason, then opt it out (or back in)."""
        flow = self.flow
        if flow is None:
            return
        selected = self.selected()
        number = display(selected.number) if selected is not None and not opt_out else ""
        dialog = ChangeDialog(
            opt_out,
            lambda typed, reason: flow.check(typed, reason, opt_out=opt_out),
            number,
            self,
        )

        def done(result: int) -> None:
            if result == QDialog.DialogCode.Accepted and dialog.change is not None:
                self.tasks.run(
                    self._change(flow, dialog.change),
                    key="change",
                    owner=self,
                    context="changing the opt-out list",
                )
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    async def _change(self, flow: OptOutEditing, change: CheckedChange) -> None:
        try:
            now = await off_thread(lambda: flow.change(change))
        except StoreError as exc:
            self.say(str(exc), "error")
            return
        number = display(change.number)
        self.say(f"{number} {now.describe(sentence_time)}.", "ok")
        self.session.report(f"{number} {state_text(change.opt_out)}", True)
        # One reading of the list at a time (the "load" task): a filter changed meanwhile
        # reads it again, and this older reading never lands after that one.
        self.tasks.run(
            self._load(flow, select=change.number),
            key="load",
            owner=self,
            context="reading the opt-outs",
        )

    # ---- files -------------------------------------------------------------------------

    def choose_import(self) -> None:
        path = file_to_open(self, "Import numbers to opt out", FILE_FILTER)
        if path is not None:
            self.import_from(path)

    def import_from(self, path: Path) -> None:
        flow = self.flow
        if flow is None:
            return
        self.say(f"Importing {path.name}…", "hint")
        self.tasks.run(self._import(flow, path), key="file", owner=self, context="importing")

    async def _import(self, flow: OptOutEditing, path: Path) -> None:
        try:
            report = await off_thread(lambda: flow.import_file(path))
        except (StoreError, OSError, ValueError) as exc:
            self.say(f"{path.name} was not imported: {exc}", "error")
            return
        self.say(f"{path.name}: {report.summary()}.", "ok" if not report.invalid else "hint")
        self.refresh()

    def choose_export(self) -> None:
        path = csv_to_save(self, "Export the opt-out list", dated_csv("optouts"))
        if path is not None:
            self.export_to(path)

    def export_to(self, path: Path) -> None:
        flow = self.flow
        if flow is None:
            return
        opted_in = self.show_opted_in.isChecked()
        self.tasks.run(
            self._export(flow, path, opted_in), key="file", owner=self, context="exporting"
        )

    async def _export(self, flow: OptOutEditing, path: Path, opted_in: bool) -> None:
        try:
            count = await off_thread(lambda: flow.export_file(path, include_opted_in=opted_in))
        except (StoreError, OSError) as exc:
            self.say(f"The list was not exported: {exc}", "error")
            return
        self.say(f"{count:,} numbers written to {path}.", "ok")
