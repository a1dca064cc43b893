"""Batch tab: one message to many recipients, in requests of 100, cancellable, followed to the end.

The recipients (pasted or imported, checked off the GUI thread), the message and
its options, the totals that say what the batch will cost, and the per-request
results come from their own modules; this one hands the checked message and list
to the profile's `Sending` (`record_list`, then `run_list`: the outbox runner owns
the lanes, cancelling, halting and settling by status, and writes history) and
renders what comes back. What was lodged stays listed, what was not can be sent
with "Send remaining", and nothing the operator composed is lost when a send fails.
As soon as the recipients are checked they are screened against the account's
opt-out list (off the GUI thread): the totals say how many will be left out, and
that list can be exported; the outcome says how many the send left out.

A message with placeholders ("Hi {first name}") is a template: each recipient gets a
text of their own (`planning.Planner`: every text made and checked before anything
is sent, off the GUI thread), the merge fields say which column or contact field
fills each placeholder, the totals give the parts as a range and name who turns
the message into UCS-2 or adds a part, the invalid list shows who cannot be sent to
and why, and the send goes through `record_personal`/`run_personal` (identical
texts share requests; every other text is a request of its own). Contact groups can
be the recipients, alone or with a file. The preview shows any recipient's message
as a phone would, and "Send a test to me" texts the first one to the operator's own
number. Before anything goes, the cost: total parts and, where the gateway reports
credits, whether the balance covers them; a send that exceeds it asks first.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Final

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.merge import offered_sources
from gwdesk.app.optouts import OptOutGuard, Screened, write_optouts
from gwdesk.app.personal import Cost
from gwdesk.app.send_values import DEFAULT_LANES, MAX_LANES, MAX_RECIPIENTS_PER_REQUEST
from gwdesk.app.sending import Outcome, Sending
from gwdesk.app.sms import SmsMessage, check_message, check_options
from gwdesk.app.status import follow
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.templates import Template, TemplateError
from gwdesk.gateway.errors import GatewayError, ValidationError
from gwdesk.store.database import StoreError
from gwdesk.store.optouts import OptOut
from gwdesk.store.outbox import EntryState, OutboxBusy, OutboxEntry
from gwdesk.ui.batch.compose import BatchCompose
from gwdesk.ui.batch.merge import MergeBox
from gwdesk.ui.batch.planning import PlanInputs, Planner, group_members, with_options
from gwdesk.ui.batch.recipients import FILE, RecipientsPanel, plural
from gwdesk.ui.batch.results import ListRun, ResultsPanel
from gwdesk.ui.batch.screening import Screening
from gwdesk.ui.batch.totals import (
    longer_line,
    parts_range,
    plan_line,
    ucs2_line,
)
from gwdesk.ui.batch.trial import Trial
from gwdesk.ui.plain_text import PlainLabel, tooltip
from gwdesk.ui.session import Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.cost import CostWatch, cost_line, short_of
from gwdesk.ui.widgets.phone_preview import PreviewDialog
from gwdesk.ui.widgets.question import answered, question_box
from gwdesk.ui.widgets.template_picker import TemplatePicker
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.batch")
#: Bigger batches are confirmed with their totals before anything is sent.
CONFIRM_ABOVE: Final = 1000
SEND_KEY: Final = "batch-send"
FOLLOW_KEY: Final = "batch-follow"
EXCLUDED_EXPORT_KEY: Final = "batch-excluded-export"
SCREEN_DELAY_MS: Final = 300
DRAFT_KEY: Final = "batch"
DRAFT_DELAY_MS: Final = 800
REFRESH_MS: Final = 100
PARALLEL_CHOICES: Final = tuple(n for n in (1, 2, 3, 4, 6, 8, 12, 16) if n <= MAX_LANES)
FIGURES: Final = (
    ("valid", "Valid recipients", "Usable numbers, each once"),
    ("duplicates", "Duplicates dropped", "Entries that repeat an earlier number"),
    ("invalid", "Invalid", "Entries that are not usable numbers (listed on the left)"),
    (
        "excluded",
        "Opted out: excluded",
        "Valid recipients on the account's opt-out list: the batch leaves them out "
        "(unless the message is marked purely factual)",
    ),
    (
        "parts",
        "SMS parts each",
        "Parts one message needs (GSM 03.38): for personal messages, "
        "the fewest to the most any recipient's needs",
    ),
    (
        "messages",
        "Messages",
        "Recipients × parts (each recipient's own, for personal messages): what the batch costs",
    ),
    ("requests", "Requests", "Requests of up to 100 recipients the batch is sent in"),
)


Record = Callable[[], Awaitable[ListRun | None]]
"""Records a new send in the outbox (before any of it is sent); None: not sent (the
operator said no)."""


class BatchTab(BaseTab):
    title = "Batch"
    icon_name = "batch"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self.confirm_above = CONFIRM_ABOVE
        self.run: ListRun | None = None
        """The batch shown: the last one recorded (None before the first)."""
        self.confirm_box: QMessageBox | None = None
        self._stop: asyncio.Event | None = None
        self._follow_stop: asyncio.Event | None = None
        self._restoring = False
        self.screening = Screening(tasks, self)
        """The checked recipients against the opt-out list."""

        self.recipients = RecipientsPanel(tasks, theme)
        self.merge = MergeBox()
        self.compose = BatchCompose()
        self.picker = TemplatePicker(tasks, theme, self.compose.editor.text)
        self.template_note = PlainLabel("")
        self.template_note.setAccessibleName("Templates result")
        self.template_note.setWordWrap(True)
        self.compose.tools.insertWidget(0, self.template_note, 1)
        self.compose.tools.addWidget(self.picker)
        self.planner = Planner(tasks, self)
        self.trial = Trial(self)
        self.cost = CostWatch(tasks, self)
        self.results = ResultsPanel(theme)
        self.figures: dict[str, QLabel] = {}
        totals = self._totals_box(theme)

        sending = QWidget()
        sending_layout = QVBoxLayout(sending)
        sending_layout.setContentsMargins(0, 0, 0, 0)
        sending_layout.addWidget(totals)
        sending_layout.addWidget(self.results, 1)
        # The message keeps its natural height and the requests table the rest; the
        # operator can drag the split to see more requests of a big batch.
        self.message_split = QSplitter(Qt.Orientation.Vertical)
        self.message_split.setChildrenCollapsible(False)
        self.message_split.addWidget(self.compose)
        self.message_split.addWidget(sending)
        self.message_split.setStretchFactor(0, 0)
        self.message_split.setStretchFactor(1, 1)
        right = self.message_split
        self.left_split = QSplitter(Qt.Orientation.Vertical)
        self.left_split.setChildrenCollapsible(False)
        self.left_split.addWidget(self.recipients)
        self.left_split.addWidget(self.merge)
        self.left_split.setStretchFactor(0, 1)
        self.left_split.setStretchFactor(1, 0)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.left_split)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 7)
        self.splitter.setSizes([360, 900])
        layout = QVBoxLayout(self)
        layout.addWidget(self.splitter)

        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self._refresh_run)
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DELAY_MS)
        self._draft_timer.timeout.connect(self.save_draft)
        self._screen_timer = QTimer(self)
        self._screen_timer.setSingleShot(True)
        self._screen_timer.setInterval(SCREEN_DELAY_MS)
        self._screen_timer.timeout.connect(self.screen_again)

        self.recipients.checked.connect(self.update_totals)
        self.compose.marking.changed.connect(self.update_totals)
        self.merge.changed.connect(self.update_totals)
        self.planner.planned.connect(self._planned)
        self.screening.changed.connect(self.update_totals)
        self.screening.failed.connect(self._screen_failed)
        self.cost.costed.connect(self._show_cost)
        self.picker.chosen.connect(self.compose.editor.set_text)
        self.picker.said.connect(self._template_said)
        self.connect_tracked(session.rules_changed, self._rules_changed)
        self.connect_tracked(session.contacts_changed, self._contacts_changed)
        self.connect_tracked(session.replies.replies_arrived, lambda _d: self._screen_timer.start())
        self.recipients.paste.textChanged.connect(self._edited)
        self.compose.changed.connect(self._edited)
        self.compose.submit_requested.connect(self.send)
        self.results.follow_button.clicked.connect(self._toggle_follow)
        shortcut = QShortcut(QKeySequence("Ctrl+Return"), self, self.send)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.connect_tracked(session.closing, self.save_draft)
        self.update_totals()
        self._update_buttons()
        if session.active:  # built after the profile was chosen: take it now
            self.on_session_changed()

    def _totals_box(self, theme: Theme) -> QGroupBox:
        box = QGroupBox("Totals")
        grid = QGridLayout()
        grid.setHorizontalSpacing(18)
        grid.setVerticalSpacing(0)
        for column, (key, caption, tip) in enumerate(FIGURES):
            value = QLabel("0")
            value.setObjectName("TotalFigure")
            value.setAccessibleName(caption)
            value.setToolTip(tip)
            value.setStyleSheet("font-size: 15pt; font-weight: 600;")
            label = QLabel(caption)
            label.setProperty("role", "hint")
            label.setToolTip(tip)
            grid.addWidget(value, 0, column)
            grid.addWidget(label, 1, column)
            self.figures[key] = value
        self.concurrency = QComboBox()
        for choice in PARALLEL_CHOICES:
            self.concurrency.addItem(str(choice), choice)
        self.concurrency.setCurrentIndex(PARALLEL_CHOICES.index(DEFAULT_LANES))
        self.concurrency.setAccessibleName("Parallel requests")
        self.concurrency.setToolTip(
            "Requests on the wire at once. Cancel lets these finish and starts no other."
        )
        self.send_button = QPushButton(theme.icon("send"), "Send batch")
        self.send_button.setProperty("primary", True)
        self.send_button.setAccessibleName("Send batch")
        self.send_button.setToolTip("Send the message to every valid recipient (Ctrl+Enter)")
        self.send_button.clicked.connect(self.send)
        self.cancel_button = QPushButton(theme.icon("cancel"), "Cancel")
        self.cancel_button.setAccessibleName("Cancel sending")
        self.cancel_button.setToolTip("Stop before the next request; what was lodged stays lodged")
        self.cancel_button.clicked.connect(self.cancel_send)
        self.remaining_button = QPushButton(theme.icon("refresh"), "Send remaining")
        self.remaining_button.setAccessibleName("Send remaining")
        self.remaining_button.setToolTip(
            "Send the requests that were not lodged (cancelled or failed), with the message "
            "as it is now; requests whose outcome was unknown are looked up first"
        )
        self.remaining_button.clicked.connect(self.send_remaining)
        self.optout_line = PlainLabel()
        self.optout_line.setAccessibleName("Opted-out recipients")
        self.optout_line.setWordWrap(True)
        self.optout_line.hide()
        self.export_excluded_button = QPushButton(theme.icon("export"), "Export the opted out…")
        self.export_excluded_button.setAccessibleName("Export the opted-out recipients")
        self.export_excluded_button.setToolTip(
            "Save the recipients left out because they opted out (number, since when, how, "
            "keyword, reason) as CSV"
        )
        self.export_excluded_button.clicked.connect(self._export_excluded_clicked)
        self.export_excluded_button.hide()
        self.plan_label = PlainLabel()
        self.plan_label.setAccessibleName("Personal messages")
        self.plan_label.setWordWrap(True)
        self.plan_label.hide()
        self.ucs2_label = PlainLabel()
        self.ucs2_label.setAccessibleName("Recipients turned into UCS-2")
        self.ucs2_label.setWordWrap(True)
        self.ucs2_label.hide()
        self.longer_label = PlainLabel()
        self.longer_label.setAccessibleName("Recipients with more parts")
        self.longer_label.setWordWrap(True)
        self.longer_label.hide()
        self.cost_label = PlainLabel()
        self.cost_label.setAccessibleName("Cost")
        self.cost_label.setWordWrap(True)
        self.cost_label.hide()
        self.preview_button = QPushButton("Preview…")
        self.preview_button.setAccessibleName("Preview the messages")
        self.preview_button.setToolTip(
            "Each recipient's own message as a phone shows it, and those that cannot be sent"
        )
        self.preview_button.clicked.connect(self.open_preview)
        self.test_button = QPushButton("Send a test to me")
        self.test_button.setAccessibleName("Send a test to me")
        self.test_button.setToolTip(
            "Send the first recipient's message to your own number (Opt-outs tab ▸ Rules)"
        )
        self.test_button.clicked.connect(self.send_test)
        self.outcome = PlainLabel()
        self.outcome.setAccessibleName("Batch outcome")
        self.outcome.setWordWrap(True)
        self.error = PlainLabel()
        self.error.setAccessibleName("Batch error")
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()
        parallel = QLabel("Pa&rallel")
        parallel.setBuddy(self.concurrency)
        buttons = QHBoxLayout()
        buttons.addWidget(self.outcome, 1)
        buttons.addWidget(self.error, 1)
        buttons.addWidget(parallel)
        buttons.addWidget(self.concurrency)
        buttons.addWidget(self.remaining_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.send_button)
        optouts = QHBoxLayout()
        optouts.addWidget(self.optout_line, 1)
        optouts.addWidget(self.export_excluded_button)
        before = QHBoxLayout()
        before.addWidget(self.cost_label, 1)
        before.addWidget(self.preview_button)
        before.addWidget(self.test_button)
        layout = QVBoxLayout(box)
        layout.addLayout(grid)
        for line in (self.plan_label, self.ucs2_label, self.longer_label):
            layout.addWidget(line)
        layout.addLayout(optouts)
        layout.addLayout(before)
        layout.addLayout(buttons)
        return box

    def parallel(self) -> int:
        value = self.concurrency.currentData()
        return value if isinstance(value, int) else DEFAULT_LANES

    def set_parallel(self, value: int) -> None:
        self.concurrency.setCurrentIndex(max(0, self.concurrency.findData(value)))

    # ---- totals --------------------------------------------------------------------------

    def personal_template(self) -> Template | None:
        """The message as a template with placeholders (None: the same text for all)."""
        template = self.compose.editor.template()
        return template if isinstance(template, Template) and template.personal else None

    def update_totals(self) -> None:
        """Something the totals depend on changed: a plan is asked for (personal
        messages), and the figures are shown as they stand."""
        template = self.personal_template()
        if template is None:
            self.planner.clear()
        else:
            self._want_plan(template)
        self._show_totals()

    def _show_totals(self) -> None:
        if self.personal_template() is not None:
            self._show_plan_totals()
            return
        self.merge.hide()
        for line in (self.plan_label, self.ucs2_label, self.longer_label):
            line.hide()
        broken = self.compose.editor.template()
        if isinstance(broken, TemplateError):
            self._line(self.plan_label, f"Not a usable template: {broken}", "error")
        result = self.recipients.result
        self.recipients.show_invalid(list(result.invalid) if result else [])
        parts = self.compose.editor.info().parts
        if self.recipients.busy:
            for label in self.figures.values():
                label.setText("…")
            self.figures["parts"].setText(str(parts))
            self._show_optouts(None)
            return
        valid = len(result.numbers) if result else 0
        screened = self._current_screen()
        excluded = 0 if screened is None or screened.factual else len(screened.excluded)
        sent = valid - excluded
        values = {
            "valid": valid,
            "duplicates": result.duplicates if result else 0,
            "invalid": len(result.invalid) if result else 0,
            "excluded": excluded,
            "parts": parts,
            "messages": sent * parts,
            "requests": math.ceil(sent / MAX_RECIPIENTS_PER_REQUEST),
        }
        for key, value in values.items():
            self.figures[key].setText(f"{value:,}")
        if screened is None and valid:
            self.figures["excluded"].setText("…")  # being screened: the figures follow
        self._show_optouts(screened)
        self.cost.want(self.session.sending, sent * parts if self.compose.editor.text() else 0)

    def _show_plan_totals(self) -> None:
        """The figures of the personal plan shown (or why there is none yet)."""
        planner = self.planner
        plan, failure = planner.plan, planner.failure
        if plan is None or failure is not None:
            for label in self.figures.values():
                label.setText("–" if failure is not None else "…")
            for line in (self.ucs2_label, self.longer_label):
                line.hide()
            if failure is not None:
                self._line(self.plan_label, failure.message, "error")
            else:
                self._line(self.plan_label, "Making every recipient's message…", "hint")
            self._show_optouts(None)
            self.cost.want(None, 0)
            return
        values = {
            "valid": plan.recipients + len(plan.excluded),
            "duplicates": plan.duplicates,
            "invalid": len(plan.invalid),
            "excluded": len(plan.excluded),
            "messages": plan.parts[2],
            "requests": plan.request_count,
        }
        for key, value in values.items():
            self.figures[key].setText(f"{value:,}")
        self.figures["parts"].setText(parts_range(plan) if plan.recipients else "0")
        updating = " Updating…" if planner.pending else ""
        self._line(self.plan_label, plan_line(plan) + updating, "hint")
        for label, (text, tip), role in (
            (self.ucs2_label, ucs2_line(plan), "warning"),
            (self.longer_label, longer_line(plan), "hint"),
        ):
            self._line(label, text, role)
            label.setToolTip(tooltip(tip))
        self._show_optouts(Screened((), plan.excluded) if plan.excluded else None)
        self.cost.want(self.session.sending, plan.parts[2])

    def say(self, text: str, role: str) -> None:
        """The outcome line ("" hides it)."""
        self._line(self.outcome, text, role)

    def _line(self, label: QLabel, text: str, role: str) -> None:
        label.setText(text)
        set_role(label, role)
        label.setVisible(bool(text))

    # ---- personal messages ---------------------------------------------------------------

    def plan_inputs(self, template: Template) -> PlanInputs:
        """What the plan of the tab as it stands is made from."""
        panel, compose = self.recipients, self.compose
        table = panel.table if panel.source() == FILE else None
        marketing, factual = compose.marking.marked()
        return PlanInputs(
            template=template,
            mapping=tuple(sorted(self.merge.mapping().items())),
            table=table,
            column=table.column if table is not None else 0,
            file_name=panel.file_path.name if table is not None and panel.file_path else "",
            pasted=None if table is not None else panel.base(),
            groups=group_members(panel.group_members),
            marketing=marketing,
            factual=factual,
            instruction=compose.compliance.instruction,
        )

    def _want_plan(self, template: Template) -> None:
        sending, store = self.session.sending, self.session.store
        if sending is None or store is None or self.recipients.pending():
            return
        self.planner.want(self.plan_inputs(template), sending, store.contacts)

    def _planned(self) -> None:
        """A plan (or why there is none) landed: totals, merge fields, invalid list, preview."""
        planner = self.planner
        plan, template = planner.plan, self.personal_template()
        shown = self.merge.isVisibleTo(self)
        if planner.recipients is not None and template is not None:
            table = self.recipients.table if self.recipients.source() == FILE else None
            keys, fields = offered_sources(table, planner.recipients)
            titles = table.titles() if table is not None else []
            columns = [(k, titles[i] or f"Column {i + 1}") for i, k in enumerate(keys)]
            self.merge.show_fields(template, columns, fields)
        elif template is None:
            self.merge.hide()
        else:
            self.merge.show_fields(template, [], [])
        if self.merge.isVisibleTo(self) and not shown:
            self._make_room_for_merge()
        if plan is not None:
            self.merge.set_examples(plan.messages[0].recipient.values if plan.messages else None)
            self.recipients.show_invalid(list(plan.invalid))
        self._show_totals()
        self.trial.follow()

    def _make_room_for_merge(self) -> None:
        """The merge fields appeared: they get the height they need, the list the rest."""
        total = sum(self.left_split.sizes())
        wanted = self.merge.sizeHint().height()
        if total > wanted:
            self.left_split.setSizes([total - wanted, wanted])

    def _contacts_changed(self) -> None:
        """The address book changed: groups and values are read again."""
        self.recipients.reload_groups()
        self.planner.invalidate()
        self.update_totals()

    # ---- preview and a test to oneself ----------------------------------------------------

    def same_text(self) -> str:
        """A message that is the same for all, as sent (`{{` written as one brace)."""
        template = self.compose.editor.template()
        return template.render({}) if isinstance(template, Template) else self.compose.editor.text()

    def open_preview(self) -> None:
        """Every recipient's message as a phone shows it (a window beside the tab)."""
        self.trial.open_preview()

    def send_test(self) -> None:
        """Send the first recipient's message to the operator's own number."""
        self.trial.send_test()

    @property
    def preview(self) -> PreviewDialog | None:
        return self.trial.dialog

    @property
    def own_number(self) -> str:
        return self.trial.own_number

    def _template_said(self, text: str, role: str) -> None:
        self._line(self.template_note, text, role)

    # ---- cost ----------------------------------------------------------------------------

    def _show_cost(self, cost: Cost | None) -> None:
        text, role = cost_line(cost)
        self._line(self.cost_label, text, role)

    # ---- the opt-out list ----------------------------------------------------------------

    def _current_screen(self) -> Screened | None:
        """The screen of the recipients as they are now; starts one when there is none."""
        result = self.recipients.result
        if result is None:
            return None
        return self.screening.current(
            self._guard(), (result, self.compose.marking.factual.isChecked())
        )

    def _guard(self) -> OptOutGuard | None:
        sending = self.session.sending
        return sending.guard if sending is not None else None

    def screen_again(self) -> None:
        """Screen the recipients again (a STOP may have arrived); the figures shown stay
        until the new ones are in."""
        self._screen_timer.stop()
        if self.personal_template() is not None:
            self.planner.invalidate()  # the plan leaves out who opted out: made again
            self.update_totals()
            return
        result = self.recipients.result
        if result is not None and not self.recipients.busy:
            self.screening.start(self._guard(), (result, self.compose.marking.factual.isChecked()))

    def _screen_failed(self, text: str) -> None:
        self.optout_line.setText(text)
        set_role(self.optout_line, "error")
        self.optout_line.show()

    def _show_optouts(self, screened: Screened | None) -> None:
        count = len(screened.excluded) if screened is not None else 0
        self.export_excluded_button.setVisible(count > 0)
        if not count or screened is None:
            self.optout_line.hide()
            return
        people = plural(count, "recipient")
        if screened.factual:
            text = (
                f"Opted out: {people}, kept: the message is marked purely factual "
                "(the mark is recorded)."
            )
            role = "warning"
        else:
            text = f"Opted out: {count:,} excluded. The batch will not text {people} on the opt-out list."
            role = "hint"
        self.optout_line.setText(text)
        set_role(self.optout_line, role)
        self.optout_line.show()

    def _export_excluded_clicked(self) -> None:
        suggested = Path.home() / f"gwdesk-batch-opted-out-{date.today():%Y%m%d}.csv"
        name, _filter = QFileDialog.getSaveFileName(
            self, "Export the opted-out recipients", str(suggested), "CSV files (*.csv)"
        )
        if name:
            self.export_excluded(Path(name))

    def excluded(self) -> tuple[OptOut, ...]:
        """The recipients the opt-out list leaves out of the send shown."""
        if self.personal_template() is not None:
            plan = self.planner.plan
            return plan.excluded if plan is not None else ()
        screened = self.screening.screened
        return screened.excluded if screened is not None and not screened.factual else ()

    def export_excluded(self, path: Path) -> None:
        """Write the recipients the opt-out list leaves out to `path` (off the GUI thread)."""
        excluded = self.excluded()
        if not excluded:
            return
        self.tasks.run(
            self._export_excluded(path, excluded),
            key=EXCLUDED_EXPORT_KEY,
            owner=self,
            context="exporting the opted-out recipients",
        )

    async def _export_excluded(self, path: Path, excluded: tuple[OptOut, ...]) -> None:
        try:
            count = await off_thread(lambda: write_optouts(path, excluded))
        except OSError as exc:
            self.show_error(f"{path.name} cannot be written: {exc.strerror or exc}.")
            return
        if alive(self):
            self.optout_line.setText(f"{self.optout_line.text()} Saved {count:,} to {path.name}.")

    def _rules_changed(self) -> None:
        sending = self.session.sending
        if sending is not None:
            self.compose.set_compliance(sending.compliance, default=False)
        self.trial.read_own_number()
        self.update_totals()  # a new instruction changes every marketing text

    def totals_text(self) -> str:
        names = {key: caption for key, caption, _tip in FIGURES}
        return "\n".join(f"{names[k]}: {label.text()}" for k, label in self.figures.items())

    # ---- sending -------------------------------------------------------------------------

    @property
    def sending(self) -> bool:
        return self.tasks.running(SEND_KEY, owner=self)

    def send(self) -> None:
        """Check everything, confirm a big batch, then send it in requests of 100."""
        if self.sending or (self.confirm_box is not None and self.confirm_box.isVisible()):
            return
        self.clear_errors()
        template = self.compose.editor.template()
        if isinstance(template, TemplateError):
            self.compose.show_error("Message", f"Not a usable template: {template}")
            return
        if isinstance(template, Template) and template.personal:
            self._send_personal(template)
            return
        checked = self._checked()
        numbers = self._numbers()
        if checked is None or numbers is None:
            return
        sending, message = checked
        questions = self._questions(len(numbers))
        total = self._plain_parts(len(numbers))
        known = self.cost.known(total)
        if known is not None and known.covered is False:
            questions.append(short_of(known))

        def start() -> None:
            self.tasks.cancel(
                FOLLOW_KEY, owner=self
            )  # the last batch's progress is no longer shown
            self.run = None
            self.results.show_run(None)
            record = self._list_record(sending, message, numbers, total, asked=known is not None)
            self._launch(sending, message, record)

        if questions:
            yes = f"Send to {plural(len(numbers), 'recipient')}"
            self._confirm("\n\n".join(questions), yes, start)
        else:
            start()

    def _questions(self, recipients: int) -> list[str]:
        """What a new send asks before it goes (another send already lodged, a big one)."""
        questions = []
        run = self.run
        if run is not None and run.count(EntryState.LODGED) and run.remaining():
            lodged = run.recipients_in(EntryState.LODGED)
            questions.append(
                f"The last batch already reached {plural(lodged, 'recipient')}; Send remaining "
                "sends only to the others. Send this batch to every recipient again?"
            )
        if recipients > self.confirm_above:
            questions.append(f"Send this batch?\n\n{self.totals_text()}")
        return questions

    def _plain_parts(self, recipients: int) -> int:
        """The parts a same-for-all message to `recipients` numbers comes to."""
        screened = self.screening.screened
        excluded = 0 if screened is None or screened.factual else len(screened.excluded)
        return max(recipients - excluded, 0) * self.compose.editor.info().parts

    def _list_record(
        self, sending: Sending, message: SmsMessage, numbers: list[str], parts: int, *, asked: bool
    ) -> Record:
        """Records a same-for-all list once its cost is weighed (asked if not yet)."""

        async def record() -> ListRun | None:
            if not asked:
                cost = await self.cost.for_send(sending, parts)
                yes = f"Send to {plural(len(numbers), 'recipient')}"
                if cost.covered is False and not await self._ask(short_of(cost), yes):
                    self._line(self.outcome, "Not sent: the credits do not cover it.", "hint")
                    return None
            self._line(self.outcome, f"Recording {plural(len(numbers), 'recipient')}…", "hint")
            batch, entries = await sending.record_list(message, numbers)
            return ListRun(batch, entries)

        return record

    def _send_personal(self, template: Template) -> None:
        """A text of its own for each recipient: the plan (made first if the one shown is
        not of what is on screen), questions, then `record_personal`."""
        try:
            sending = self.session.require_sending()
            options = check_options(self.compose.form(), sending.region, sending.now())
        except ValidationError as exc:
            self.show_gateway_error(exc)
            return
        except GatewayError as exc:
            self.show_error(exc.message)
            return
        panel = self.recipients
        if panel.pending():
            if not panel.busy and panel.source() != FILE:
                panel.check_paste()
            panel.show_error("The recipients are still being checked; send when they are ready.")
            return
        inputs = self.plan_inputs(template)
        store = self.session.store
        contacts = store.contacts if store is not None else None

        async def record() -> ListRun | None:
            self._line(self.outcome, "Making every recipient's message…", "hint")
            plan = with_options(await self.planner.ready(inputs, sending, contacts), options)
            questions = self._questions(plan.recipients)
            if plan.invalid and plan.recipients:
                questions.insert(
                    0,
                    f"{plural(len(plan.invalid), 'recipient')} cannot be sent to (listed under "
                    f"Invalid, with why). Send to the other {plural(plan.recipients, 'recipient')}?",
                )
            if plan.recipients:
                cost = await self.cost.for_send(sending, plan.parts[2])
                if cost.covered is False:
                    questions.append(short_of(cost))
            yes = f"Send to {plural(plan.recipients, 'recipient')}"
            if questions and not await self._ask("\n\n".join(questions), yes):
                self._line(self.outcome, "Not sent.", "hint")
                return None
            self.tasks.cancel(FOLLOW_KEY, owner=self)
            self.run = None
            self.results.show_run(None)
            self._line(self.outcome, f"Recording {plural(plan.recipients, 'message')}…", "hint")
            batch, entries = await sending.record_personal(plan)
            return ListRun(batch, entries, personal=plan.history_message())

        self._launch(sending, None, record)

    def send_remaining(self) -> None:
        """Send what the last run did not lodge: a list with the message as it is now, a
        personal send with each recipient's own text as recorded."""
        run = self.run
        if run is None or self.sending or not run.remaining():
            return
        self.clear_errors()
        if run.personal is not None:
            try:
                sending = self.session.require_sending()
            except GatewayError as exc:
                self.show_error(exc.message)
                return
            self._launch(sending, None, None)
            return
        checked = self._checked()
        if checked is not None:
            self._launch(*checked, None)

    def cancel_send(self) -> None:
        if self._stop is not None and self.sending:
            self._stop.set()
            if self.run is not None:
                self.run.stopping = True
            self.cancel_button.setEnabled(False)
            self.outcome.setText("Stopping: the requests on the wire finish, no other starts…")
            set_role(self.outcome, "hint")

    def _checked(self) -> tuple[Sending, SmsMessage] | None:
        """The profile's sending and the message, checked (a refusal shown at its field)."""
        try:
            sending = self.session.require_sending()
        except GatewayError as exc:
            self.show_error(exc.message)
            return None
        form = replace(self.compose.form(), text=self.same_text())
        try:
            message = check_message(form, sending.region, sending.now(), sending.compliance)
        except ValidationError as exc:
            self.show_gateway_error(exc)
            return None
        return sending, message

    def _numbers(self) -> list[str] | None:
        panel = self.recipients
        if panel.pending():
            if not panel.busy and panel.source() != FILE:
                panel.check_paste()  # the operator typed and sent at once: check now
            panel.show_error("The recipients are still being checked; send when they are ready.")
            return None
        if panel.result is None or not panel.result.numbers:
            panel.show_error(
                "There is no usable recipient yet: paste numbers, import a file or choose a group."
            )
            return None
        return list(panel.result.numbers)

    def _confirm(self, text: str, yes: str, then: Callable[[], None]) -> None:
        box, send = question_box(self, "Send the batch?", text, yes)

        def finished(_result: int) -> None:
            self.confirm_box = None
            if box.clickedButton() is send:
                then()

        box.finished.connect(finished)
        self.confirm_box = box
        box.open()

    async def _ask(self, text: str, yes: str) -> bool:
        """The same question, awaited inside a send."""
        box, send = question_box(self, "Send the batch?", text, yes)
        self.confirm_box = box
        try:
            return await answered(box, send)
        finally:
            if alive(self):
                self.confirm_box = None

    def _launch(self, sending: Sending, message: SmsMessage | None, record: Record | None) -> None:
        """Send a new list or plan (`record` records it), or what the shown batch has left."""
        if self.sending:  # the same key would cancel the send on the wire
            return
        self._stop = asyncio.Event()
        self.tasks.run(
            self._send(sending, message, record, self._stop),
            key=SEND_KEY,
            owner=self,
            context="sending a batch",
        )
        self._update_buttons()

    async def _send(
        self,
        sending: Sending,
        message: SmsMessage | None,
        record: Record | None,
        stop: asyncio.Event,
    ) -> None:
        """`message`: a same-for-all list's (None for a personal send's remaining)."""
        self._set_sending(True)
        run = self.run
        outcome: Outcome | None = None
        ended = False
        """The send ran to its end (not cut off: the tab closed, the profile switched)."""
        try:
            if record is not None:
                try:
                    recorded = await record()
                except ValidationError as exc:
                    self.outcome.clear()
                    self.show_gateway_error(exc)
                    return
                except (GatewayError, StoreError) as exc:
                    self.outcome.clear()
                    self.show_error(f"The batch was not recorded, so nothing was sent: {exc}")
                    return
                if recorded is None:
                    return
                run = self.run = recorded
                self.results.show_run(run)
            if run is None:
                return
            due = run.remaining()
            run.sending, run.stopping, run.halted = True, False, ""
            count = sum(e.recipient_count for e in due)
            self.outcome.setText(f"Sending to {plural(count, 'recipient')}…")
            set_role(self.outcome, "hint")
            self._follow(run)
            try:
                if run.personal is not None:
                    outcome = await sending.run_personal(
                        run.batch,
                        due,
                        run.personal,
                        lanes=self.parallel(),
                        stop=stop,
                        on_change=self._entry_changed,
                    )
                else:
                    assert message is not None
                    outcome = await sending.run_list(
                        run.batch,
                        due,
                        message,
                        lanes=self.parallel(),
                        stop=stop,
                        on_change=self._entry_changed,
                    )
            except OutboxBusy as exc:  # another window or gwdesk is sending this batch
                run.halted = str(exc)
            except StoreError as exc:
                run.halted = (
                    f"The outbox could not record the batch ({exc}), so nothing more was sent."
                )
            except GatewayError as exc:
                run.halted = exc.message
            ended = True
        finally:
            if run is not None:
                run.sending = False
            if alive(self):
                self._set_sending(False)
                self.cost.forget()  # the balance changed
                if run is not None and self.run is run:
                    if ended:
                        self._finished(run, outcome)
                    else:
                        self.results.refresh()

    def _entry_changed(self, entry: OutboxEntry) -> None:
        """The runner handed an entry's new row: it replaces the old one."""
        run = self.run
        if not alive(self) or run is None:
            return
        row = run.put(entry)
        if row >= 0:
            self.results.entry_changed(row)
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _refresh_run(self) -> None:
        self.results.refresh()
        self._update_buttons()

    def _finished(self, run: ListRun, outcome: Outcome | None) -> None:
        """Say what the send came to (the use case wrote the history row)."""
        if outcome is not None:
            for sent in outcome.sent:  # each row as it stands at the end
                self.results.entry_changed(run.put(sent.entry))
            run.halted = run.halted or outcome.halted
            refused = next(
                (s.error for s in outcome.sent if isinstance(s.error, ValidationError)), None
            )
            if refused is not None and refused.field:
                self.compose.show_error(refused.field, refused.message)
        self.results.refresh()
        lodged = run.count(EntryState.LODGED)
        total = len(run.entries)
        left = run.recipients - run.recipients_in(EntryState.LODGED)
        excluded = len(outcome.excluded if outcome is not None else run.batch.excluded)
        left_out = (
            f" {plural(excluded, 'opted-out recipient')} excluded (not texted)." if excluded else ""
        )
        if lodged == total:
            text, role = (
                f"All {plural(total, 'request')} lodged: {plural(run.recipients, 'recipient')}.",
                "ok",
            )
        elif run.halted:
            text, role = f"Stopped: {run.halted} {plural(left, 'recipient')} not sent.", "error"
        else:
            failed = run.count(EntryState.FAILED, EntryState.UNKNOWN)
            why = f"{failed} failed" if failed else "cancelled"
            text = (
                f"{lodged} of {plural(total, 'request')} lodged ({why}); "
                f"{plural(left, 'recipient')} not sent yet: Send remaining sends only to them."
            )
            role = "error" if failed else "hint"
        text += left_out
        self.outcome.setText(text)
        set_role(self.outcome, role)
        self.session.report(f"batch: {text}", lodged == total)
        self._update_buttons(False)

    # ---- following batch progress --------------------------------------------------------

    def _follow(self, run: ListRun) -> None:
        if self.tasks.running(FOLLOW_KEY, owner=self):
            return
        self._follow_stop = asyncio.Event()
        self.tasks.run(
            self._following(run, self._follow_stop),
            key=FOLLOW_KEY,
            owner=self,
            context="batch progress",
        )

    async def _following(self, run: ListRun, stop: asyncio.Event) -> None:
        service, _store = self.session.require()
        self.results.set_following(True)
        self.results.follow_button.show()
        self.results.follow_label.setText("Following the batches through the status endpoint…")
        self.results.follow_label.setToolTip("")
        try:
            await follow(
                service,
                lambda: run.entries,
                run.progress,
                stop=stop,
                busy=lambda: run.sending,
                on_change=self._progress_changed,
            )
        finally:
            if alive(self) and self.run is run:
                self._followed(run, stop)

    def _progress_changed(self, entry: OutboxEntry) -> None:
        """Following learnt more of an entry: repaint its row (the row itself is newer)."""
        run = self.run
        if not alive(self) or run is None:
            return
        self.results.entry_changed(run.rows.get(entry.id, -1))
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _followed(self, run: ListRun, stop: asyncio.Event) -> None:
        self.results.refresh()
        self.results.set_following(False)
        done = run.created >= run.recipients_in(EntryState.LODGED)
        finished = done and not stop.is_set()
        given_up = run.given_up()
        label = self.results.follow_label
        if finished:
            label.setText("Every lodged message is created.")
        elif given_up and not stop.is_set():
            label.setText(f"Not following: {plural(len(given_up), 'request')} gave no progress.")
        else:
            label.setText("Not following.")
        label.setToolTip(tooltip(given_up[0]) if given_up and not finished else "")
        self.results.follow_button.setVisible(not finished)

    def _toggle_follow(self) -> None:
        if self.tasks.running(FOLLOW_KEY, owner=self):
            if self._follow_stop is not None:
                self._follow_stop.set()
        elif self.run is not None:
            self.run.progress.again()
            self._follow(self.run)

    # ---- state ---------------------------------------------------------------------------

    def _set_sending(self, sending: bool) -> None:
        self.compose.setEnabled(not sending)
        self.merge.setEnabled(not sending)
        self.recipients.set_enabled_for_send(not sending)
        self._update_buttons(sending)

    def _update_buttons(self, sending: bool | None = None) -> None:
        sending = self.sending if sending is None else sending
        run = self.run
        self.send_button.setEnabled(not sending)
        self.cancel_button.setEnabled(sending and not (run is not None and run.stopping))
        self.remaining_button.setEnabled(not sending and run is not None and bool(run.remaining()))
        self.concurrency.setEnabled(not sending)

    def clear_errors(self) -> None:
        self.error.hide()
        self.template_note.hide()
        self.recipients.clear_error()
        self.compose.clear_errors()

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def show_gateway_error(self, exc: GatewayError) -> None:
        field = exc.field if isinstance(exc, ValidationError) else None
        if field in ("Recipients", "Recipient"):
            self.recipients.show_error(exc.message)
        elif not self.compose.show_error(field, exc.message):
            self.show_error(exc.message)

    # ---- drafts and sessions -------------------------------------------------------------

    def _edited(self) -> None:
        self.update_totals()
        if not self._restoring:
            self._draft_timer.start()

    def save_draft(self) -> None:
        """Hand the draft to the store's writer thread: another process may hold the file's
        write lock for seconds, and a failure is reported (once) in the status bar."""
        self._draft_timer.stop()
        store = self.session.store
        if store is not None:
            store.drafts.queue(DRAFT_KEY, {**self.compose.draft(), **self.recipients.state()})

    def on_session_changed(self) -> None:
        for key in (SEND_KEY, FOLLOW_KEY):
            self.tasks.cancel(key, owner=self)
        self.trial.cancel()
        self.screening.reset()
        self.planner.clear()
        self.cost.forget()
        self.run = None
        self.results.show_run(None)
        self.outcome.clear()
        self.clear_errors()
        profile = self.session.profile
        zone = (profile.zone, profile.timezone) if profile else (None, "")
        self.compose.send_at.set_gateway_zone(*zone)
        self.recipients.set_region(profile.region if profile else DEFAULT_REGION)
        self.compose.set_region(profile.region if profile else DEFAULT_REGION)
        sending = self.session.sending
        if sending is not None:
            self.compose.set_compliance(sending.compliance)
        store = self.session.store
        self.picker.set_store(store.templates if store is not None else None)
        self.recipients.set_contacts(store.contacts if store is not None else None)
        self.trial.read_own_number()
        if store is not None:
            try:
                data = store.drafts.load(DRAFT_KEY)
            except StoreError as exc:
                log.warning("batch draft could not be read: %s", exc)
                data = {}
            self._restoring = True
            try:
                self.compose.restore(data)
                pasted = data.get("pasted")
                if isinstance(pasted, str) and pasted and not self.recipients.paste.toPlainText():
                    self.recipients.paste.setPlainText(pasted[:200_000])
            finally:
                self._restoring = False
        self.update_totals()
        self._update_buttons()
