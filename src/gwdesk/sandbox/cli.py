"""`gwdesk-sandbox`: run, feed and poke a local gateway."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sqlite3
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from platformdirs import user_data_dir

from gwdesk.sandbox.config import (
    DEFAULT_NAMESPACE,
    DEFAULT_PASSWORD,
    DEFAULT_TIMEZONE,
    DEFAULT_TOKEN_TTL,
    DEFAULT_USERNAME,
    SandboxConfig,
)
from gwdesk.sandbox.db import ACCOUNT_TYPES


def default_db() -> str:
    return str(Path(user_data_dir("gwdesk", appauthor=False)) / "sandbox.sqlite3")


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the sandbox gateway until stopped")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--db", default=None, help="SQLite file, or :memory: (default: user data dir)")
    p.add_argument("--user", default=DEFAULT_USERNAME, help="the account's user name")
    p.add_argument("--password", default=DEFAULT_PASSWORD, help="the account's password")
    p.add_argument(
        "--account-type", choices=ACCOUNT_TYPES, default=None,
        help="make the account prepaid (message credits) or postpaid (none); "
        "default: as stored, prepaid when new",
    )  # fmt: skip
    p.add_argument(
        "--token-ttl", type=float, default=DEFAULT_TOKEN_TTL, metavar="SECONDS",
        help="lifetime of OAuth access tokens",
    )  # fmt: skip
    p.add_argument(
        "--namespace", default=DEFAULT_NAMESPACE, metavar="NS", help="the Lodge SOAP namespace"
    )
    p.add_argument(
        "--timezone", default=DEFAULT_TIMEZONE, metavar="TZ",
        help="the account's zone: MessageIds, log times, webhook times",
    )  # fmt: skip
    p.add_argument(
        "--simulate-delivery", action="store_true",
        help="messages turn DELIVERED (or FAILED) with a receipt a few seconds after sending",
    )  # fmt: skip
    p.add_argument(
        "--faults", default="", metavar="SPEC", help="fault injection; see docs/sandbox.md"
    )
    p.add_argument(
        "--seed", type=int, default=None, metavar="N",
        help="seed every random choice (MessageIds, deliveries, faults, auto-replies)",
    )  # fmt: skip
    p.add_argument("--auto-reply", action="store_true", help="customers answer two-way sends")
    p.add_argument(
        "--exit-with-parent", action="store_true",
        help="stop when standard input closes (the console that started it has gone)",
    )  # fmt: skip
    p.add_argument(
        "--webhook-retry-base", type=float, default=1.0, metavar="SECONDS",
        help="first webhook retry interval; later ones double",
    )  # fmt: skip
    p.add_argument(
        "--tls-cert", type=Path, default=None, metavar="FILE",
        help="serve https with this PEM certificate (chain); needs --tls-key",
    )  # fmt: skip
    p.add_argument(
        "--tls-key", type=Path, default=None, metavar="FILE",
        help="the unencrypted PEM private key of --tls-cert",
    )  # fmt: skip


def _check_serve_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    from gwdesk.sandbox.faults import FaultSpecError, parse_spec
    from gwdesk.sandbox.server import tls_context

    try:
        parse_spec(args.faults)
    except FaultSpecError as exc:
        parser.error(f"--faults: {exc} (see docs/sandbox.md)")
    _zone_or_exit(parser, args.timezone)
    if not 0 <= args.port <= 65535:
        parser.error("--port must be from 0 to 65535")
    if not 0 < args.token_ttl <= 10 * 365 * 86_400:
        parser.error("--token-ttl must be more than 0 seconds and at most ten years")
    if not 0 <= args.webhook_retry_base <= 3600:
        parser.error("--webhook-retry-base must be from 0 to 3600 seconds")
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together: give both or neither")
    try:
        tls_context(args.tls_cert, args.tls_key)
    except ValueError as exc:
        parser.error(f"--tls-cert/--tls-key: {exc}")


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """Block on stdin until EOF (the parent died or closed it), then stop the server."""
    with contextlib.suppress(OSError, ValueError):
        while sys.stdin.buffer.read(4096):
            pass
    loop.call_soon_threadsafe(stop.set)


async def _serve(config: SandboxConfig, exit_with_parent: bool = False) -> None:
    from gwdesk.sandbox.server import start_sandbox

    running = await start_sandbox(config)
    print(f"rest={running.rest_url} lodge={running.lodge_url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    if exit_with_parent:
        threading.Thread(target=_watch_stdin, args=(loop, stop), daemon=True).start()
    try:
        await stop.wait()
    finally:
        await running.stop()


def _reply_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("reply", help="make a customer reply to a lodged message")
    p.add_argument("--to-message", required=True, metavar="ID")
    p.add_argument("--text", required=True)
    p.add_argument(
        "--from",
        dest="from_number",
        default=None,
        metavar="NUMBER",
        help="the replying number (default: the message's recipient)",
    )
    p.add_argument(
        "--sent-at",
        default=None,
        metavar="ISO",
        help="when the customer sent it, ISO 8601 with offset (default: just now)",
    )
    p.add_argument(
        "--url",
        default="http://127.0.0.1:8080",
        metavar="BASE",
        help="the sandbox's address, as `serve` printed it",
    )


def _say(text: str, file: TextIO) -> None:
    """Print; text the terminal's encoding cannot show is escaped rather than fatal."""
    try:
        print(text, file=file)
    except UnicodeEncodeError:
        print(text.encode("ascii", "backslashreplace").decode("ascii"), file=file)


def _print_json(text: str) -> None:
    try:
        shown = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        shown = text
    _say(shown, sys.stdout)


def _reply(args: argparse.Namespace) -> int:
    payload = {"message_id": args.to_message, "text": args.text}
    if args.from_number is not None:
        payload["from"] = args.from_number
    if args.sent_at is not None:
        payload["sent_at"] = args.sent_at
    request = urllib.request.Request(  # noqa: S310 - the operator's own sandbox URL
        args.url.rstrip("/") + "/sandbox/replies",
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            _print_json(response.read().decode("utf-8", "replace"))
            return 0
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        with contextlib.suppress(ValueError, LookupError, TypeError):
            detail = str(json.loads(detail)["error"])
        _say(f"gwdesk-sandbox: {exc.code}: {detail}", sys.stderr)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        _say(f"gwdesk-sandbox: cannot reach {args.url}: {exc}", sys.stderr)
    return 1


def _seed_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("seed", help="fill an account with realistic log records")
    p.add_argument("--db", required=True)
    p.add_argument("--messages", type=int, required=True, metavar="N")
    p.add_argument("--user", default=DEFAULT_USERNAME)
    p.add_argument("--password", default=DEFAULT_PASSWORD)
    p.add_argument("--timezone", default=DEFAULT_TIMEZONE, metavar="TZ")
    p.add_argument("--seed", type=int, default=1, metavar="N", help="same seed, same records")
    p.add_argument(
        "--end", default=None, metavar="ISO",
        help="time of the newest record, ISO 8601 with offset (default: now)",
    )  # fmt: skip


def _zone_or_exit(parser: argparse.ArgumentParser, name: str) -> None:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        parser.error(
            f"--timezone: unknown time zone {name!r} (use an IANA name like Australia/Sydney)"
        )


def _seed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from gwdesk.sandbox.seed import EARLIEST_END, LATEST_END, seed_account

    if args.messages < 0:
        parser.error("--messages must not be negative")
    _zone_or_exit(parser, args.timezone)
    end = None
    if args.end is not None:
        try:
            end = datetime.fromisoformat(args.end)
        except ValueError:
            parser.error(f"--end: not an ISO 8601 time: {args.end!r}")
        if end.tzinfo is None:
            parser.error("--end must include a UTC offset, e.g. 2025-06-30T17:00:00+10:00")
        if not EARLIEST_END <= end <= LATEST_END:
            parser.error(f"--end must lie from {EARLIEST_END:%Y} to {LATEST_END:%Y}")
    try:
        report = seed_account(
            args.db,
            args.messages,
            username=args.user,
            password=args.password,
            timezone=args.timezone,
            seed=args.seed,
            end=end,
            progress=lambda done, total: print(
                f"seeded {done:,}/{total:,}", file=sys.stderr, flush=True
            ),
        )
    except (sqlite3.Error, OSError) as exc:
        print(f"gwdesk-sandbox: cannot seed {args.db}: {exc}", file=sys.stderr)
        return 1
    print(
        f"seeded {report.messages:,} messages ({report.batches:,} batches, "
        f"{report.replies:,} replies) into account {report.username!r} "
        f"in {report.seconds:.1f} s ({report.rate:,.0f} records/s)"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gwdesk-sandbox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    _reply_parser(sub)
    _seed_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "serve":
        _check_serve_options(parser, args)
        config = SandboxConfig(
            host=args.host,
            port=args.port,
            db=args.db or default_db(),
            username=args.user,
            password=args.password,
            account_type=args.account_type,
            token_ttl=args.token_ttl,
            namespace=args.namespace,
            timezone=args.timezone,
            simulate_delivery=args.simulate_delivery,
            faults=args.faults,
            seed=args.seed,
            auto_reply=args.auto_reply,
            webhook_retry_base=args.webhook_retry_base,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
        )
        try:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(_serve(config, args.exit_with_parent))
        except (OSError, sqlite3.Error) as exc:
            print(f"gwdesk-sandbox: cannot serve: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.command == "reply":
        return _reply(args)
    return _seed(parser, args)


if __name__ == "__main__":
    sys.exit(main())
