"""`gwdesk send --template NAME` (or a MESSAGE with placeholders): a text per recipient.

The template (a saved one, or the MESSAGE read as one) is filled in for each row of
`--csv` (its columns by header, then the fields of the contact holding the row's
number), each `--to` number (its contact's fields) or each member of a `--group`,
every text made and checked before anything is sent (the list flow's plan,
`gwdesk.app.list_send`, as the Batch tab makes it): the totals are printed first
(parts as a range and in all, requests, the recipients whose own values turn the
message into UCS-2 or add a part, and those that cannot be sent to, with why),
then the cost against the account's credits. `--dry-run` prints every rendered
message and the totals and sends nothing. The send asks what the Batch tab asks,
answered by flags (`cli.send.answer`): unusable recipients stop it unless
`--skip-invalid`, credits that do not cover it unless `--force`, the send itself (every
list send asks) and the same text sent again unless `--yes`.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from gwdesk.app.list_send import ListSend, StoreAwayError, StoreError, ValidationError
from gwdesk.app.merge import combined
from gwdesk.app.personal import (
    Cost,
    PersonalPlan,
    Recipients,
    group_recipients,
    number_recipients,
    table_recipients,
    totals_lines,
)
from gwdesk.cli import EXIT_OK, Output, UsageError, profile_store_sending
from gwdesk.cli.send import (
    MAX_SHOWN,
    answer,
    composed,
    csv_summary,
    pick_column,
    read_to,
    report_send,
)
from gwdesk.domain.numbers import display
from gwdesk.domain.templates import Template, TemplateError, parse_template
from gwdesk.gateway.service import GatewayService
from gwdesk.importing.decoding import ImportFailed
from gwdesk.importing.recipients import load_table
from gwdesk.importing.table import Table
from gwdesk.store.contacts import ContactStore
from gwdesk.store.local import LocalStore


def wanted(args: argparse.Namespace) -> bool:
    """Whether `gwdesk send` makes a text per recipient: a saved template, a dry run, or
    a MESSAGE with placeholders sent to a file's rows or a group's contacts (a `--to`
    MESSAGE stays literal, as it always was)."""
    if args.template or args.dry_run:
        return True
    if not (args.csv or args.group) or args.message is None:
        return False
    try:
        return parse_template(args.message).personal
    except TemplateError:
        return True  # refused with its position by the personal path


def template_of(args: argparse.Namespace, store: LocalStore) -> Template:
    if args.template and args.message is not None:
        raise UsageError("Give either a MESSAGE or --template NAME, not both.")
    if args.template:
        saved = store.templates.get(args.template)
        if saved is None:
            names = ", ".join(repr(t.name) for t in store.templates.listing()[:MAX_SHOWN])
            raise UsageError(
                f"There is no template called {args.template!r}"
                + (f"; the templates: {names}." if names else " (gwdesk templates add).")
            )
        text, where = saved.text, f"template {saved.name!r}"
    elif args.message is not None:
        text, where = args.message, "MESSAGE"
    else:
        raise UsageError("Give the MESSAGE to send, or --template NAME.")
    try:
        return parse_template(text)
    except TemplateError as exc:
        raise UsageError(f"The {where} cannot be read as a template: {exc}") from None


def read_rows(path: Path, region: str, column: str | None) -> Table:
    """The file read as the console's Batch import reads it; its number column as found
    or chosen. Blocking: a worker thread."""
    try:
        table = load_table(path, region)
    except ImportFailed as exc:
        raise UsageError(f"Cannot read recipients from {path}: {exc.message}") from None
    return replace(table, column=pick_column(table, column)) if column is not None else table


def recipients_of(
    args: argparse.Namespace, template: Template, region: str, contacts: ContactStore, out: Output
) -> Recipients:
    """The file's rows or the `--to` numbers, then each `--group`'s contacts, as one
    list (each number once). Blocking: a worker thread."""
    parts: list[Recipients] = []
    if args.csv:
        path = Path(args.csv)
        table = read_rows(path, region, args.column)
        out.note(csv_summary(path, table))
        try:
            parts.append(
                table_recipients(table, table.column, region, template, contacts, source=path.name)
            )
        except ImportFailed as exc:
            raise UsageError(exc.message) from None
    elif args.column is not None:
        raise UsageError("--column goes with --csv.")
    elif args.to:
        listing = read_to(args.to, region)
        for row in listing.invalid[:MAX_SHOWN]:
            out.note(f"--to #{row.row}: {row.text[:40]!r}: {row.reason}")
        found = number_recipients(listing.numbers, template, contacts)
        parts.append(replace(found, invalid=listing.invalid, duplicates=listing.duplicates))
    for name in args.group or ():
        try:
            parts.append(group_recipients(contacts, name, template))
        except ValidationError as exc:
            raise UsageError(exc.message) from None
    if not parts:
        raise UsageError("Give the recipients: --to NUMBER, --csv FILE or --group NAME.")
    return combined(parts)


def plan_json(plan: PersonalPlan, cost: Cost, *, messages: bool) -> dict[str, Any]:
    low, high, total = plan.parts
    data: dict[str, Any] = {
        "recipients": plan.recipients,
        "parts": {"min": low, "max": high, "total": total},
        "requests": plan.request_count,
        "shared_requests": plan.shared_requests,
        "ucs2": [
            {
                "row": m.recipient.row,
                "number": m.recipient.number,
                "values": {v.name: v.value for v in plan.why_ucs2(m)},
            }
            for m in plan.turned_ucs2()
        ],
        "longer": [
            {"row": m.recipient.row, "number": m.recipient.number, "parts": m.parts}
            for m in plan.longer()
        ],
        "invalid": [{"row": r.row, "text": r.text, "reason": r.reason} for r in plan.invalid],
        "duplicates": plan.duplicates,
        "opted_out": [o.number for o in plan.excluded],
        "cost": {
            "parts": cost.parts,
            "credits": cost.credits,
            "balance": cost.balance,
            "covered": cost.covered,
            "summary": cost.summary(),
        },
    }
    if messages:
        data["messages"] = [
            {
                "row": m.recipient.row,
                "number": m.recipient.number,
                "text": m.text,
                "parts": m.parts,
                "encoding": m.encoding.value,
            }
            for m in plan.messages
        ]
    return data


def message_line(plan: PersonalPlan, index: int) -> str:
    m = plan.messages[index]
    who = f" {m.recipient.who}" if m.recipient.who else ""
    return (
        f"row {m.recipient.row}, {display(m.recipient.number)}{who} "
        f"({m.parts} part{'s' if m.parts != 1 else ''}, {m.encoding.value}): {m.text}"
    )


async def send_personal(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    region = service.profile.region
    async with profile_store_sending(service) as (store, sending):
        flow = ListSend.of(sending, store)
        template = template_of(args, store)
        try:
            recipients = await asyncio.to_thread(
                recipients_of, args, template, region, store.contacts, out
            )
        except StoreError as exc:
            raise StoreAwayError("The contacts cannot be read", exc) from exc
        form = composed(args, sending.compliance.marketing_default)
        plan = await flow.plan_of(form, template, recipients)
        prepared = await flow.prepare_personal(plan)
        cost = prepared.cost or Cost(plan.parts[2])
        if args.dry_run:
            lines = [message_line(plan, i) for i in range(len(plan.messages))]
            lines += [*totals_lines(plan), f"cost: {cost.summary()}", "dry run: nothing was sent"]
            out.result({"ok": True, "dry_run": True, **plan_json(plan, cost, messages=True)}, lines)
            return EXIT_OK
        for line in totals_lines(plan):
            out.note(line)
        out.note(f"cost: {cost.summary()}")
        await answer(prepared, args, out)
        outcome = await flow.send(prepared)
    return report_send(outcome, out)
