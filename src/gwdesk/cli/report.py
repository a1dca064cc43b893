"""`gwdesk report BATCH`: what became of each recipient of a send, and resend to the failed.

    gwdesk report BATCH [--json] [--csv FILE]
    gwdesk report BATCH --resend-failed [--yes] [--force] [--parallel N]

BATCH is the outbox's batch number, as `gwdesk outbox --all` lists it (and the Batch
tab's report names it). The report reads the outbox and asks the gateway the status
of each lodged request's messages by its ExternalSystemId (`gwdesk.app.send_report`):
the totals (delivered, failed when sent or on delivery, awaiting a status, unknown,
not sent yet, cancelled, opted out), then the failed and unknown recipients (the
first 20; `--json` and `--csv FILE` hold every recipient, the CSV safe to open in a
spreadsheet).

`--resend-failed` sends the same message again to exactly the recipients that
failed (`gwdesk.app.resend`): as a new list, asked about as every list send is
(`--yes` answers it, `--force` credits that do not cover it; at a terminal it asks
y/N, elsewhere it refuses with exit 2 and sends nothing), its outcome printed as
`gwdesk send` prints one. Nobody delivered, awaiting a status or unknown is texted.
Exit status: 0 done; 1 a status could not be asked (the report says which); 2 no
such batch, or a question not answered yes; a resend's as for `gwdesk send`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from gwdesk.app.list_send import ListSend, ValidationError
from gwdesk.app.resend import prepare_resend, record_resend
from gwdesk.app.send_report import (
    Fate,
    RecipientRow,
    ReportError,
    SendReport,
    SendReports,
    totals_line,
)
from gwdesk.cli import (
    EXIT_FAILED,
    EXIT_OK,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    profile_store_sending,
    store_id,
)
from gwdesk.cli.send import answer, outcome_json, outcome_lines, outcome_status
from gwdesk.gateway.service import GatewayService
from gwdesk.store.database import StoreError

MAX_SHOWN: Final = 20
#: The recipients listed by name under the totals: those that need a look.
LISTED: Final = (Fate.REFUSED, Fate.DELIVERY_FAILED, Fate.UNKNOWN)


def row_json(row: RecipientRow) -> dict[str, Any]:
    return {
        "number": f"+{row.number}",
        "outcome": row.fate.value,
        "status": row.status or None,
        "message_id": row.message_id or None,
        "request": row.request or None,
        "external_system_id": row.external_system_id or None,
        "reason": row.why or None,
    }


def report_json(report: SendReport) -> dict[str, Any]:
    batch = report.batch
    asked = report.asked_at
    return {
        "ok": not report.problems,
        "batch": batch.id,
        "message": batch.label,
        "asked_at": asked.astimezone().isoformat(timespec="seconds") if asked else None,
        "totals": report.totals.as_json(),
        "problems": list(report.problems),
        "recipients": [row_json(row) for row in report.rows],
    }


def row_line(row: RecipientRow) -> str:
    detail = ", ".join(
        part
        for part in (
            f"request {row.request}" if row.request else "",
            row.status,
            f"MessageId {row.message_id}" if row.message_id else "",
            row.why,
        )
        if part
    )
    return f"  {row.fate.words}: {row.shown_number} ({detail})"


def report_lines(report: SendReport) -> list[str]:
    batch = report.batch
    asked = report.asked_at
    when = f", statuses as of {asked.astimezone():%Y-%m-%d %H:%M:%S}" if asked else ""
    lines = [f"batch {batch.id}: {batch.label[:60]!r}{when}", totals_line(report.totals)]
    listed = [row for row in report.rows if row.fate in LISTED]
    lines.extend(row_line(row) for row in listed[:MAX_SHOWN])
    if len(listed) > MAX_SHOWN:
        lines.append(f"  ... and {len(listed) - MAX_SHOWN:,} more (--json or --csv FILE lists all)")
    lines.extend(f"status not asked: {problem}" for problem in report.problems)
    return lines


async def cmd_report(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    async with profile_store_sending(service) as (store, sending):
        reports = SendReports(sending)
        try:
            report = await reports.refresh(args.batch)
        except ReportError as exc:
            raise UsageError(exc.message) from None
        if args.csv:
            path = Path(args.csv)
            try:
                count = await reports.export(report, path)
            except OSError as exc:
                raise UsageError(f"Cannot write {path}: {exc.strerror or exc}") from None
            out.note(f"{count:,} recipient(s) written to {path}")
        if args.resend_failed:
            return await resend_failed(args, ListSend.of(sending, store), report, out)
    out.result(report_json(report), report_lines(report))
    return EXIT_FAILED if report.problems else EXIT_OK


async def resend_failed(
    args: argparse.Namespace, flow: ListSend, report: SendReport, out: Output
) -> int:
    """The failed recipients sent the message again, once the list's question is answered."""
    if not report.failed():
        out.result(
            {"ok": True, "report": report_json(report), "resent": None},
            [*report_lines(report), "Nobody failed: nothing was sent again."],
        )
        return EXIT_OK
    try:
        resend = await prepare_resend(flow, report)
    except ValidationError as exc:
        raise UsageError(exc.message) from None
    for line in report_lines(report)[:2]:
        out.note(line)
    out.note(resend.question_note)
    await answer(resend.prepared, args, out)
    try:
        run = await record_resend(flow, resend)
    except StoreError as exc:
        out.failure("store", f"Nothing was sent again: {exc}")
        return EXIT_FAILED
    lanes = max(1, min(args.parallel, 16))
    outcome = await flow.sending.run_list(run.batch, run.entries, resend.message, lanes=lanes)
    out.result(
        {"resent_from": report.batch.id, "report": report_json(report), **outcome_json(outcome)},
        [f"batch {run.batch.id}: sent again to the failed of batch {report.batch.id}",
         *outcome_lines(outcome)],
    )  # fmt: skip
    return outcome_status(outcome, out)


def register_report(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    help = "what became of each recipient of a send (delivered, failed, ...); resend to the failed"
    p = sub.add_parser("report", parents=[common], help=help, description=__doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument(
        "batch",
        type=store_id("a batch number as `gwdesk outbox` lists it"),
        metavar="BATCH",
        help="the outbox's batch number",
    )
    p.add_argument("--csv", metavar="FILE", help="write every recipient's outcome to FILE")
    again = p.add_argument_group("resend to the failed (asked as every list send is)")
    again.add_argument(
        "--resend-failed",
        action="store_true",
        help="send the message again to the recipients that failed (when sent or on delivery)",
    )
    again.add_argument("--yes", action="store_true", help="answer the list's question yes")
    again.add_argument(
        "--force", action="store_true", help="send even when the credits do not cover it"
    )
    again.add_argument(
        "--parallel", type=int, default=4, metavar="N", help="requests at once (1-16)"
    )
    p.set_defaults(handler=cmd_report, skip_invalid=False)


COMMANDS: Final[Sequence[Registrar]] = (register_report,)
