"""Batch tab: one message to many recipients, or each their own, asked about, sent, followed to the end.

The tab renders and forwards; every decision is the list flow's
(`gwdesk.app.list_send.ListSend`, the profile's): what the totals say (the figures,
who opted out, the personal plan's lines), what a send asks first (one question:
rows that cannot be sent to, a list the last run already reached, a big list, the
same text sent a short while ago, credits that do not cover it), recording the send
in the outbox, running it in lanes (Cancel, "Send remaining"), following the
gateway's progress, and the test to the operator's own number.

Its parts, each in its module: `recipients`, `merge`, `compose`, `totals`, `asking` (the
question), `results` and `report` (the requests; each recipient's outcome, resend to the
failed), `planning` and `screening` (off the GUI thread), `sender`, `preview`,
`send_to_me`, `notices`. Nothing composed is lost when a send fails, nor the draft.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Final

from PySide6.QtWidgets import QMessageBox, QWidget

from gwdesk.app.list_send import (
    ListRun,
    ListSend,
    PlanInputs,
    PreparedSend,
    RunEnd,
    StoreError,
    ValidationError,
    list_totals,
    plan_totals,
)
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.templates import Template
from gwdesk.ui.batch.asking import SendAsking
from gwdesk.ui.batch.compose import BatchCompose
from gwdesk.ui.batch.layout import lay_out
from gwdesk.ui.batch.merge import MergeBox
from gwdesk.ui.batch.notices import Notices
from gwdesk.ui.batch.planning import Planner, inputs_of
from gwdesk.ui.batch.preview import PreviewWindow, plan_items, same_text_items
from gwdesk.ui.batch.recipients import FILE, RecipientsPanel
from gwdesk.ui.batch.report import ReportPanel
from gwdesk.ui.batch.results import ResultsPanel
from gwdesk.ui.batch.screening import Screening
from gwdesk.ui.batch.send_to_me import SendToMe
from gwdesk.ui.batch.sender import BatchSender
from gwdesk.ui.batch.totals import TotalsPanel, show_line
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.session import NOT_CONNECTED, Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.cost import CostWatch, cost_line
from gwdesk.ui.widgets.panes import on_ctrl_enter
from gwdesk.ui.widgets.template_picker import TemplatePicker

log = logging.getLogger("gwdesk.ui.batch")
SCREEN_DELAY_MS: Final = 300
DRAFT_KEY: Final = "batch"
DRAFT_DELAY_MS: Final = 800
STILL_PLANNING: Final = "The messages are still being made: preview them in a moment."


class BatchTab(BaseTab):
    """The Batch tab over the profile's list flow (see the module docstring)."""

    title = "Batch"
    icon_name = "batch"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        self.flow: ListSend | None = None
        """The profile's list sends (None before a profile is chosen)."""
        self._restoring = False
        self.recipients = RecipientsPanel(tasks, theme)
        self.merge = MergeBox()
        self.compose = BatchCompose()
        self.picker = TemplatePicker(tasks, theme, self.compose.text)
        self.template_note = PlainLabel("")
        self.template_note.setAccessibleName("Templates result")
        self.template_note.setWordWrap(True)
        self.compose.add_tools(self.template_note, self.picker)
        self.totals = TotalsPanel(tasks, theme)
        self.results = ResultsPanel(theme)
        self.notices = Notices(self.recipients, self.compose, self.totals, self.template_note)
        self.planner = Planner(tasks, self)
        self.screening = Screening(tasks, self)
        self.cost = CostWatch(tasks, self)
        self.preview = PreviewWindow(theme, self)
        self.send_to_me = SendToMe(tasks, self)
        self.batch_sender = BatchSender(tasks, self.results, self)
        self.asking = SendAsking(tasks, self)
        self.report = ReportPanel(tasks, theme, self.batch_sender, self.totals.parallel)
        self._draft_timer = single_shot(self, DRAFT_DELAY_MS, self.save_draft)
        self._screen_timer = single_shot(self, SCREEN_DELAY_MS, self.screen_again)
        self.splits = lay_out(
            self, self.recipients, self.merge, self.compose, self.totals, self.results
        )
        self._connect()
        self.update_totals()
        self._sending_changed(False)
        if session.active:  # built after the profile was chosen: take it now
            self.on_session_changed()

    def _connect(self) -> None:
        session, totals, notices = self.session, self.totals, self.notices
        self.recipients.checked.connect(self.update_totals)
        self.recipients.edited.connect(self._edited)
        self.compose.changed.connect(self._edited)
        self.compose.submit_requested.connect(self.send)
        self.merge.changed.connect(self.update_totals)
        self.planner.planned.connect(self._planned)
        self.screening.changed.connect(self.update_totals)
        self.screening.failed.connect(totals.optouts_failed)
        self.cost.costed.connect(lambda cost: totals.show_cost(*cost_line(cost)))
        self.picker.chosen.connect(self.compose.set_text)
        self.picker.said.connect(lambda text, role: show_line(self.template_note, text, role))
        totals.send_requested.connect(self.send)
        totals.cancel_requested.connect(self.cancel_send)
        totals.remaining_requested.connect(self.send_remaining)
        totals.preview_requested.connect(lambda: self.open_preview())
        totals.test_requested.connect(self.send_test)
        self.results.follow_requested.connect(lambda: self.batch_sender.toggle_follow(self.flow))
        self.asking.confirmed.connect(self._confirmed)
        for source in (self.send_to_me, self.batch_sender, self.asking, self.report.asking):
            source.said.connect(totals.say)
            source.failed.connect(notices.error)
            source.refused.connect(notices.refused)
        self.send_to_me.testing.connect(totals.set_testing)
        self.preview.test_requested.connect(self.send_test)
        self.send_to_me.tested.connect(lambda report: session.report(report, True))
        self.send_to_me.tested.connect(lambda _report: self.cost.forget())  # the balance changed
        self.batch_sender.finished.connect(self._finished)
        self.batch_sender.state_changed.connect(self._sending_changed)
        self.connect_tracked(session.rules_changed, self._rules_changed)
        self.connect_tracked(session.contacts_changed, self._contacts_changed)
        self.connect_tracked(session.replies.replies_arrived, lambda _d: self._screen_timer.start())
        self.connect_tracked(session.closing, self.save_draft)
        self.connect_tracked(session.closing, self.cost.stop_asking)
        on_ctrl_enter(self, self.send)

    @property
    def run(self) -> ListRun | None:
        """The list shown: the last one recorded (None before the first)."""
        return self.flow.run if self.flow is not None else None

    @property
    def sending(self) -> bool:
        return self.batch_sender.busy

    @property
    def confirm_box(self) -> QMessageBox | None:
        """The send's question while it is open (None otherwise)."""
        return self.asking.box

    def set_parallel(self, value: int) -> None:
        self.totals.set_parallel(value)

    # ---- totals and the personal plan ----------------------------------------------------

    def plan_inputs(self, template: Template) -> PlanInputs:
        """What the plan of the tab as it stands is made from."""
        return inputs_of(template, self.recipients, self.compose, self.merge)

    def update_totals(self) -> None:
        """Something the totals depend on changed: a plan is asked for (personal
        messages), and the flow's totals are shown as they stand."""
        template, flow, panel = self.compose.personal_template(), self.flow, self.recipients
        if template is not None:
            if flow is not None and not panel.pending():
                self.planner.want(self.plan_inputs(template), flow)
            planner = self.planner
            failure = planner.failure.message if planner.failure is not None else None
            totals = plan_totals(planner.plan, failure, updating=planner.pending)
        else:
            self.planner.clear()
            self.merge.hide()
            result = panel.result
            key = (result, self.compose.marked()[1]) if result is not None else None
            checking = panel.busy
            totals = list_totals(
                result,
                self.screening.current(flow, key) if key is not None and not checking else None,
                self.compose.parts_each(),
                checking=checking,
                has_text=self.compose.has_text(),
                broken=self.compose.template_problem(),
            )
        self.totals.show_totals(totals)
        if totals.invalid is not None:
            panel.show_invalid(list(totals.invalid))
        if totals.parts is not None:
            self.cost.want(self.session.sending if totals.parts else None, totals.parts)

    def _planned(self) -> None:
        """A plan (or why there is none) landed: merge fields, totals, preview."""
        planner, merge, panel = self.planner, self.merge, self.recipients
        shown = merge.isVisibleTo(self)
        table = panel.table if panel.source() == FILE else None
        merge.show_plan(self.compose.personal_template(), table, planner.recipients, planner.plan)
        if merge.isVisibleTo(self) and not shown:
            self.splits.room_for(merge)
        self.update_totals()
        if self.preview.showing:
            self.open_preview(keep=True)

    def _contacts_changed(self) -> None:
        """The address book changed: groups and values are read again."""
        self.recipients.reload_groups()
        self.planner.invalidate()
        self.update_totals()

    def _rules_changed(self) -> None:
        sending = self.session.sending
        if sending is not None:
            self.compose.set_compliance(sending.compliance, default=False)
        self.send_to_me.read_own_number(self.flow)
        self.update_totals()  # a new instruction changes every marketing text

    def screen_again(self) -> None:
        """Screen the recipients again (a STOP may have arrived); the figures shown stay
        until the new ones are in."""
        self._screen_timer.stop()
        if self.compose.personal_template() is not None:
            self.planner.invalidate()  # the plan leaves out who opted out: made again
            self.update_totals()
            return
        result = self.recipients.result
        if result is not None and not self.recipients.busy:
            self.screening.start(self.flow, (result, self.compose.marked()[1]))

    # ---- preview and a test to oneself ---------------------------------------------------

    def open_preview(self, keep: bool = False) -> None:
        """Every recipient's message as a phone shows it, in a window beside the tab
        (`keep`: the messages changed while it is open; it stays at the recipient)."""
        compose = self.compose
        if compose.personal_template() is not None:
            plan, failure = self.planner.plan, self.planner.failure
            if plan is None:
                self.notices.error(failure.message if failure is not None else STILL_PLANNING)
                return
            items = plan_items(plan)
        else:
            result = self.recipients.result
            numbers = result.numbers if result is not None else ()
            items = same_text_items(numbers, compose.previewed_text())
        scheduled = compose.send_at.value()
        self.preview.show_items(items, compose.sender_shown(), compose.region, scheduled, keep=keep)

    def send_test(self) -> None:
        """Send the first recipient's message to the operator's own number."""
        self.notices.clear()
        flow, template = self.flow, self.compose.personal_template()
        if flow is None:
            self.notices.error(NOT_CONNECTED)
            return
        form = self.compose.form()
        if template is None:
            form = replace(form, text=self.compose.same_text())
        inputs = self.plan_inputs(template) if template is not None else None
        plan = (lambda: self.planner.ready(inputs, flow)) if inputs is not None else None
        self.send_to_me.send_test(flow, form, plan)

    # ---- sending -------------------------------------------------------------------------

    def send(self) -> None:
        """Check what is composed at once (a refusal shown at its field), then have the
        flow weigh the send and ask its question (every list send asks: Ctrl+Enter opens
        it too); only the operator's yes sends it (`_confirmed`)."""
        if self.sending or self.asking.asking:
            return
        self.notices.clear()
        flow, compose, panel = self.flow, self.compose, self.recipients
        broken = compose.template_problem()
        if broken is not None:
            compose.show_error("Message", f"Not a usable template: {broken}")
            return
        if flow is None:
            self.notices.error(NOT_CONNECTED)
            return
        template = compose.personal_template()
        form = compose.form()
        try:
            same = compose.same_text() if template is None else ""  # a template: each its own
            checked = flow.check_form(form, same, personal=template is not None)
        except ValidationError as exc:
            self.notices.refused(exc)
            return
        recipients = panel.settled() if template is not None else panel.sendable()
        if recipients is None:
            return
        weigh = lambda parts: self.cost.for_send(flow.sending, parts)  # noqa: E731 - a fresh answer
        if template is not None:
            self.totals.say("Making every recipient's message…", "hint")
            plan = self.planner.ready(self.plan_inputs(template), flow)
            prepared = flow.prepare_plan(plan, checked, weigh=weigh, later=flow.later_of(form))
            self.asking.ask(flow, prepared)
        else:
            screened = self.screening.of((recipients, checked.factual))
            self.asking.ask(flow, flow.prepare_list(checked, recipients, screened=screened,
                            weigh=weigh, later=flow.later_of(form, compose.pace())))  # fmt: skip

    def _confirmed(self, flow: ListSend, ready: PreparedSend) -> None:
        """The operator said yes: the send goes (unless the profile changed meanwhile)."""
        if flow is self.flow:
            self.batch_sender.start(flow, ready, lanes=self.totals.parallel())

    def send_remaining(self) -> None:
        """Send what the last run did not lodge: a list with the message as it is now, a
        personal send with each recipient's own text as recorded."""
        flow, run = self.flow, self.run
        if flow is None or run is None or self.sending or not run.remaining():
            return
        self.notices.clear()
        message = None
        if run.personal is None:
            try:
                form = replace(self.compose.form(), hold_until=None, repeat="")  # it goes now
                message = flow.check_form(form, self.compose.same_text())
            except ValidationError as exc:
                self.notices.refused(exc)
                return
        self.batch_sender.start(flow, None, message=message, lanes=self.totals.parallel())

    def cancel_send(self) -> None:
        self.batch_sender.cancel()

    def _sending_changed(self, sending: bool) -> None:
        self.compose.setEnabled(not sending)
        self.merge.setEnabled(not sending)
        self.recipients.set_enabled_for_send(not sending)
        run = self.run
        self.totals.set_state(
            sending=sending,
            can_cancel=not self.batch_sender.stopping,
            can_resend=run is not None and bool(run.remaining()),
        )

    def _finished(self, end: RunEnd) -> None:
        """The run ended (the flow wrote its history row): the status bar says so."""
        if end.refused is not None:
            self.compose.show_error(end.refused.field, end.refused.message)
        self.session.report(f"batch: {end.text}", end.ok)
        self.cost.forget()  # the balance changed

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
        self.asking.cancel()
        self.batch_sender.reset()
        self.send_to_me.cancel()
        self.screening.reset()
        self.planner.clear()
        self.cost.forget()
        store, sending, profile = self.session.store, self.session.sending, self.session.profile
        self.flow = ListSend.of(sending, store) if sending and store else None
        self.report.set_flow(self.flow)
        self.totals.say("", "hint")
        self.notices.clear()
        self.compose.set_profile(profile, sending.compliance if sending is not None else None)
        self.recipients.set_region(profile.region if profile else DEFAULT_REGION)
        self.picker.set_store(store.templates if store is not None else None)
        self.recipients.set_flow(self.flow)
        self.send_to_me.read_own_number(self.flow)
        if store is not None:
            try:
                data = store.drafts.load(DRAFT_KEY)
            except StoreError as exc:
                log.warning("batch draft could not be read: %s", exc)
                data = {}
            self._restoring = True
            try:
                self.compose.restore(data)
                self.recipients.restore(data)
            finally:
                self._restoring = False
        self.update_totals()
        self._sending_changed(False)
