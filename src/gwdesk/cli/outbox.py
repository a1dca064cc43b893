"""`gwdesk outbox`: what the durable outbox holds, and finishing what was interrupted.

    gwdesk outbox [list] [--all] [--batch ID]      batches (or one batch's requests)
    gwdesk outbox resume [--batch ID] [--parallel N]
    gwdesk outbox discard --batch ID

`list` needs no password: it only reads the profile's store. `resume` (the console's
Outbox window's `Recovery`, over the same store) first settles
every request left in flight or unknown by a status query on its ExternalSystemId
(found: lodged; surely not found: sent again), then sends what is left, and prints
what it settled. Only batches recorded for this profile's gateway are resumed.
Exit status: 0 when nothing is left, 4 when some request's outcome is still unknown,
5 when some failed (they stay listed; `discard` gives them up).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from gwdesk.app.profile_data import locate
from gwdesk.app.recovery import Reconciled, ResumeReport
from gwdesk.cli import (
    EXIT_AMBIGUOUS,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    open_store_of,
    profile_sending,
    resolve_profile,
    run_command,
    store_id,
)
from gwdesk.cli.send import sent_json, sent_line
from gwdesk.gateway.service import GatewayService
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import OPEN_STATES, EntryState, OutboxBatch, OutboxEntry

ACTIONS: Final = ("list", "resume", "discard")
SHOWN_ENTRIES: Final = 200


def age(created_us: int, now: float) -> str:
    seconds = max(0, int(now - created_us / 1_000_000))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def _when(us: int) -> str:
    return datetime.fromtimestamp(us / 1_000_000, UTC).astimezone().isoformat(timespec="seconds")


def batch_json(batch: OutboxBatch, gateway: str | None, now: float) -> dict[str, Any]:
    return {
        "batch": batch.id,
        "send_id": batch.send_id,
        "channel": batch.channel,
        "message": batch.label,
        "gateway": batch.gateway,
        "this_gateway": gateway is None or batch.gateway == gateway,
        "created": _when(batch.created_us),
        "age_seconds": max(0, int(now - batch.created_us / 1_000_000)),
        "open": not batch.closed,
        "held_until": None if batch.held_until_us is None else _when(max(batch.held_until_us, 0)),
        "being_sent": batch.owner is not None,
        "requests": batch.entries,
        "recipients": batch.recipients,
        "counts": {
            state.value: {"requests": batch.count(state), "recipients": batch.recipients_in(state)}
            for state in EntryState
        },
    }


def batch_line(batch: OutboxBatch, gateway: str | None, now: float) -> str:
    state = "open" if not batch.closed else "done"
    if batch.owner is not None:
        state = "sending?"
    elif batch.held_until_us is not None and not batch.closed:
        state = "held"  # a scheduled send: `gwdesk scheduled` shows when
    counts = ", ".join(
        f"{batch.recipients_in(s):,} {s.value.replace('_', ' ')}"
        for s in EntryState
        if batch.count(s)
    )
    where = "" if gateway is None or batch.gateway == gateway else f"  [for {batch.gateway}]"
    return (
        f"batch {batch.id:<5} {state:<8} {age(batch.created_us, now):>6} ago  "
        f"{batch.channel:<9} {batch.entries:>5} request(s), {batch.recipients:,} recipient(s): "
        f"{counts}  {batch.label[:40]!r}{where}"
    )


def entry_json(entry: OutboxEntry) -> dict[str, Any]:
    return {
        "entry": entry.id,
        "request": entry.seq,
        "external_system_id": entry.external_system_id,
        "state": entry.state.value,
        "recipients": entry.recipient_count,
        "attempts": entry.attempts,
        "message_id": entry.message_id,
        "batch_code": entry.batch_code,
        "found": entry.found,
        "reason": entry.reason,
        "damaged": entry.damaged or None,
    }


def entry_line(entry: OutboxEntry) -> str:
    ref = entry.batch_code or entry.message_id or ""
    why = f"  {entry.reason}" if entry.reason else ""
    bad = f"  DAMAGED: {entry.damaged}" if entry.damaged else ""
    return (
        f"  request {entry.seq:<5} {entry.state.value:<9} {entry.recipient_count:>3} recipient(s)"
        f"  {entry.external_system_id or '-'}  {ref}{why}{bad}"
    )


def settled_json(item: Reconciled) -> dict[str, Any]:
    entry = item.entry
    return {
        "batch": entry.batch_id,
        "request": entry.seq,
        "external_system_id": entry.external_system_id,
        "recipients": entry.recipient_count,
        "outcome": item.outcome,
        "found": item.found,
        "detail": item.detail,
    }


def settled_line(item: Reconciled) -> str:
    entry = item.entry
    return (
        f"settled batch {entry.batch_id} request {entry.seq} "
        f"({entry.external_system_id or 'no ExternalSystemId'}): {item.outcome}. {item.detail}"
    )


# ---- list ---------------------------------------------------------------------------------


def list_outbox(args: argparse.Namespace, out: Output) -> int:
    profile = resolve_profile(args)
    gateway = locate(profile).account
    try:
        store = open_store_of(profile)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    outbox = store.outbox
    now = time.time()
    try:
        if args.batch:
            data: list[dict[str, Any]] = []
            lines: list[str] = []
            for batch_id in args.batch:
                batch = outbox.batch(batch_id)
                if batch is None:
                    raise UsageError(f"There is no outbox batch {batch_id}.")
                entries = outbox.entries(batch_id)
                data.append(
                    {**batch_json(batch, gateway, now), "entries": [entry_json(e) for e in entries]}
                )
                lines.append(batch_line(batch, gateway, now))
                lines.extend(entry_line(e) for e in entries[:SHOWN_ENTRIES])
                if len(entries) > SHOWN_ENTRIES:
                    lines.append(
                        f"  ... and {len(entries) - SHOWN_ENTRIES} more (--json lists all)"
                    )
            out.result({"ok": True, "gateway": gateway, "batches": data}, lines)
            return EXIT_OK
        batches = outbox.batches(open_only=not args.all)
    finally:
        store.close()
    lines = [batch_line(b, gateway, now) for b in batches]
    if not lines:
        lines = ["the outbox holds nothing to resume" if not args.all else "the outbox is empty"]
    out.result(
        {"ok": True, "gateway": gateway, "batches": [batch_json(b, gateway, now) for b in batches]},
        lines,
    )
    return EXIT_OK


# ---- resume and discard -------------------------------------------------------------------


async def cmd_resume(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    async with profile_sending(service) as sending:
        recovery = sending.recovery
        report = await recovery.resume(
            set(args.batch) if args.batch else None,
            lanes=max(1, min(args.parallel, 16)),
            on_settled=lambda item: out.note(settled_line(item)),
        )
        left = [b for b in await recovery.open_batches() if b.id in report.batches]
    return report_resume(report, left, out)


def report_resume(report: ResumeReport, left: Sequence[OutboxBatch], out: Output) -> int:
    unknown = sum(b.count(EntryState.UNKNOWN, EntryState.IN_FLIGHT) for b in left)
    remaining = sum(b.recipients_in(*OPEN_STATES, EntryState.FAILED) for b in left)
    failed = report.failed_recipients
    data = {
        "ok": not left,
        "batches": list(report.batches),
        "busy": list(report.busy),
        "reconciled": [settled_json(s) for s in report.reconcile.settled],
        "lodged": report.lodged_recipients,
        "failed": failed,
        "given_up": report.given_up,
        "left": remaining,
        "requests": [sent_json(s) for s in report.sent],
    }
    lines = [settled_line(s) for s in report.reconcile.settled]
    lines.extend(sent_line(s) for s in report.sent if not s.lodged)
    lines.append(
        f"{report.reconcile.summary()}; {len(report.sent)} request(s) sent: "
        f"{report.lodged_recipients:,} recipient(s) lodged, {failed:,} not; "
        f"{remaining:,} left in {len(left)} open batch(es)"
    )
    for batch_id in report.busy:
        lines.append(f"batch {batch_id} is being sent by another running gwdesk: left alone")
    out.result(data, lines)
    if not report.batches and not report.busy:
        out.note("the outbox holds nothing to resume for this gateway")
    if unknown:
        return EXIT_AMBIGUOUS
    if left or report.busy:
        return EXIT_PARTIAL
    return EXIT_OK


async def cmd_discard(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    async with profile_sending(service) as sending:
        given_up = {batch_id: await sending.recovery.discard(batch_id) for batch_id in args.batch}
    out.result(
        {"ok": True, "discarded": [{"batch": b, "requests": n} for b, n in given_up.items()]},
        [f"batch {b}: {n} request(s) given up (nothing sent)" for b, n in given_up.items()],
    )
    return EXIT_OK


def run_outbox(args: argparse.Namespace) -> int:
    out = Output(args.json)
    if args.action == "list":
        try:
            return list_outbox(args, out)
        except UsageError as exc:
            out.failure("usage", str(exc))
            return EXIT_USAGE
    if args.action == "discard" and not args.batch:
        out.failure("usage", "Name the batch to discard: gwdesk outbox discard --batch ID.")
        return EXIT_USAGE
    args.handler = cmd_resume if args.action == "resume" else cmd_discard
    return run_command(args)


def register_outbox(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    help = "the durable outbox: list it, resume interrupted sends, or discard them"
    p = sub.add_parser("outbox", parents=[common], help=help, description=__doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("action", nargs="?", choices=ACTIONS, default="list")
    p.add_argument(
        "--batch",
        type=store_id("a batch number as `gwdesk outbox` lists it"),
        action="append",
        metavar="ID",
        help="only this batch (repeatable)",
    )
    p.add_argument("--all", action="store_true", help="list: finished batches too")
    p.add_argument(
        "--parallel", type=int, default=4, metavar="N", help="resume: requests at once (1-16)"
    )
    p.set_defaults(run=run_outbox)


COMMANDS: Final[Sequence[Registrar]] = (register_outbox,)
