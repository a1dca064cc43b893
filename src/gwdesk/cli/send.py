"""`gwdesk send`: an SMS to one recipient or a list, through the application core.

The recipients are checked once, by `gwdesk.importing` (a file as the console's Batch
import reads it, or the `--to` values), with the members of `--group`s added; the
message and its options by the Send tab's checks. One `--to` is a single message.
Anything more is a list, and goes through the list flow the Batch tab uses
(`gwdesk.app.list_send`): it is weighed (opt-outs, cost against the credits, a send
of the same text to most of the list within the profile's repeat window, 24 hours
unless changed) and asked about, as every list send is: the question is answered by
flags (`--yes` for the send itself and the same text again, `--skip-invalid` for
rows that cannot be sent to, `--force` for credits that do not cover it); at a
terminal gwdesk asks y/N instead, elsewhere it refuses (exit 2, naming the flag) and
sends nothing. Then the
send is recorded in the profile's outbox, sent in requests of 100 and written to
the history. Results print as short lines for people, or as one JSON object with
`--json` (message fields keep the gateway's own names). The account's opt-out list
is honoured there: a single opted-out recipient is refused (exit 1, the reason on
stderr), a list leaves such numbers out and says how many (`--json`: which).
`--marketing` appends the profile's opt-out instruction; `--factual` marks a message
purely factual (it may reach opted-out numbers, and the mark is recorded).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final

from gwdesk.app.list_send import (
    ListSend,
    PreparedSend,
    StoreAwayError,
    StoreError,
)
from gwdesk.app.merge import with_group_numbers
from gwdesk.app.pacing import PACE_LEAD
from gwdesk.app.questions import Ask, Concern, credits_line, plural
from gwdesk.app.send_values import RequestOutcome
from gwdesk.app.sender_rules import sender_notes
from gwdesk.app.sending import Outcome
from gwdesk.app.sms import Channel, SmsForm
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
    message_json,
    moment,
    profile_store_sending,
    subcommand,
)
from gwdesk.cli.asking import settle
from gwdesk.domain.numbers import RecipientCheck, Rejected
from gwdesk.domain.recurrence import RecurrenceKind
from gwdesk.gateway.errors import AmbiguousSendError, AuthenticationError
from gwdesk.gateway.service import GatewayService
from gwdesk.importing.decoding import ImportFailed
from gwdesk.importing.recipients import RecipientList, check_entries, check_table, load_table
from gwdesk.importing.table import ALL_COLUMNS, DELIMITER_NAMES, Table

MAX_SHOWN: Final = 20


# ---- recipients ---------------------------------------------------------------------------


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


def read_to(values: Sequence[str], region: str) -> RecipientList:
    """The `--to` values checked as an import's rows (`row` is the value's position).
    Blocking (a long list takes a while): a worker thread."""
    entries = list(enumerate(values, start=1))
    try:
        return check_entries(entries, region, total=max(1, len(entries)))
    except ImportFailed as exc:
        raise UsageError(exc.message) from None


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


async def list_recipients(
    args: argparse.Namespace, region: str, out: Output
) -> RecipientList | None:
    """The `--csv` or `--to` recipients checked once, by `gwdesk.importing`, on a worker
    thread so the event loop keeps turning; each unusable entry is noted (whether the
    send goes without them is the list's question, `--skip-invalid`'s to answer).
    None when neither is given (the recipients are contact groups)."""
    if args.csv:
        path = Path(args.csv)
        table, listing = await asyncio.to_thread(read_csv, path, region, args.column)
        out.note(csv_summary(path, table))
        where = "row "
    elif args.to:
        if args.column is not None:
            raise UsageError("--column goes with --csv.")
        listing = await asyncio.to_thread(read_to, args.to, region)
        where = "--to #"
    else:
        return None
    note_unusable(listing, where, out)
    return listing


def note_unusable(listing: RecipientList, where: str, out: Output) -> None:
    """Each unusable entry of a checked list (the first `MAX_SHOWN`), and the repeats
    dropped; `where` names an entry's place ("row ", "--to #")."""
    for row in listing.invalid[:MAX_SHOWN]:
        out.note(f"{where}{row.row}: {row.text[:40]!r}: {row.reason}")
    if len(listing.invalid) > MAX_SHOWN:
        out.note(f"... and {len(listing.invalid) - MAX_SHOWN:,} more unusable entries")
    if listing.duplicates:
        out.note(f"{listing.duplicates:,} repeated number(s) will be sent to once")


async def send_recipients(args: argparse.Namespace, region: str, out: Output) -> RecipientCheck:
    """`list_recipients` as a send's check (`--to` and `--csv` only)."""
    listing = await list_recipients(args, region, out)
    return as_check(listing) if listing is not None else RecipientCheck((), (), 0)


async def with_groups(
    flow: ListSend, names: Sequence[str], listing: RecipientList | None
) -> RecipientList:
    """The list with the members of `--group`s added (each at its first number, each
    number once)."""
    if not names:
        return listing or RecipientList((), (), 0, 0)
    try:
        members = await flow.members(names)
    except StoreError as exc:
        raise StoreAwayError("The contact groups cannot be read", exc) from exc
    empty = [name for name in names if not members.get(name)]
    if empty:
        raise UsageError(f"The group {empty[0]!r} has no contacts (gwdesk contacts shows them).")
    found = with_group_numbers(listing, members.values())
    assert found is not None
    return found


# ---- the question a list send asks, answered by flags ---------------------------------------

#: The flag that answers each concern when gwdesk cannot ask (not at a terminal).
FLAGS: Final = {
    Concern.CREDITS_SHORT: "--force",
    Concern.INVALID_ROWS: "--skip-invalid",
    Concern.LIST: "--yes",
    Concern.DUPLICATE: "--yes",
    Concern.ALREADY_LODGED: "--yes",
    Concern.OUTSIDE_HOURS: "--yes",
    Concern.SCHEDULED: "--yes",
}


def answered_by(args: argparse.Namespace) -> frozenset[Concern]:
    given = {"--force": args.force, "--skip-invalid": args.skip_invalid, "--yes": args.yes}
    return frozenset(concern for concern, flag in FLAGS.items() if given[flag])


def refusal(ask: Ask, prepared: PreparedSend) -> str:
    """Why the send was refused, and the flag that sends it anyway."""
    if ask.concern is Concern.INVALID_ROWS:
        if prepared.plan is not None:
            return (
                f"{prepared.invalid:,} recipient(s) cannot be sent to; nothing was sent "
                "(--skip-invalid sends to the rest, --dry-run shows every message)."
            )
        return (
            f"{prepared.invalid:,} recipient(s) are not usable; nothing was sent "
            "(--skip-invalid sends to the rest)."
        )
    cost = prepared.cost
    if ask.concern is Concern.CREDITS_SHORT and cost is not None:
        return (
            f"The send needs {cost.credits or 0:,} credits and the account has "
            f"{cost.balance or 0:,}; nothing was sent (--force sends it anyway)."
        )
    if ask.concern is Concern.LIST:
        parts = prepared.totals.parts or 0
        return (
            f"A list of {plural(prepared.recipients, 'recipient')} is asked about first "
            f"({plural(parts, 'SMS part')}; {credits_line(cost).lower()}); "
            "nothing was sent (--yes sends it)."
        )
    return f"{ask.text} Nothing was sent ({FLAGS[ask.concern]} sends it again)."


async def answer(prepared: PreparedSend, args: argparse.Namespace, out: Output) -> None:
    """Answer the list's question: each concern by its flag, the rest asked y/N at a
    terminal; elsewhere a concern no flag answers refuses the send (`UsageError`, exit 2,
    naming the flag: nothing was sent)."""
    await settle(
        prepared.question,
        out,
        flags=FLAGS,
        given=answered_by(args),
        refusal=lambda ask: refusal(ask, prepared),
    )


# ---- what each request came to -----------------------------------------------------------


def sent_json(sent: RequestOutcome) -> dict[str, Any]:
    """One request as `--json` shows it: the answer's message, or those a status query
    found when the answer was lost."""
    entry, error = sent.entry, sent.error
    answered = None if sent.resolved else sent.message
    return {
        "request": entry.seq,
        "external_system_id": entry.external_system_id,
        "recipients": entry.recipient_count,
        "lodged": sent.lodged,
        "message": message_json(answered) if answered else None,
        "batch_code": entry.batch_code,
        "found": [message_json(m) for m in sent.messages] if sent.resolved else [],
        "resolved_by_status": sent.resolved,
        "attempts": sent.attempts,
        "error": None if error is None else {"type": error.kind, "message": error.message},
    }


def sent_line(sent: RequestOutcome) -> str:
    entry = sent.entry
    count = entry.recipient_count
    ref = f"ExternalSystemId {entry.external_system_id}"
    if not sent.lodged:
        why = sent.error.message if sent.error is not None else entry.reason or entry.state.value
        return f"NOT LODGED: {count} recipient(s), {ref}: {why}"
    if sent.message is not None and not sent.resolved:
        m = sent.message
        return f"lodged {m.phone_number}: MessageId {m.message_id}, status {m.status}, {ref}"
    if entry.batch_code is not None:
        return f"lodged {count} recipients as batch {entry.batch_code}, {ref}"
    found = len(sent.messages) or entry.found
    return f"lodged {count} recipient(s) (confirmed by status: {found} message(s) so far), {ref}"


def report_send(outcome: Outcome, out: Output) -> int:
    out.result(outcome_json(outcome), outcome_lines(outcome))
    return outcome_status(outcome, out)


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """A send's outcome as `--json` shows it."""
    return {
        "ok": outcome.ok,
        "outbox_batch": outcome.batch.id,
        "lodged": outcome.lodged_recipients,
        "failed": outcome.failed_recipients,
        "duplicates": outcome.duplicates,
        "excluded": len(outcome.excluded),
        "excluded_numbers": list(outcome.excluded),
        "rejected": [
            {"entry": r.index + 1, "text": r.text, "reason": r.reason} for r in outcome.rejected
        ],
        "requests": [sent_json(s) for s in outcome.sent],
    }


def outcome_lines(outcome: Outcome) -> list[str]:
    """A send's outcome in lines for people: each request, then the totals."""
    lodged = outcome.lodged_recipients
    failed = outcome.failed_recipients
    lines = [sent_line(s) for s in outcome.sent]
    if len(outcome.sent) > 1 or failed:
        lines.append(
            f"{lodged} recipient(s) lodged, {failed} not, in {len(outcome.sent)} request(s)"
        )
    if outcome.excluded:
        lines.append(
            f"{len(outcome.excluded)} opted-out recipient(s) excluded (not texted): "
            "gwdesk optouts list shows why"
        )
    return lines


def outcome_status(outcome: Outcome, out: Output) -> int:
    """A send's exit status; what failed, and where it is kept, noted on stderr."""
    if outcome.ok:
        return EXIT_OK
    batch = outcome.batch.id
    errors = []
    for sent in outcome.failed:
        if sent.error is not None:
            errors.append(sent.error)
            out.note(f"request {sent.entry.seq} failed: {sent.error.message}")
    out.note(
        f"outbox batch {batch} keeps what was not lodged: gwdesk outbox resume settles and sends it"
    )
    if any(isinstance(e, AmbiguousSendError) for e in errors):
        return EXIT_AMBIGUOUS
    if outcome.lodged_recipients:
        return EXIT_PARTIAL
    if errors and all(isinstance(e, AuthenticationError) for e in errors):
        return EXIT_AUTH
    return EXIT_FAILED


# ---- send ---------------------------------------------------------------------------------


def composed(args: argparse.Namespace, marketing_default: bool = False) -> SmsForm:
    """The message and its options as given, for `check_message` (as a form holds them);
    without --marketing or --no-marketing the profile's default, unless --factual."""
    reply = (args.reply_type, args.reply_path) if args.reply_type else None
    marketing = args.marketing
    if marketing is None:
        marketing = marketing_default and not args.factual
    return SmsForm(
        Channel.REST_SMS,
        text=args.message,
        sender=args.source or "",
        send_at=args.send_at,
        reply=reply,
        external_id=args.external_id or "",
        tags=args.tags or "",
        marketing=marketing,
        factual=args.factual,
    )


def warn_of_sender(args: argparse.Namespace, form: SmsForm, region: str, out: Output) -> None:
    """What may show differently of the sender (`--from`, or a HEADER's `--reply-path`)."""
    header = (args.reply_type or "").upper() == "HEADER"
    shown = (args.reply_path or "") if header else form.sender
    two_way = bool(args.reply_type) and not header
    notes = sender_notes(shown, region, marketing=form.marketing, two_way=two_way)
    for warning in notes.warnings:
        out.note(f"{'--reply-path' if header else '--from'}: {warning}")


async def cmd_send(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    if bool(args.reply_type) != bool(args.reply_path):
        raise UsageError("--reply-type and --reply-path go together.")
    if not (args.to or args.csv or args.group):
        raise UsageError("Give the recipients: --to NUMBER, --csv FILE or --group NAME.")
    from gwdesk.cli import personal, single

    if (args.every or args.until) and args.at is None:
        raise UsageError("--every and --until go with --at (the first time it is sent).")
    if args.until and not args.every:
        raise UsageError("--until goes with --every.")
    if args.pace and args.every:
        raise UsageError("--pace spreads one list; it does not go with --every.")
    if args.pace and args.at is None:
        args.at = datetime.now(UTC) + PACE_LEAD
    if args.at is not None:  # held by gwdesk until its time
        from gwdesk.cli.send_later import schedule_send

        return await schedule_send(args, service, out)
    if personal.wanted(args):
        return await personal.send_personal(args, service, out)
    if args.message is None:
        raise UsageError("Give the MESSAGE to send, or --template NAME.")
    region = service.profile.region
    if single.wanted(args):  # one message, as the Send tab sends it
        checked = await send_recipients(args, region, out)
        if not checked.numbers:
            raise UsageError("There is no usable recipient; nothing was sent.")
        return await single.send_to_one(args, service, checked.numbers[0], out)
    listing = await list_recipients(args, region, out)
    hours = args.quiet_hours == "keep"
    async with profile_store_sending(service, sending_hours=hours) as (store, sending):
        flow = ListSend.of(sending, store)
        listing = await with_groups(flow, args.group or (), listing)
        if not listing.numbers:
            unusable = len(listing.invalid)
            raise UsageError(
                f"{unusable:,} recipient(s) are not usable; nothing was sent."
                if unusable
                else "There is no usable recipient; nothing was sent."
            )
        form = composed(args, sending.compliance.marketing_default)
        message = flow.check_message(form)
        warn_of_sender(args, form, region, out)
        prepared = await flow.prepare_list(message, listing)
        await answer(prepared, args, out)
        outcome = await flow.send(prepared)
    return report_send(outcome, out)


def register_send(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = subcommand(
        sub,
        "send",
        common,
        "send an SMS to one or more recipients (100 per request); a list asks first when "
        "it must (--yes, --skip-invalid, --force answer it)",
    )
    p.add_argument(
        "message",
        nargs="?",
        metavar="MESSAGE",
        help="the text to send; with --csv, {column} and {column|fallback} fill it per row",
    )
    who = p.add_mutually_exclusive_group()
    who.add_argument("--to", action="append", metavar="NUMBER", help="a recipient (repeatable)")
    who.add_argument(
        "--csv",
        metavar="FILE",
        help="recipients from a CSV or text file, read as the console's Batch import reads it "
        "(encoding, delimiter, header and the phone-number column are found)",
    )
    p.add_argument(
        "--group",
        action="append",
        metavar="NAME",
        help="the members of a contact group (repeatable; alone or with --to or --csv), "
        "each at its first number; with placeholders, their contact fields fill them",
    )
    p.add_argument(
        "--column",
        metavar="N|HEADER",
        help="with --csv: the recipients' column, by number (1 is the first) or header",
    )
    asked = p.add_argument_group(
        "a list send's question (asked y/N at a terminal; elsewhere refused unless answered)"
    )
    asked.add_argument(
        "--yes",
        action="store_true",
        help="send the list: every list send asks first (its recipients, parts and cost), and "
        "names the same text sent to most of them within the profile's repeat window",
    )
    asked.add_argument(
        "--skip-invalid",
        action="store_true",
        help="send to the usable recipients only (without it, one unusable entry stops the send)",
    )
    asked.add_argument(
        "--force", action="store_true", help="send even when the account's credits do not cover it"
    )
    p.add_argument("--from", dest="source", metavar="X", help="sender number or name")
    when = p.add_mutually_exclusive_group()
    when.add_argument(
        "--at",
        type=moment,
        metavar="WHEN",
        help="send later: gwdesk holds the send until WHEN (ISO 8601; without an offset, this "
        "machine's local time), and it can be changed or cancelled until then (gwdesk "
        "scheduled); the console or `gwdesk scheduled run` must be running at that time",
    )
    when.add_argument(
        "--send-at",
        type=moment,
        metavar="ISO",
        help="hand this time to the gateway now, as its own schedule (SendAt; local time without "
        "offset): gwdesk can neither change nor cancel it after that",
    )
    p.add_argument(
        "--every",
        choices=[kind.value for kind in RecurrenceKind],
        help="with --at: send again by this rule, at the same time on the profile's clock "
        "(each time a scheduled send of its own; cancelling the waiting one ends it)",
    )
    p.add_argument(
        "--until", type=date.fromisoformat, metavar="DATE", help="with --every: the last day"
    )
    p.add_argument(
        "--quiet-hours",
        choices=("keep", "ignore"),
        default="keep",
        help="keep (default): a list sent now asks when some recipients are outside the "
        "office's sending hours, and a send for later waits for them; ignore: not for this send",
    )
    p.add_argument(
        "--pace",
        metavar="RATE",
        help="spread a list: at most RATE recipients (600/h, 10/min), from --at or now; the "
        "parts wait in the outbox (gwdesk scheduled), so the pace survives a restart",
    )
    p.add_argument(
        "--reply-type", metavar="T", help="EMAIL, WWW, HTTP, HTTPGET, HTTPPOST, TCP/IP, HEADER"
    )
    p.add_argument("--reply-path", metavar="P", help="where replies go (or the sender with HEADER)")
    p.add_argument("--external-id", metavar="ID", help="your reference (default: generated)")
    p.add_argument("--tags", metavar="T", help="comma-separated tags")
    p.add_argument(
        "--marketing",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a commercial message: it ends with the profile's opt-out instruction and needs "
        "a sender that can be replied to (default: the profile's setting)",
    )
    p.add_argument(
        "--factual",
        action="store_true",
        help="purely factual, no marketing (a reminder, a delivery notice): it may go to "
        "numbers that opted out, and the mark is recorded",
    )
    personal = p.add_argument_group("personal messages (a text per recipient)")
    personal.add_argument(
        "--template", metavar="NAME", help="a saved template (gwdesk templates), filled per row"
    )
    personal.add_argument(
        "--dry-run",
        action="store_true",
        help="print every rendered message, the totals and the cost; send nothing",
    )
    p.set_defaults(handler=cmd_send)


COMMANDS: Final[Sequence[Registrar]] = (register_send,)
