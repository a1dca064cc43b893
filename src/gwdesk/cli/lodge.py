"""The Lodge commands of `gwdesk`: mms, fax, wap and lodge-status.

Options are named after the Lodge parameters they fill (`--PhoneNumber`,
`--MMSSubject`, ...), so the legacy interface's documentation reads straight onto
the command line; files are paths (`--file`, up to three). The Lodge address comes
from the profile or `--lodge-url`; `--port` overrides the profile's port for one
command. Exit statuses are the CLI's own (see `gwdesk.cli`): a refusal is 1, refused
credentials 3, and a send whose outcome is unknown 4.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, get_args

from gwdesk.cli import EXIT_OK, Output, Registrar, SubParsers, UsageError
from gwdesk.cli.commands import outbox_sender
from gwdesk.domain.models import LodgeResult, LodgeText, MessageStatus
from gwdesk.domain.profile import LodgePort
from gwdesk.gateway.lodge.client import LodgeClient
from gwdesk.gateway.outbox_records import lodge_verdict
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
        choices=PORTS,
        help="Lodge port for this command (default: the profile's, else soap12)",
    )
    return p


def _lodge(args: argparse.Namespace, service: GatewayService) -> LodgeClient:
    if not service.profile.lodge_url:
        raise UsageError(
            "This command uses the Lodge service: give --lodge-url (…/dotnet/Lodge.asmx) "
            "or a profile that has one."
        )
    lodge = service.lodge
    return lodge.with_port(args.port) if args.port else lodge


def _paths(values: Sequence[str] | None) -> list[Path]:
    return [Path(v) for v in values or ()]


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


# ---- mms --------------------------------------------------------------------------------------


async def cmd_mms(args: argparse.Namespace, service: GatewayService, out: Output) -> int:
    lodge = _lodge(args, service)
    files = _paths(args.file)
    description = {
        "label": f"MMS: {args.subject or args.text or args.url or ''}",
        "subject": args.subject,
        "text": args.text,
        "url": args.url,
        "files": [str(f) for f in files],
    }
    with outbox_sender(service) as sender:
        result = await sender.lodge(
            "mms",
            [args.phone_number],
            description,
            lambda: lodge.send_mms(
                args.phone_number,
                files=files,
                url=args.url,
                subject=args.subject or "",
                text=args.text or "",
            ),
            lodge_verdict,
        )
    return _report(result, "MMS", args.phone_number, out)


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
    lodge = _lodge(args, service)
    files = _paths(args.file)
    description = {
        "label": f"Fax: {args.subject or args.cover_page or ''}",
        "subject": args.subject,
        "cover_page": args.cover_page,
        "files": [str(f) for f in files],
    }
    with outbox_sender(service) as sender:
        result = await sender.lodge(
            "fax",
            [args.fax_number],
            description,
            lambda: lodge.send_fax(
                args.fax_number,
                files,
                subject=args.subject or "",
                cover_page=args.cover_page or "",
            ),
            lodge_verdict,
        )
    return _report(result, "fax", args.fax_number, out)


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
    lodge = _lodge(args, service)
    description = {
        "label": f"WAP push: {args.url}",
        "application": args.application_name,
        "url": args.url,
    }
    with outbox_sender(service) as sender:
        result = await sender.lodge(
            "wap",
            [args.phone_number],
            description,
            lambda: lodge.send_wap_push(args.phone_number, args.application_name or "", args.url),
            lodge_verdict,
        )
    return _report(result, "WAP push", args.phone_number, out)


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
    status = await _lodge(args, service).get_message_status_xml(args.msg_id)
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
