"""The REST commands of `gwdesk`: send, status, logs, balance.

Each `register_*` adds one subcommand and its handler; `COMMANDS` lists them for
`gwdesk.cli`. Results print as short lines for people, or as one JSON object with
`--json` (message fields keep the gateway's own names).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from gwdesk.cli import (
    EXIT_AMBIGUOUS,
    EXIT_AUTH,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PARTIAL,
    Output,
    Registrar,
    SubParsers,
    UsageError,
)
from gwdesk.domain.models import LogRecord, Message
from gwdesk.domain.numbers import RecipientCheck, Rejected
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import AmbiguousSendError, AuthenticationError
from gwdesk.gateway.outbox_records import gateway_key
from gwdesk.gateway.outbox_sender import OutboxSender
from gwdesk.gateway.sending import ChunkResult, Outgoing, SendOutcome
from gwdesk.gateway.service import GatewayService
from gwdesk.importing.decoding import ImportFailed
from gwdesk.importing.recipients import RecipientList, check_entries, check_table, load_table
from gwdesk.importing.table import ALL_COLUMNS, DELIMITER_NAMES, Table
from gwdesk.paths import AppPaths
from gwdesk.store.database import StoreError, slug
from gwdesk.store.outbox import OutboxStore

MAX_SHOWN: Final = 20


def _sub(
    sub: SubParsers, name: str, common: argparse.ArgumentParser, help: str
) -> argparse.ArgumentParser:
    return sub.add_parser(name, parents=[common], help=help, description=help)


def _when(text: str) -> datetime:
    """An ISO 8601 time; one without an offset is this machine's local time."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time such as 2025-01-31T09:30:00+11:00: {text!r}"
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone()


def _page(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a page number counts from 1, not {text!r}")
    return int(text)


def _message_json(message: Message) -> dict[str, Any]:
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


# ---- the outbox every send goes through --------------------------------------------------------


def open_outbox(profile: Profile) -> OutboxStore:
    """The outbox of a profile's store, shared with the console (an inline gateway has
    one store of its own, "command line"; batches name their gateway, so one recorded
    for another gateway is never resumed against this one)."""
    path = AppPaths.default().profile_db(slug(profile.name))
    try:
        return OutboxStore(path)
    except (StoreError, OSError, sqlite3.Error) as exc:
        raise UsageError(
            f"The outbox at {path} cannot be opened ({exc}); gwdesk sends nothing without it."
        ) from None


@contextlib.contextmanager
def outbox_sender(service: GatewayService) -> Iterator[OutboxSender]:
    outbox = open_outbox(service.profile)
    try:
        yield OutboxSender(service, outbox, gateway_key(service.profile))
    finally:
        outbox.close()


# ---- send -------------------------------------------------------------------------------------


def pick_column(table: Table, wanted: str) -> int:
    """`--column`: a column by its 1-based number or its header (case does not matter)."""
    text = wanted.strip()
    width = max(1, table.width)
    if text.isdigit():
        column = int(text) - 1
        if not 0 <= column < width:
            raise UsageError(f"--column {text[:12]}: the file's columns are 1 to {width}.")
        return column
    titles = table.titles()
    folded = [title.casefold() for title in titles]
    if text and text.casefold() in folded:
        return folded.index(text.casefold())
    named = ", ".join(repr(t[:40]) for t in titles[:MAX_SHOWN] if t) or "none (no header row)"
    raise UsageError(f"--column {text[:40]!r}: no column has that header; the headers: {named}.")


def read_csv(path: Path, region: str, column: str | None = None) -> tuple[Table, RecipientList]:
    """`--csv FILE` read and checked as the console's Batch import does it (one code path:
    `gwdesk.importing`): encoding, delimiter, header and number column, fast normalising,
    duplicates dropped, every unusable row kept with its reason. Blocking: a worker thread."""
    try:
        table = load_table(path, region)
        if column is not None:
            table = replace(table, column=pick_column(table, column))
        return table, check_table(table, table.column, region)
    except ImportFailed as exc:
        raise UsageError(f"Cannot read recipients from {path}: {exc.message}") from None


def csv_summary(path: Path, table: Table) -> str:
    """What was guessed about a file, so a wrong guess is seen before anything is sent."""
    delimiter = DELIMITER_NAMES.get(table.delimiter, repr(table.delimiter))
    header = "a header row" if table.has_header else "no header row"
    if table.column == ALL_COLUMNS:
        where = "every cell"
    else:
        title = table.titles()[table.column] if table.column < table.width else ""
        where = f"column {table.column + 1}" + (f" ({title[:40]!r})" if title else "")
    return (
        f"{path.name}: {table.data_rows:,} row(s), {table.encoding}, {delimiter}-separated, "
        f"{header}; recipients from {where}"
    )


def as_check(listing: RecipientList) -> RecipientCheck:
    """An import's result as a send's check: `entry` is the row (or --to) number."""
    rejected = tuple(Rejected(r.row - 1, r.text, r.reason) for r in listing.invalid)
    return RecipientCheck(listing.numbers, rejected, listing.duplicates)


async def send_recipients(args: argparse.Namespace, region: str, out: Output) -> RecipientCheck:
    """The recipients checked once, by `gwdesk.importing` (a file or the --to values)."""
    if args.csv:
        path = Path(args.csv)
        table, listing = await asyncio.to_thread(read_csv, path, region, args.column)
        out.note(csv_summary(path, table))
        where = "row "
    else:
        if args.column is not None:
            raise UsageError("--column goes with --csv.")
        entries = [(number, text) for number, text in enumerate(args.to, start=1)]
        try:
            listing = check_entries(entries, region, total=max(1, len(entries)))
        except ImportFailed as exc:
            raise UsageError(exc.message) from None
        where = "--to #"
    if listing.invalid:
        for row in listing.invalid[:MAX_SHOWN]:
            out.note(f"{where}{row.row}: {row.text[:40]!r}: {row.reason}")
        if len(listing.invalid) > MAX_SHOWN:
            out.note(f"... and {len(listing.invalid) - MAX_SHOWN:,} more unusable entries")
        if not args.skip_invalid:
            raise UsageError(
                f"{len(listing.invalid):,} recipient(s) are not usable; nothing was sent "
                "(--skip-invalid sends to the rest)."
            )
    if listing.duplicates:
        out.note(f"{listing.duplicates:,} repeated number(s) will be sent to once")
    return as_check(listing)


def chunk_json(chunk: ChunkResult) -> dict[str, Any]:
    return {
        "request": chunk.index,
        "external_system_id": chunk.external_system_id,
        "recipients": len(chunk.recipients),
        "lodged": chunk.lodged,
        "message": _message_json(chunk.message) if chunk.message else None,
        "batch_code": chunk.batch_code,
        "found": [_message_json(m) for m in chunk.found],
        "resolved_by_status": chunk.resolved,
        "attempts": chunk.attempts,
        "error": None
        if chunk.error is None
        else {"type": chunk.error.kind, "message": chunk.error.message},
    }


def chunk_line(chunk: ChunkResult) -> str:
    ref = f"ExternalSystemId {chunk.external_system_id}"
    if chunk.error is not None:
        return f"NOT LODGED: {len(chunk.recipients)} recipient(s), {ref}: {chunk.error.message}"
    if chunk.message is not None:
        m = chunk.message
        return f"lodged {m.phone_number}: MessageId {m.message_id}, status {m.status}, {ref}"
    if chunk.batch_code is not None:
        return f"lodged {len(chunk.recipients)} recipients as batch {chunk.batch_code}, {ref}"
    return (
        f"lodged {len(chunk.recipients)} recipient(s) (confirmed by status: "
        f"{len(chunk.found)} message(s) so far), {ref}"
    )


def report_send(outcome: SendOutcome, out: Output, *, batch: int | None = None) -> int:
    lodged = outcome.lodged_recipients
    failed = sum(len(c.recipients) for c in outcome.failed)
    data = {
        "ok": outcome.ok,
        "outbox_batch": batch,
        "lodged": lodged,
        "failed": failed,
        "duplicates": outcome.duplicates,
        "rejected": [
            {"entry": r.index + 1, "text": r.text, "reason": r.reason} for r in outcome.rejected
        ],
        "requests": [chunk_json(c) for c in outcome.chunks],
    }
    lines = [chunk_line(c) for c in outcome.chunks]
    if len(outcome.chunks) > 1 or failed:
        lines.append(
            f"{lodged} recipient(s) lodged, {failed} not, in {len(outcome.chunks)} request(s)"
        )
    out.result(data, lines)
    if outcome.ok:
        return EXIT_OK
    errors = [chunk.error for chunk in outcome.failed if chunk.error is not None]
    for chunk, error in zip(outcome.failed, errors, strict=True):
        out.note(f"request {chunk.index} failed: {error.message}")
    if batch is not None:
        out.note(
            f"outbox batch {batch} keeps what was not lodged: gwdesk outbox resume settles "
            "and sends it"
        )
    if any(isinstance(e, AmbiguousSendError) for e in errors):
        return EXIT_AMBIGUOUS
    if lodged:
        return EXIT_PARTIAL
    if all(isinstance(e, AuthenticationError) for e in errors):
        return EXIT_AUTH
    return EXIT_FAILED


async def cmd_send(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    if bool(args.reply_type) != bool(args.reply_path):
        raise UsageError("--reply-type and --reply-path go together.")
    checked = await send_recipients(args, service.profile.region, out)
    if not checked.numbers:
        raise UsageError("There is no usable recipient; nothing was sent.")
    outgoing = Outgoing(
        text=args.message,
        recipients=checked.numbers,
        source=args.source,
        send_at=args.send_at,
        reply_type=args.reply_type.upper() if args.reply_type else None,
        reply_path=args.reply_path,
        external_id=args.external_id,
        tags=args.tags,
    )
    with outbox_sender(service) as sender:
        # Checked once, above: the send does not check the numbers again.
        outcome, batch = await sender.send(
            outgoing, skip_invalid=args.skip_invalid, checked=checked
        )
    return report_send(outcome, out, batch=batch.id)


def register_send(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = _sub(sub, "send", common, "send an SMS to one or more recipients (100 per request)")
    p.add_argument("message", metavar="MESSAGE", help="the text to send")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--to", action="append", metavar="NUMBER", help="a recipient (repeatable)")
    who.add_argument(
        "--csv",
        metavar="FILE",
        help="recipients from a CSV or text file, read as the console's Batch import reads it "
        "(encoding, delimiter, header and the phone-number column are found)",
    )
    p.add_argument(
        "--column",
        metavar="N|HEADER",
        help="with --csv: the recipients' column, by number (1 is the first) or header",
    )
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="send to the usable numbers only (without it, one unusable entry stops the send)",
    )
    p.add_argument("--from", dest="source", metavar="X", help="sender number or name")
    p.add_argument(
        "--send-at", type=_when, metavar="ISO", help="schedule (local time without offset)"
    )
    p.add_argument(
        "--reply-type", metavar="T", help="EMAIL, WWW, HTTP, HTTPGET, HTTPPOST, TCP/IP, HEADER"
    )
    p.add_argument("--reply-path", metavar="P", help="where replies go (or the sender with HEADER)")
    p.add_argument("--external-id", metavar="ID", help="your reference (default: generated)")
    p.add_argument("--tags", metavar="T", help="comma-separated tags")
    p.set_defaults(handler=cmd_send)


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
    out.result({"ok": True, "messages": [_message_json(m) for m in messages]}, lines)
    return EXIT_OK


def register_status(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = _sub(sub, "status", common, "status of a message, a batch or an ExternalSystemId")
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
    p = _sub(sub, "logs", common, "list sent messages (one filter at most; none is page 1)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--page", type=_page, metavar="N", help="1,000 records a page, newest first")
    which.add_argument(
        "--since", type=_when, metavar="ISO", help="lodged at or after, oldest first"
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
    p = _sub(sub, "balance", common, "the account's balance or message credits, and their source")
    p.set_defaults(handler=cmd_balance)


COMMANDS: Final[Sequence[Registrar]] = (
    register_send,
    register_status,
    register_logs,
    register_balance,
)
