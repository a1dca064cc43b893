"""The Batch tab's report of the list shown: its totals under the requests, kept current,
exported, and "Resend to the failed…".

Every figure is the core's (`gwdesk.app.send_report`: each recipient's fate from the
outbox and the gateway's statuses by ExternalSystemId). The report is made again when
a run ends, when following the gateway's progress ends, on Refresh, and every
`REFRESH_MS` while it shows and some message awaits a final status; each request's
tally goes to the requests' "By status" column. Resend to the failed is a list send
of its own (`gwdesk.app.resend`): weighed and asked about as every list send is (the
tab's question, `SendAsking`), then recorded and run by the tab's sender, so the new
list is the one shown. The CSV goes through the one writer (`domain/spreadsheet.py`).
The gateway's status values and the outbox's reasons are data: plain text only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from gwdesk.app.list_send import GatewayError, ListSend, PreparedSend, StoreError
from gwdesk.app.resend import Resend, prepare_resend, record_resend
from gwdesk.app.send_report import Fate, SendReport, SendReports, Totals, totals_line
from gwdesk.ui.batch.asking import SendAsking
from gwdesk.ui.batch.sender import BatchSender
from gwdesk.ui.plain_text import PlainLabel, tooltip
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.theme import Theme
from gwdesk.ui.timers import repeating
from gwdesk.ui.widgets.listing import csv_to_save, dated_csv
from gwdesk.ui.widgets.validity import set_role

log = logging.getLogger("gwdesk.ui.batch.report")
REPORT_KEY: Final = "batch-report"
EXPORT_KEY: Final = "batch-report-export"
REFRESH_MS: Final = 30_000
"""How often a report some message of which awaits a final status is made again."""
#: (key, word, the fates it counts, its tooltip). Delivered and failed have labels of
#: their own; the others, said only when not 0, share the line beside them.
FIGURES: Final = (
    ("delivered", "delivered", (Fate.DELIVERED,), "Lodged, and the gateway says delivered"),
    ("failed", "failed", (Fate.REFUSED, Fate.DELIVERY_FAILED),
     "Failed when sent (the gateway refused the request) or on delivery (its status says "
     "failed, expired or rejected): Resend to the failed sends to exactly these"),
    ("awaiting", "awaiting", (Fate.AWAITING,),
     "Lodged; the gateway has no final status for them yet (Refresh asks again)"),
    ("unknown", "unknown", (Fate.UNKNOWN,),
     "Whether their request was lodged is not known yet: never sent again blindly"),
    ("not_sent", "not sent", (Fate.NOT_SENT, Fate.CANCELLED, Fate.OPTED_OUT, Fate.RESENT),
     "Not sent yet, cancelled, left out because they opted out, or failed and already "
     "sent again in a later batch"),
)  # fmt: skip
LABELLED: Final = ("delivered", "failed")
COLOURS: Final = {"delivered": "ok", "failed": "error"}
ASKING: Final = "asking the gateway…"
REFRESH_TIP: Final = "Refresh: ask the gateway the status of every message again."


def figure_tip(totals: Totals, fates: tuple[Fate, ...], tip: str) -> str:
    """A figure's tooltip: what it counts, then its parts when it adds up several."""
    parts = [f"{totals[fate]:,} {fate.words}" for fate in fates if totals[fate]]
    return f"{tip}.\n{', '.join(parts)}" if len(parts) > 1 else f"{tip}."


def rest_line(report: SendReport) -> str:
    """The figures without labels of their own, and the requests that could not be asked."""
    totals = report.totals
    said = [
        f"{count:,} {word}"
        for key, word, fates, _tip in FIGURES
        if key not in LABELLED and (count := sum(totals[f] for f in fates))
    ]
    if report.problems:
        said.append(f"{len(report.problems):,} request(s) not asked")
    return " · ".join(said)


class ReportPanel(QWidget):
    """The report of the list the tab shows: one line under its requests (hidden until there
    is one), the export's and the resend's words on the tab's line (`asking`)."""

    def __init__(
        self,
        tasks: TaskRunner,
        theme: Theme,
        sender: BatchSender,
        lanes: Callable[[], int],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.batch_sender = sender
        self.lanes = lanes
        self.flow: ListSend | None = None
        self.report: SendReport | None = None
        self.asking = SendAsking(tasks, self)
        """Resend to the failed asks as every list send does (the tab shows what it says)."""
        self._resend: Resend | None = None
        self.figures: dict[str, QLabel] = {}
        for key, word, _fates, tip in FIGURES[: len(LABELLED)]:
            value = QLabel(f"0 {word}")
            value.setAccessibleName(f"Report: {word}")
            value.setStyleSheet("font-weight: 600;")
            value.setToolTip(tip)
            self.figures[key] = value
        self.note = PlainLabel("")
        self.note.setAccessibleName("Report: the rest")
        self.note.setWordWrap(True)
        self.note.setProperty("role", "hint")
        self.refresh_button = self._button(theme, "refresh", "", REFRESH_TIP)
        self.refresh_button.setAccessibleName("Refresh the report")  # an icon: room for the rest
        self.refresh_button.clicked.connect(self.refresh)
        self.resend_button = self._button(
            theme,
            "send",
            "Resend to the failed…",
            "Send the same message again, as a new list, to exactly the recipients that "
            "failed (when sent or on delivery); asked first, as every list send is",
        )
        self.resend_button.clicked.connect(self.resend)
        self.export_button = self._button(
            theme, "export", "Export report…", "Save every recipient's outcome as CSV"
        )
        self.export_button.clicked.connect(self.export)
        self._lay_out()
        self.asking.confirmed.connect(self._confirmed)
        sender.state_changed.connect(self._sending_changed)
        sender.followed.connect(self.refresh)
        sender.finished.connect(lambda _end: self.refresh())
        sender.results.add_below(self)
        self._timer = repeating(self, REFRESH_MS, self._tick)
        self.hide()

    def _button(self, theme: Theme, icon: str, text: str, tip: str) -> QPushButton:
        button = QPushButton(theme.icon(icon), text)
        button.setAccessibleName(text.rstrip("…"))
        button.setToolTip(tip)
        return button

    def _lay_out(self) -> None:
        """One line under the requests: the figures, then the buttons."""
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for value in self.figures.values():
            layout.addWidget(value)
        layout.addWidget(self.note, 1)
        for button in (self.refresh_button, self.export_button, self.resend_button):
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)

    # ---- the list shown ------------------------------------------------------------------

    def set_flow(self, flow: ListSend | None) -> None:
        """The profile changed: nothing of the last one's report stays."""
        self.tasks.cancel(REPORT_KEY, owner=self)
        self.asking.cancel()
        self.flow, self.report, self._resend = flow, None, None
        self.hide()

    def _shown_batch(self) -> int | None:
        run = self.flow.run if self.flow is not None else None
        return run.batch.id if run is not None else None

    def refresh(self) -> None:
        """Make the report of the list shown again (a report under way is replaced)."""
        flow = self.flow
        run = flow.run if flow is not None else None
        if flow is None or run is None:
            self.hide()
            return
        previous = self.report if self.report and self.report.batch.id == run.batch.id else None
        if previous is None:
            self._show(None)
        self.show()
        self.note.setText(ASKING)
        set_role(self.note, "hint")
        self.tasks.run(
            self._refresh(SendReports(flow.sending), run.batch.id, previous),
            key=REPORT_KEY,
            owner=self,
            context="the batch's report",
        )

    async def _refresh(
        self, reports: SendReports, batch_id: int, previous: SendReport | None
    ) -> None:
        try:
            report = await reports.refresh(batch_id, previous)
        except (GatewayError, StoreError) as exc:
            if alive(self):
                self.note.setText(f"The report could not be made: {_said(exc)}")
                set_role(self.note, "error")
            return
        if alive(self) and self._shown_batch() == batch_id:
            self._show(report)

    def _show(self, report: SendReport | None) -> None:
        self.report = report
        totals = report.totals if report is not None else Totals({})
        for key, word, fates, tip in FIGURES[: len(LABELLED)]:
            value, count = self.figures[key], sum(totals[f] for f in fates)
            value.setText(f"{count:,} {word}" if report is not None else f"… {word}")
            set_role(value, COLOURS[key] if count else "")
            value.setToolTip(figure_tip(totals, fates, tip))
        self._sending_changed(self.batch_sender.busy)
        if report is None:
            return
        self.batch_sender.results.show_report(report)
        self.note.setText(rest_line(report))
        set_role(self.note, "warning" if report.problems else "hint")
        about = "\n".join((_note(report), totals_line(totals), *report.problems))
        self.note.setToolTip(tooltip(about))
        self.refresh_button.setToolTip(tooltip(f"{REFRESH_TIP}\n{about}"))

    def _sending_changed(self, sending: bool) -> None:
        report = self.report
        failed = report.totals.failed if report is not None else 0
        self.resend_button.setEnabled(bool(failed) and not sending)
        self.export_button.setEnabled(report is not None)
        if sending and report is not None and report.batch.id != self._shown_batch():
            self.report = None  # a new list: its report follows once it is sent
            self.hide()

    def _tick(self) -> None:
        """Made again while it shows and some message awaits a final status."""
        report = self.report
        if report is None or not self.isVisible() or self.batch_sender.busy:
            return
        if report.totals[Fate.AWAITING] and not self.tasks.running(REPORT_KEY, owner=self):
            self.refresh()

    # ---- resend to the failed ------------------------------------------------------------

    def resend(self) -> None:
        """Weigh a new list of exactly the failed, and ask before it goes."""
        flow, report = self.flow, self.report
        if flow is None or report is None or self.batch_sender.busy or self.asking.asking:
            return
        self.asking.ask(flow, self._weighed(flow, report))

    async def _weighed(self, flow: ListSend, report: SendReport) -> PreparedSend:
        resend = await prepare_resend(flow, report)
        self._resend = resend
        return resend.prepared

    def _confirmed(self, flow: ListSend, prepared: PreparedSend) -> None:
        """The operator said yes: recorded (the original's failed requests retired) and sent
        by the tab's sender, as the list shown from now on."""
        resend = self._resend
        if flow is not self.flow or resend is None or resend.prepared is not prepared:
            return
        self.batch_sender.start(
            flow, prepared, lanes=self.lanes(), record=lambda: record_resend(flow, resend)
        )

    # ---- export --------------------------------------------------------------------------

    def export(self) -> None:
        report, flow = self.report, self.flow
        if report is None or flow is None:
            return
        name = dated_csv(f"batch-{report.batch.id}-report")
        path = csv_to_save(self, "Export the batch's report", name)
        if path is not None:
            self.save(path)

    def save(self, path: Path) -> None:
        """Write the report shown to `path` (off the GUI thread)."""
        report, flow = self.report, self.flow
        if report is not None and flow is not None:
            self.tasks.run(
                self._save(SendReports(flow.sending), report, path),
                key=EXPORT_KEY,
                owner=self,
                context="exporting the batch's report",
            )

    async def _save(self, reports: SendReports, report: SendReport, path: Path) -> None:
        try:
            count = await reports.export(report, path)
        except OSError as exc:
            if alive(self):
                self.asking.failed.emit(f"{path.name} cannot be written: {exc.strerror or exc}.")
            return
        if alive(self):
            self.asking.said.emit(f"Report saved: {count:,} recipients in {path.name}.", "ok")


def _said(exc: Exception) -> str:
    return exc.message if isinstance(exc, GatewayError) else str(exc)


def _note(report: SendReport) -> str:
    """Which batch (`gwdesk report BATCH`), and as of when."""
    asked = report.asked_at
    when = f"statuses as of {asked.astimezone():%H:%M:%S}" if asked else "no status asked yet"
    return f"Batch {report.batch.id}: {when}."
