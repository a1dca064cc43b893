"""`gwdesk send --to NUMBER MESSAGE`: one message to one number, as the Send tab sends it.

The single send's flow (`gwdesk.app.single_send`) checks it, weighs its cost against
the account's credits and asks when they do not cover it (`--force` answers yes; not
at a terminal, nothing is sent without it), then sends it through the profile's
outbox: an opted-out number is refused with the reason (exit 1), a message marked
`--factual` goes and says so. The MESSAGE is sent as written: its braces are text
(a template goes with `--template` or `--csv`). The result prints as a list send's
does (`report_send`), so a script reads one shape whatever the number of recipients.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from gwdesk.app.questions import Concern
from gwdesk.app.single_send import Prepared, SingleSend
from gwdesk.cli import Output, profile_sending
from gwdesk.cli.asking import settle
from gwdesk.cli.send import composed, report_send, warn_of_sender
from gwdesk.gateway.service import GatewayService

FLAGS = {Concern.CREDITS_SHORT: "--force"}
"""The flag that answers each concern a single send may raise."""


def wanted(args: argparse.Namespace) -> bool:
    """Whether `gwdesk send` is a single send: one `--to` (a file or a group is a list,
    however short)."""
    return len(args.to or ()) == 1 and not args.csv and not getattr(args, "group", None)


async def send_to_one(
    args: argparse.Namespace, service: GatewayService, number: str, out: Output
) -> int:
    """`number`: the `--to` value, checked as a list's would be (`send_recipients`)."""
    async with profile_sending(service) as sending:
        flow = SingleSend(sending)
        prepared = await asked(args, flow, number, out)
        result = await flow.send(prepared, answered=True)
    return report_send(result.outcome, out)


async def asked(args: argparse.Namespace, flow: SingleSend, number: str, out: Output) -> Prepared:
    """The message to `number` as composed by the flags, checked, weighed and its question
    answered (`--force`, or y/N at a terminal): ready to send, now or later."""
    sending = flow.sending
    form = replace(composed(args, sending.compliance.marketing_default), recipient=number)
    warn_of_sender(args, form, sending.region, out)
    prepared = await flow.prepare(flow.check(form, placeholders=False))
    given = {Concern.CREDITS_SHORT} if args.force else set()
    await settle(prepared.question, out, flags=FLAGS, given=given)
    return prepared
