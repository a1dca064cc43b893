"""The Lodge commands of `gwdesk`: mms, fax, wap and lodge-status.

Options are named after the Lodge parameters they fill (`--PhoneNumber`,
`--MMSSubject`, ...), so the legacy interface's documentation reads straight onto
the command line; files are paths (`--file`, up to three). The Lodge address comes
from the profile or `--lodge-url`; `--port` overrides the profile's port for one
command. Sends go through the single send's flow as the Fax / MMS and Send tabs' do
(`gwdesk.app.single_send`): the same checks, the profile's outbox, the history; none of
them asks a question (Lodge reports no price for an MMS or a fax, and a WAP push is no
SMS part). Exit statuses are the CLI's own (see `gwdesk.cli`): a refusal is 1,
refused credentials 3, and a send whose outcome is unknown 4.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, get_args

from gwdesk.app.media import Attached, MediaForm, Mode
from gwdesk.app.sending import Outcome
from gwdesk.app.single_send import SingleSend
from gwdesk.app.sms import Channel, SmsForm
from gwdesk.cli import EXIT_OK, Output, Registrar, SubParsers, UsageError, profile_sending
from gwdesk.cli.asking import settle
from gwdesk.domain.errors import GatewayError
from gwdesk.domain.models import LodgeResult, LodgeText, MessageStatus
from gwdesk.domain.profile import LodgePort
from gwdesk.gateway.lodge.client import LodgeClient
from gwdesk.gateway.service import GatewayService

PORTS: Final = get_args(LodgePort)


def _sub(
    sub: SubParsers,
    name: str,
    common: argparse.ArgumentParser,
    help: str,
    aliases: Sequence[str] = (),
) -> argparse.ArgumentParser:
    p = sub.add_parser(name, parents=[common], help=help, description=help, aliases=aliases)
    p.add_argument(
        "--port",
        dest="lodge_port",
        choices=PORTS,
        help="Lodge port for this command (default: the profile's, else soap12)",
    )
    return p


def _lodge(service: GatewayService) -> LodgeClient:
    """The Lodge client (on `--port`, laid over the profile); a usage error without one."""
    if not service.profile.lodge_url:
        raise UsageError(
            "This command uses the Lodge service: give --lodge-url (…/dotnet/Lodge.asmx) "
            "or a profile that has one."
        )
    return service.lodge


def read_file(path: Path, limit: int) -> Attached:
    """A `--file` as the Fax / MMS tab holds a dropped one: its bytes (at most `limit` + 1,
    so an oversized file is refused by the checks without being read whole), or why it
    cannot be read. Blocking: a worker thread."""
    try:
        if not path.is_file():
            return Attached(path.name or str(path), error=f"{path} is not a file.")
        with path.open("rb") as stream:
            return Attached(path.name, stream.read(limit + 1))
    except OSError as exc:
        return Attached(path.name or str(path), error=f"Cannot read {path}: {exc.strerror or exc}.")


async def read_files(values: Sequence[str] | None, mode: Mode) -> tuple[Attached, ...]:
    paths = [Path(v) for v in values or ()]
    limit = mode.rules.max_bytes
    return tuple([await asyncio.to_thread(read_file, path, limit) for path in paths])


def _answer(outcome: Outcome) -> LodgeText | LodgeResult:
    """Lodge's own answer to a send that was lodged; the send's error otherwise."""
    if outcome.ok:
        media = outcome.lodged_media[0].answer if outcome.lodged_media else None
        answer = media if media is not None else outcome.sent[0].answer
        if isinstance(answer, LodgeText | LodgeResult):
            return answer
    raise outcome.error or GatewayError("The message was not lodged.")


def _report(result: LodgeText | LodgeResult, what: str, to: str, out: Output) -> int:
    data: dict[str, Any] = {"ok": True, "kind": what, "to": to}
    if isinstance(result, LodgeText):
        data.update(operation=result.operation, text=result.text)
        line = f"lodged {what} to {to} ({result.operation}): {result.text}"
    else:
        data.update(msg_id=result.msg_id, result=result.result)
        line = f"lodged {what} to {to}: MsgID {result.msg_id or '(none given)'}"
    out.result(data, [line])
    return EXIT_OK


async def send_media(service: GatewayService, form: MediaForm) -> LodgeText | LodgeResult:
    """An MMS or fax through the application core (its checks, the outbox, the history)."""
    _lodge(service)
    async with profile_sending(service) as sending:
        flow = SingleSend(sending)
        result = await flow.send_media(flow.check_media(form))
    return _answer(result.outcome)


# ---- mms --------------------------------------------------------------------------------------


async def cmd_mms(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    mode = Mode.MMS_URL if args.url else Mode.MMS
    form = MediaForm(
        mode,
        recipient=args.phone_number,
        subject=args.subject or "",
        text=args.text or "",
        url=args.url or "",
        files=await read_files(args.file, mode),
    )
    return _report(await send_media(service, form), "MMS", args.phone_number, out)


def register_mms(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = _sub(sub, "mms", common, "send an MMS through Lodge: 1 to 3 files (400 KB in all) or a URL")
    p.add_argument("--PhoneNumber", dest="phone_number", required=True, metavar="NUMBER")
    p.add_argument("--MMSSubject", dest="subject", metavar="TEXT")
    p.add_argument("--MMSMessageText", dest="text", metavar="TEXT")
    content = p.add_mutually_exclusive_group(required=True)
    content.add_argument(
        "--file",
        action="append",
        metavar="PATH",
        help="jpg, png, gif, txt, amr, mp3, 3gp or mp4 (repeat for up to 3)",
    )
    content.add_argument("--URL", dest="url", metavar="URL", help="content the service fetches")
    p.set_defaults(handler=cmd_mms)


# ---- fax --------------------------------------------------------------------------------------


async def cmd_fax(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    form = MediaForm(
        Mode.FAX,
        recipient=args.fax_number,
        subject=args.subject or "",
        text=args.cover_page or "",
        files=await read_files(args.file, Mode.FAX),
    )
    return _report(await send_media(service, form), "fax", args.fax_number, out)


def register_fax(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = _sub(sub, "fax", common, "send a fax through Lodge: up to 3 files (10 MB in all)")
    p.add_argument("--FaxNumber", dest="fax_number", required=True, metavar="NUMBER")
    p.add_argument("--FaxSubject", dest="subject", metavar="TEXT")
    p.add_argument("--CoverPageText", dest="cover_page", metavar="TEXT")
    p.add_argument(
        "--file", action="append", metavar="PATH", help="pdf, tif, tiff or txt (repeat for up to 3)"
    )
    p.set_defaults(handler=cmd_fax)


# ---- wap --------------------------------------------------------------------------------------


async def cmd_wap(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    _lodge(service)
    form = SmsForm(
        Channel.WAP_PUSH,
        recipient=args.phone_number,
        wap_app=args.application_name or "",
        wap_url=args.url,
    )
    async with profile_sending(service) as sending:
        flow = SingleSend(sending)
        prepared = await flow.prepare(flow.check(form))
        await settle(prepared.question, out, flags={})  # a WAP push asks nothing today
        result = await flow.send(prepared, answered=True)
    return _report(_answer(result.outcome), "WAP push", args.phone_number, out)


def register_wap(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = _sub(sub, "wap", common, "send a WAP push (a link) through Lodge")
    p.add_argument("--PhoneNumber", dest="phone_number", required=True, metavar="NUMBER")
    p.add_argument("--ApplicationName", dest="application_name", metavar="NAME")
    p.add_argument("--URL", dest="url", required=True, metavar="URL")
    p.set_defaults(handler=cmd_wap)


# ---- lodge-status -----------------------------------------------------------------------------


def _when(value: object) -> str:
    if value is None:
        return "-"
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _status_line(status: MessageStatus) -> str:
    return (
        f"{status.msg_id}  {status.phone_number or '-'}  {status.status or '-'}  "
        f"lodged {_when(status.date_lodged)}  sent {_when(status.date_sent)}"
    )


async def cmd_lodge_status(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    status = await _lodge(service).get_message_status_xml(args.msg_id)
    data = {"ok": True, **status.model_dump(mode="json", by_alias=True)}
    out.result(data, [_status_line(status)])
    return EXIT_OK


def register_lodge_status(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    what = "status of a message lodged through Lodge (by MsgID)"
    p = _sub(sub, "lodge-status", common, what, aliases=["legacy-status"])
    p.add_argument("--MsgID", dest="msg_id", required=True, metavar="ID")
    p.set_defaults(handler=cmd_lodge_status)


COMMANDS: Final[Sequence[Registrar]] = (
    register_mms,
    register_fax,
    register_wap,
    register_lodge_status,
)
