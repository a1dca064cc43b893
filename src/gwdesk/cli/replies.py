"""`gwdesk replies`: the replies a profile's store holds, for people and for scripts.

    gwdesk replies [--since ISO] [--after-id N] [--limit N] [--json]

Lists stored replies in the order they were stored (ids only grow), optionally only
those received at or after `--since` and stored after `--after-id`: a monitoring script
remembers the last id it printed and asks again with `--after-id` to read only what
is new. With `--json`, one JSON object per reply per line (what `gwdesk listen --json`
prints as replies arrive), nothing else on stdout. No gateway password is needed.

Which store: the profile's (`--profile`, its team server when it names one), or
`--store postgresql://…` alone (the office's reply receiver's), or without either the
command line's own file (where `gwdesk listen` without a gateway stores replies).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Final
from zoneinfo import ZoneInfo

from gwdesk.cli import (
    EXIT_FAILED,
    EXIT_OK,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    moment,
    not_opened,
    open_store_of,
    resolve_profile,
    store_password,
    subcommand,
)
from gwdesk.cli.listen import reply_line, zone_named
from gwdesk.domain.profile import DEFAULT_TIMEZONE
from gwdesk.store.database import StoreError
from gwdesk.store.replies import ReplyStore

PAGE: Final = 1000
"""Replies read per query: memory stays flat whatever the store holds."""


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


Opened = tuple[ReplyStore, Callable[[], None], ZoneInfo]
"""The replies to list, how to close what was opened for them, and the zone to show times in."""


def _open(args: argparse.Namespace) -> Opened:
    zone = zone_named(args.timezone or DEFAULT_TIMEZONE)
    if args.profile or args.base_url:
        profile = resolve_profile(args)
        local = open_store_of(profile)
        return local.replies, local.close, profile.zone
    if args.store:
        from gwdesk.domain.profile import check_store_url
        from gwdesk.store.postgres import PostgresDatabase
        from gwdesk.store.shared import ServerData

        try:
            url = check_store_url(args.store)
        except ValueError as exc:
            raise UsageError(f"The store address: {exc}.") from None
        from gwdesk.app.profile_data import INLINE_NAME, store_path

        server = ServerData(PostgresDatabase(url, store_password(None), upgrade=False))
        replies = ReplyStore(server, local=store_path(INLINE_NAME))

        def close() -> None:
            replies.close()
            server.close()

        return replies, close, zone
    from gwdesk.app.profile_data import INLINE_NAME, store_path

    replies = ReplyStore(store_path(INLINE_NAME))
    return replies, replies.close, zone


def run_replies(args: argparse.Namespace) -> int:
    out = Output(args.json)
    try:
        replies, close, zone = _open(args)
    except (UsageError, StoreError, OSError) as exc:
        return not_opened(out, exc, "The store")
    shown = 0
    try:
        last = args.after_id
        while args.limit is None or shown < args.limit:
            want = PAGE if args.limit is None else min(PAGE, args.limit - shown)
            page = replies.stored_after(last, received_since=args.since, limit=want)
            for reply in page:
                if out.json_mode:
                    out.json_line(reply.as_json())
                else:
                    out.line(reply_line(reply, zone))
            shown += len(page)
            if len(page) < want:
                break
            last = page[-1].id
    except StoreError as exc:
        out.failure("store", str(exc))
        return EXIT_FAILED
    finally:
        close()
    if not out.json_mode:
        out.note(f"{shown} repl{'y' if shown == 1 else 'ies'}")
    return EXIT_OK


def register_replies(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    p = subcommand(sub, "replies", common, "list the stored replies (oldest stored first)")
    p.add_argument("--since", type=moment, metavar="ISO", help="received at or after this time")
    p.add_argument(
        "--after-id", type=_count, default=0, metavar="N", help="stored after reply id N"
    )
    p.add_argument("--limit", type=_count, metavar="N", help="at most N replies")
    p.set_defaults(run=run_replies)


COMMANDS: Final[tuple[Registrar, ...]] = (register_replies,)
