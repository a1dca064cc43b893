"""The look-up commands of `gwdesk`: status, logs and balance.

Each `register_*` adds one subcommand and its handler; `COMMANDS` lists them for
`gwdesk.cli`. Results print as short lines for people, or as one JSON object with
`--json` (message fields keep the gateway's own names).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, Final

from gwdesk.cli import (
    EXIT_OK,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    message_json,
    moment,
    subcommand,
)
from gwdesk.domain.models import LogRecord
from gwdesk.gateway.service import GatewayService


def _page(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a page number counts from 1, not {text!r}")
    return int(text)


# ---- status -----------------------------------------------------------------------------------


async def cmd_status(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    messages = await service.status(
        message_id=args.message_id, batch_code=args.batch_code, external_system_id=args.external_id
    )
    lines = [
        f"{m.message_id}  {m.phone_number}  {m.status}"
        + (f"  {m.external_system_id}" if m.external_system_id else "")
        for m in messages
    ] or ["no messages (yet)"]
    out.result({"ok": True, "messages": [message_json(m) for m in messages]}, lines)
    return EXIT_OK


def register_status(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = subcommand(sub, "status", common, "status of a message, a batch or an ExternalSystemId")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--message-id", metavar="ID")
    which.add_argument("--batch-code", metavar="CODE")
    which.add_argument("--external-id", metavar="ID")
    p.set_defaults(handler=cmd_status)


# ---- logs -------------------------------------------------------------------------------------


def _record_json(record: LogRecord) -> dict[str, Any]:
    return record.model_dump(mode="json", by_alias=True)


def _record_line(record: LogRecord) -> str:
    text = record.message or ""
    text = text if len(text) <= 40 else text[:39] + "…"
    return (
        f"{record.date_lodged.isoformat(timespec='seconds')}  {record.message_id}  "
        f"{record.to or '-'}  {record.status}  {record.parts or '-'}p  {text}"
    )


async def cmd_logs(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    if args.all:
        if args.since is None and any(
            v is not None for v in (args.page, args.recipient, args.message_id, args.batch_code)
        ):
            raise UsageError("--all goes with --since (or alone, for the whole account).")
        sync = service.sync_logs(args.since)
        records = [record async for record in sync]
        total = len(records)
        extra: dict[str, Any] = {"cursor": sync.cursor.isoformat(), "stalled": sync.stalled}
    else:
        listing = await service.logs(
            page=args.page,
            since=args.since,
            message_id=args.message_id,
            batch_code=args.batch_code,
            recipient=args.recipient,
        )
        records, total, extra = listing.messages, listing.total_records, {}
    lines = [_record_line(r) for r in records]
    lines.append(f"{len(records)} shown of {total}")
    out.result(
        {
            "ok": True,
            "totalRecords": total,
            "messages": [_record_json(r) for r in records],
            **extra,
        },
        lines,
    )
    return EXIT_OK


def register_logs(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = subcommand(sub, "logs", common, "list sent messages (one filter at most; none is page 1)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--page", type=_page, metavar="N", help="1,000 records a page, newest first")
    which.add_argument(
        "--since", type=moment, metavar="ISO", help="lodged at or after, oldest first"
    )
    which.add_argument("--recipient", metavar="NUMBER")
    which.add_argument("--message-id", metavar="ID")
    which.add_argument("--batch-code", metavar="CODE")
    p.add_argument("--all", action="store_true", help="with --since: every page up to now")
    p.set_defaults(handler=cmd_logs)


# ---- balance ----------------------------------------------------------------------------------


async def cmd_balance(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    """The balance or credits, from whichever account resource the gateway answers,
    saying which (`source` in JSON)."""
    funds = await service.funds()
    if funds.note:
        out.note(funds.note)
    out.result({"ok": True, **funds.to_json()}, [funds.summary()])
    return EXIT_OK


def register_balance(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = subcommand(
        sub, "balance", common, "the account's balance or message credits, and their source"
    )
    p.set_defaults(handler=cmd_balance)


COMMANDS: Final[Sequence[Registrar]] = (
    register_status,
    register_logs,
    register_balance,
)
