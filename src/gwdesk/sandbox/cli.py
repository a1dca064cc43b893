"""`gwdesk-sandbox`: run, feed and poke a local gateway."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from platformdirs import user_data_dir

from gwdesk.sandbox.config import (
    DEFAULT_NAMESPACE,
    DEFAULT_PASSWORD,
    DEFAULT_TIMEZONE,
    DEFAULT_TOKEN_TTL,
    DEFAULT_USERNAME,
    SandboxConfig,
)


def default_db() -> str:
    return str(Path(user_data_dir("gwdesk", appauthor=False)) / "sandbox.sqlite3")


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the sandbox gateway until stopped")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--db", default=None, help="SQLite file, or :memory: (default: user data dir)")
    p.add_argument("--user", default=DEFAULT_USERNAME)
    p.add_argument("--password", default=DEFAULT_PASSWORD)
    p.add_argument("--token-ttl", type=float, default=DEFAULT_TOKEN_TTL, metavar="SECONDS")
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE, metavar="NS")
    p.add_argument("--timezone", default=DEFAULT_TIMEZONE, metavar="TZ")
    p.add_argument("--simulate-delivery", action="store_true")
    p.add_argument("--faults", default="", metavar="SPEC", help="see docs/sandbox.md")
    p.add_argument("--seed", type=int, default=None, metavar="N")
    p.add_argument("--auto-reply", action="store_true", help="customers answer two-way sends")
    p.add_argument(
        "--webhook-retry-base", type=float, default=1.0, metavar="SECONDS",
        help="first webhook retry interval; later ones double",
    )  # fmt: skip


async def _serve(config: SandboxConfig) -> None:
    from gwdesk.sandbox.server import start_sandbox

    running = await start_sandbox(config)
    print(f"rest={running.rest_url} lodge={running.lodge_url}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await running.stop()


def _reply_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("reply", help="make a customer reply to a lodged message")
    p.add_argument("--to-message", required=True, metavar="ID")
    p.add_argument("--text", required=True)
    p.add_argument("--url", default="http://127.0.0.1:8080", metavar="BASE")


def _reply(args: argparse.Namespace) -> int:
    body = json.dumps({"message_id": args.to_message, "text": args.text}).encode("utf-8")
    request = urllib.request.Request(  # noqa: S310 - the operator's own sandbox URL
        args.url.rstrip("/") + "/sandbox/replies",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            print(response.read().decode("utf-8"))
            return 0
    except urllib.error.HTTPError as exc:
        print(
            f"gwdesk-sandbox: {exc.code}: {exc.read().decode('utf-8', 'replace')}", file=sys.stderr
        )
    except (urllib.error.URLError, OSError) as exc:
        print(f"gwdesk-sandbox: cannot reach {args.url}: {exc}", file=sys.stderr)
    return 1


def _seed_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("seed", help="fill an account with realistic log records")
    p.add_argument("--db", required=True)
    p.add_argument("--messages", type=int, required=True, metavar="N")
    p.add_argument("--user", default=DEFAULT_USERNAME)
    p.add_argument("--password", default=DEFAULT_PASSWORD)
    p.add_argument("--timezone", default=DEFAULT_TIMEZONE)
    p.add_argument("--seed", type=int, default=1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gwdesk-sandbox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _serve_parser(sub)
    _reply_parser(sub)
    _seed_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "serve":
        config = SandboxConfig(
            host=args.host,
            port=args.port,
            db=args.db or default_db(),
            username=args.user,
            password=args.password,
            token_ttl=args.token_ttl,
            namespace=args.namespace,
            timezone=args.timezone,
            simulate_delivery=args.simulate_delivery,
            faults=args.faults,
            seed=args.seed,
            auto_reply=args.auto_reply,
            webhook_retry_base=args.webhook_retry_base,
        )
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(config))
        return 0
    if args.command == "reply":
        return _reply(args)
    from gwdesk.sandbox.seed import seed_account

    seed_account(
        args.db,
        args.messages,
        username=args.user,
        password=args.password,
        timezone=args.timezone,
        seed=args.seed,
        progress=lambda done, total: print(f"{done}/{total}", file=sys.stderr, flush=True),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
