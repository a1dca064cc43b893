"""`gwdesk send … --at WHEN`: a send gwdesk holds in the outbox until its time.

The message and recipients are checked, weighed and asked about exactly as `gwdesk
send` does now (one `--to` as a single message: `--force` when the credits do not cover
it; a list as every list send: `--yes`, `--skip-invalid`, `--force`), then recorded
held (`gwdesk.app.scheduled`) instead of sent: nothing reaches the gateway before
WHEN, and until then `gwdesk scheduled` (or the console's Scheduled view) changes,
sends or cancels it. A time that has passed or is more than a year ahead is refused
before anything is asked or recorded. Unlike `--send-at`, which hands the time to the
gateway (whose schedule gwdesk cannot change), a held send goes only if something is
running at its time: the console, or `gwdesk scheduled run`; the command says so.
A list is kept to its recipients' sending hours (`gwdesk.app.sending_hours`): held in
parts when their hours begin at different times. A text per recipient (`--template`,
placeholders with `--csv` or `--group`) is not scheduled here: the held send keeps one
text for all.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime

from gwdesk.app.list_send import ListSend
from gwdesk.app.pacing import Pace, parse_pace
from gwdesk.app.scheduled import Later, ScheduledSend, ScheduledSends
from gwdesk.app.single_send import SingleSend
from gwdesk.app.sms import SmsMessage
from gwdesk.cli import EXIT_OK, Output, UsageError, personal, profile_store_sending, single
from gwdesk.cli.scheduled import held_json, local_time, relative, utc_time, who_sends
from gwdesk.cli.send import (
    answer,
    as_check,
    composed,
    list_recipients,
    warn_of_sender,
    with_groups,
)
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.recurrence import Recurrence, RecurrenceError, RecurrenceKind
from gwdesk.gateway.service import GatewayService
from gwdesk.importing.recipients import RecipientList


async def schedule_send(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    """Check, ask and record the send held until `args.at`; print its id and time."""
    if personal.wanted(args):
        raise UsageError(
            "--at holds one text for every recipient: --template, --dry-run and placeholders "
            "filled per recipient cannot be scheduled."
        )
    if args.message is None:
        raise UsageError("Give the MESSAGE to send.")
    listing = await list_recipients(args, service.profile.region, out)
    every = _every(args, service)
    pace = _pace(args)
    hours = args.quiet_hours == "keep"
    async with profile_store_sending(service, sending_hours=hours) as (store, sending):
        scheduled = ScheduledSends(sending)
        scheduled.check_time(args.at)  # refused before anything is asked or recorded
        if single.wanted(args):
            message, numbers = await _one(args, SingleSend(sending), listing, out)
            helds = await scheduled.schedule_in_hours(message, numbers, args.at, every)
        else:
            flow = ListSend.of(sending, store)
            listing = await with_groups(flow, args.group or (), listing)
            if not listing.numbers:
                raise UsageError("There is no usable recipient; nothing was scheduled.")
            form = composed(args, sending.compliance.marketing_default)
            message = flow.check_message(form)
            warn_of_sender(args, form, service.profile.region, out)
            later = Later(args.at, every, pace)
            prepared = await flow.prepare_list(message, listing, later=later)
            await answer(prepared, args, out)
            helds = await flow.schedule(prepared)
        now = scheduled.now()
    if pace is not None:
        lines = [_paced(helds, pace, now)]
    else:
        lines = [_line(held, args.at, now) for held in helds]
    if len(helds) > 1 and pace is None:
        lines.insert(0, f"held in {len(helds)} parts, by each recipient's sending hours:")
    first = helds[0].batch_id
    lines += [
        who_sends(service),
        f"`gwdesk scheduled show {first}` shows it; edit, send-now and cancel change it.",
    ]
    report = {
        "ok": True,
        "scheduled": held_json(helds[0], now),
        "parts": [held_json(held, now) for held in helds],
        "who_sends": who_sends(service),
    }
    out.result(report, lines)
    return EXIT_OK


def _line(held: ScheduledSend, at: datetime, now: datetime) -> str:
    due, count = held.due or at, len(held.recipients)
    again = f"; then {held.every.describe()}" if held.every is not None else ""
    return (
        f"scheduled send #{held.batch_id}: {count:,} recipient{'s' if count != 1 else ''}, "
        f"at {local_time(due)} ({relative(due, now)}; {utc_time(due)}){again}"
    )


def _paced(helds: Sequence[ScheduledSend], pace: Pace, now: datetime) -> str:
    """One line for a paced list: how many, at what pace, from when to when."""
    times = [held.due for held in helds if held.due is not None]
    count = sum(len(held.recipients) for held in helds)
    first, last = min(times), max(times)
    return (
        f"paced send: {count:,} recipients in {len(helds):,} parts, {pace.describe()}, "
        f"from {local_time(first)} ({relative(first, now)}) to {local_time(last)} "
        f"(#{helds[0].batch_id} to #{helds[-1].batch_id})"
    )


def _pace(args: argparse.Namespace) -> Pace | None:
    if not args.pace:
        return None
    if single.wanted(args):
        raise UsageError("--pace spreads a list; one recipient goes at once (or --at).")
    try:
        return parse_pace(args.pace)
    except ValidationError as exc:
        raise UsageError(f"--pace: {exc.message}") from None


def _every(args: argparse.Namespace, service: GatewayService) -> Recurrence | None:
    """`--every` (and `--until`) as a rule on the profile's clock, first at `--at`."""
    if not args.every:
        return None
    try:
        return Recurrence(RecurrenceKind(args.every), args.at, service.profile.timezone, args.until)
    except RecurrenceError as exc:
        raise UsageError(f"--every: {exc.message}") from None


async def _one(
    args: argparse.Namespace, flow: SingleSend, listing: RecipientList | None, out: Output
) -> tuple[SmsMessage, Sequence[str]]:
    """One `--to`, checked and asked about as a single send is (`cli/single.py`)."""
    checked = as_check(listing) if listing is not None else None
    if checked is None or not checked.numbers:
        raise UsageError("There is no usable recipient; nothing was scheduled.")
    prepared = await single.asked(args, flow, checked.numbers[0], out)
    return prepared.single.message, (prepared.single.recipient,)
