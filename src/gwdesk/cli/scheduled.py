"""`gwdesk scheduled`: the sends gwdesk holds until their time, seen, changed, sent or cancelled.

    gwdesk scheduled [list] [--json]              soonest first
    gwdesk scheduled show ID [--json]             everything of one, every recipient
    gwdesk scheduled edit ID [--text T] [--at WHEN] [--to N1,N2 | --to-file FILE]
    gwdesk scheduled cancel ID [--yes]
    gwdesk scheduled send-now ID [--yes]
    gwdesk scheduled run [--missed]               send what is due now, once

`gwdesk send … --at WHEN` schedules a send. WHEN is an ISO 8601 time with its offset
(2026-12-01T09:00:00+11:00), or without one in this machine's zone (the operator's);
times print in the operator's zone (`--json` also in UTC). A send goes at its time only
if something is running then: an open console, or `gwdesk scheduled run` (from cron
every minute, say, on a desk where no console stays open). `run` sends every send that
is due, once, however many desks run it; a send more than two minutes late was missed
(nothing ran at its time): it is listed and left held unless `--missed` is given.

`cancel` and `send-now` ask y/N at a terminal; elsewhere they need `--yes`. Every
decision (a time passed or more than a year ahead, an empty text, a send no longer
waiting) is the core's (`gwdesk.app.scheduled`); refused, nothing is changed.
Exit status: 0 done; 1 refused (nothing changed) or a send that failed; 2 a usage
problem, or a question not answered yes; 4 and 5 as for `gwdesk send`.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from gwdesk.app.scheduled import MISSED_AFTER, ScheduledSend, ScheduledSends
from gwdesk.app.sending import Outcome
from gwdesk.cli import (
    EXIT_AMBIGUOUS,
    EXIT_AUTH,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    moment,
    profile_store_sending,
    run_command,
    store_id,
)
from gwdesk.cli.asking import confirm
from gwdesk.cli.send import note_unusable, outcome_json, outcome_lines, outcome_status, read_csv
from gwdesk.cli.send import read_to as read_numbers
from gwdesk.domain.numbers import display
from gwdesk.gateway.service import GatewayService
from gwdesk.importing.recipients import RecipientList
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import OutboxError

ACTIONS: Final = ("list", "show", "edit", "cancel", "send-now", "run")
MISSED_MINUTES: Final = int(MISSED_AFTER.total_seconds() // 60)
SHOWN_NUMBERS: Final = 3
"""Numbers a listed send names before "and N more"."""
SHOWN_TEXT: Final = 48
"""Characters of a listed send's text (`show` prints it whole)."""
#: The worst exit status of several sends wins, in this order.
SEVERITY: Final = (EXIT_AMBIGUOUS, EXIT_PARTIAL, EXIT_AUTH, EXIT_FAILED)


# ---- how a held send reads ----------------------------------------------------------------


def local_time(at: datetime) -> str:
    """A moment in the operator's zone, named: `Mon 2026-11-30 19:00 AEDT`."""
    local = at.astimezone()
    return f"{local:%a %Y-%m-%d %H:%M} {local.tzname() or local.strftime('%z')}"


def utc_time(at: datetime) -> str:
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def relative(at: datetime, now: datetime) -> str:
    """How far `at` is from `now`, in the largest whole unit: `in 59 min`, `3 h late`."""
    seconds = int((at - now).total_seconds())
    span = abs(seconds)
    if span < 60:
        return "due now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if span >= size:
            amount = f"{span // size} {unit}"
            break
    return f"in {amount}" if seconds > 0 else f"{amount} late"


def shortened(text: str, width: int = SHOWN_TEXT) -> str:
    """The start of `text` (cut before it is escaped for the terminal, so no escape is
    cut in two), with `…` when there is more."""
    return text if len(text) <= width else text[: width - 1] + "…"


def numbers_text(numbers: Sequence[str], shown: int = SHOWN_NUMBERS) -> str:
    first = ", ".join(display(n) for n in numbers[:shown])
    more = len(numbers) - shown
    return f"{first}, and {more:,} more" if more > 0 else first


def when_text(held: ScheduledSend, now: datetime) -> str:
    if held.due is None:
        return "time unreadable"
    return f"{local_time(held.due)} ({relative(held.due, now)})"


def held_line(held: ScheduledSend, now: datetime) -> str:
    """One held send on one line: when, its id, to whom, by whom, and its text."""
    count = len(held.recipients)
    who = f"{count:,} recipient{'s' if count != 1 else ''}: {numbers_text(held.recipients)}"
    by = f"  by {held.operator}" if held.operator else ""
    return f"{when_text(held, now)}  #{held.batch_id}  {who}{by}  {shortened(held.text)}"


def held_json(held: ScheduledSend, now: datetime, *, whole: bool = False) -> dict[str, Any]:
    """A held send for `--json` (`whole`: every recipient and option, as `show` gives)."""
    due = held.due
    data: dict[str, Any] = {
        "id": held.batch_id,
        "due": None if due is None else due.astimezone().isoformat(timespec="seconds"),
        "due_utc": None if due is None else due.astimezone(UTC).isoformat(timespec="seconds"),
        "in_seconds": None if due is None else int((due - now).total_seconds()),
        "recipients": len(held.recipients),
        "numbers": list(held.recipients if whole else held.recipients[:SHOWN_NUMBERS]),
        "text": held.text,
        "scheduled_by": held.operator,
        "created": held.created.astimezone().isoformat(timespec="seconds"),
        "readable": held.message is not None,
        "every": None if held.every is None else held.every.describe(),
    }
    message = held.message
    if whole and message is not None:
        data["options"] = {
            "sender": message.source,
            "reply_type": message.reply_type,
            "reply_path": message.reply_path,
            "external_id": message.external_id,
            "tags": message.tags,
            "marketing": message.marketing,
            "factual": message.factual,
        }
    return data


def held_lines(held: ScheduledSend, now: datetime) -> list[str]:
    """Everything of one held send, every recipient on a line of its own."""
    due = held.due
    lines = [
        f"scheduled send #{held.batch_id}",
        f"  when:       {when_text(held, now)}" + (f"; {utc_time(due)}" if due else ""),
        f"  text:       {held.text}",
    ]
    if held.every is not None:
        lines.append(f"  repeats:    {held.every.describe()} (cancel the waiting one to end it)")
    message = held.message
    if message is None:
        lines.append("  its record cannot be read, so it is never sent: cancel it")
    else:
        marked = "marketing" if message.marketing else "purely factual" if message.factual else ""
        reply = f"{message.reply_type} to {message.reply_path}" if message.reply_type else ""
        for name, value in (
            ("from", message.source),
            ("replies", reply),
            ("reference", message.external_id),
            ("tags", message.tags),
            ("marked", marked),
        ):
            if value:
                lines.append(f"  {name + ':':<11} {value}")
    by = held.operator or "(not recorded)"
    lines.append(f"  by:         {by}, on {local_time(held.created)}")
    lines.append(f"  recipients: {len(held.recipients):,}")
    lines.extend(f"    {display(number)}" for number in held.recipients)
    return lines


def who_sends(service: GatewayService) -> str:
    """What must be running for a held send to go, for this profile."""
    if service.profile.store_url is None:
        return (
            "It goes only if the console or `gwdesk scheduled run` is running on this "
            "desk at that time (this profile has no team server)."
        )
    return "It goes when a desk of the team has its console or `gwdesk scheduled run` running."


# ---- the actions --------------------------------------------------------------------------


def _the_id(args: argparse.Namespace) -> int:
    if args.id is None:
        raise UsageError(f"Name the send: gwdesk scheduled {args.action} ID (the list shows ids).")
    wanted: int = args.id
    return wanted


def _worst(codes: Sequence[int]) -> int:
    for code in SEVERITY:
        if code in codes:
            return code
    return EXIT_OK


async def edited_numbers(
    args: argparse.Namespace, region: str, out: Output
) -> tuple[str, ...] | None:
    """`--to` or `--to-file`, checked as `gwdesk send` checks its recipients (None: not
    given). An unusable entry refuses the edit unless `--skip-invalid`."""
    listing: RecipientList
    if args.to_file is not None:
        path = Path(args.to_file)
        _table, listing = await asyncio.to_thread(read_csv, path, region)
        where = "row "
    elif args.to:
        given = [part.strip() for value in args.to for part in value.split(",")]
        listing = await asyncio.to_thread(read_numbers, [g for g in given if g], region)
        where = "--to #"
    else:
        return None
    note_unusable(listing, where, out)
    if listing.invalid and not args.skip_invalid:
        raise UsageError(
            f"{len(listing.invalid):,} recipient(s) are not usable; nothing was changed "
            "(--skip-invalid keeps the rest)."
        )
    if not listing.numbers:
        raise UsageError("There is no usable recipient; nothing was changed.")
    return tuple(listing.numbers)


async def act(args: argparse.Namespace, scheduled: ScheduledSends, out: Output, *, who: str) -> int:
    """Run the action `args` names on the profile's scheduled sends."""
    now = scheduled.now()
    if args.action == "list":
        listed = await scheduled.listed()
        lines = [held_line(h, now) for h in listed] or ["No send is scheduled on this account."]
        out.result({"ok": True, "scheduled": [held_json(h, now) for h in listed]}, lines)
        return EXIT_OK
    if args.action == "run":
        return await run(args, scheduled, out)
    batch_id = _the_id(args)
    if args.action == "show":
        held = await scheduled.show(batch_id)
        out.result(
            {"ok": True, "scheduled": held_json(held, now, whole=True)}, held_lines(held, now)
        )
        return EXIT_OK
    if args.action == "edit":
        if args.text is None and args.at is None and not args.to and args.to_file is None:
            raise UsageError("Say what to change: --text, --at, --to or --to-file.")
        await scheduled.show(batch_id)  # an unknown send is said before any file is read
        numbers = await edited_numbers(args, scheduled.sending.region, out)
        held = await scheduled.edit(batch_id, text=args.text, at=args.at, numbers=numbers)
        out.result(
            {"ok": True, "scheduled": held_json(held, scheduled.now(), whole=True)},
            ["changed:", *held_lines(held, scheduled.now())],
        )
        return EXIT_OK
    held = await scheduled.show(batch_id)
    out.note(held_line(held, now))
    if args.action == "cancel":
        await confirm(f"Cancel send #{batch_id}", "nothing was cancelled", out, given=args.yes)
        requests = await scheduled.cancel(batch_id, who)
        out.result(
            {"ok": True, "cancelled": batch_id, "requests": requests},
            [f"cancelled send #{batch_id}: nothing of it will be sent"],
        )
        return EXIT_OK
    await confirm(f"Send #{batch_id} now", "nothing was sent", out, given=args.yes)
    outcome = await scheduled.send_now(batch_id)
    out.result({"id": batch_id, **outcome_json(outcome)}, outcome_lines(outcome))
    return outcome_status(outcome, out)


async def run(args: argparse.Namespace, scheduled: ScheduledSends, out: Output) -> int:
    """`run`: every due send sent once; the missed ones too with `--missed`, else listed."""
    if args.missed:
        outcomes: list[Outcome] = await scheduled.run_due()
        missed: list[ScheduledSend] = []
    else:
        outcomes, missed = await scheduled.run_on_time()
    now = scheduled.now()
    lines: list[str] = []
    for outcome in outcomes:
        lines.append(f"send #{outcome.batch.id}:")
        lines.extend(f"  {line}" for line in outcome_lines(outcome))
    for held in missed:
        lines.append(f"missed, left waiting: {held_line(held, now)}")
    if not outcomes and not missed:
        lines.append("Nothing is due.")
    upcoming = await scheduled.next_due()
    data = {
        "ok": all(o.ok for o in outcomes),
        "sent": [{"id": o.batch.id, **outcome_json(o)} for o in outcomes],
        "missed": [held_json(h, now) for h in missed],
        "next_due_utc": None if upcoming is None else upcoming.isoformat(timespec="seconds"),
    }
    out.result(data, lines)
    if missed:
        out.note(
            f"{len(missed)} send(s) missed their time and wait: `gwdesk scheduled run "
            "--missed` sends them, `gwdesk scheduled cancel ID` cancels one."
        )
    return _worst([outcome_status(o, out) for o in outcomes])


async def cmd_scheduled(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    async with profile_store_sending(service) as (store, sending):
        try:
            return await act(args, ScheduledSends(sending), out, who=store.operator)
        except OutboxError as exc:
            out.failure("refused", str(exc))
            return EXIT_FAILED
        except StoreError as exc:
            out.failure("store", str(exc))
            return EXIT_FAILED


def run_scheduled(args: argparse.Namespace) -> int:
    out = Output(args.json)
    editing = (args.text, args.at, args.to, args.to_file, args.skip_invalid or None)
    if args.action != "edit" and any(value is not None for value in editing):
        out.failure(
            "usage", "--text, --at, --to, --to-file and --skip-invalid go with `scheduled edit`."
        )
        return EXIT_USAGE
    if args.missed and args.action != "run":
        out.failure("usage", "--missed goes with `gwdesk scheduled run`.")
        return EXIT_USAGE
    args.handler = cmd_scheduled
    return run_command(args)


def register_scheduled(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    help = "the sends gwdesk holds until their time: list, show, edit, cancel, send now, run"
    p = sub.add_parser("scheduled", parents=[common], help=help, description=__doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("action", nargs="?", choices=ACTIONS, default="list")
    p.add_argument(
        "id",
        nargs="?",
        type=store_id("a send's id as `gwdesk scheduled list` shows it"),
        metavar="ID",
        help="the send (its # in the list)",
    )
    p.add_argument("--text", metavar="T", help="edit: the new text")
    p.add_argument(
        "--at", type=moment, metavar="WHEN", help="edit: the new time (ISO 8601; without an "
        "offset, this machine's local time)",
    )  # fmt: skip
    to = p.add_mutually_exclusive_group()
    to.add_argument(
        "--to",
        action="append",
        metavar="N1,N2",
        help="edit: the new recipients, instead of the old (comma-separated; repeatable)",
    )
    to.add_argument(
        "--to-file",
        metavar="FILE",
        help="edit: the new recipients from a CSV or text file, read as `gwdesk send --csv`",
    )
    p.add_argument(
        "--skip-invalid", action="store_true", help="edit: leave out numbers that are not usable"
    )
    p.add_argument("--yes", action="store_true", help="cancel, send-now: do it without asking")
    p.add_argument(
        "--missed",
        action="store_true",
        help=f"run: also send what was due more than {MISSED_MINUTES} min ago (missed: nothing "
        "ran at its time)",
    )
    p.set_defaults(run=run_scheduled)


COMMANDS: Final[Sequence[Registrar]] = (register_scheduled,)
