"""`gwdesk listen`: the reply listener without the console, for a machine that stays on.

The first line on stdout is the `ReplyPath` template (its secret included), so a
script can read it and configure the gateway; every reply stored after that is one
more line (one JSON object per line with `--json`). Retries of a reply already
stored print nothing. Notes (the address, a warning when reachable from other
machines, the backfill's result) go to stderr. Ctrl+C or SIGTERM stops it cleanly,
after every reply already acknowledged has been printed; a second one stops it at once.
A reply's text is shown as text: its line breaks and escape sequences as `\\n`, `\\x1b`.

With a gateway (`--profile NAME`, or `--base-url` and `--username`, the options
every command takes) it stores into that profile's store, where the console and
`gwdesk optouts` and `gwdesk send` find the replies, and a STOP or START changes that
gateway account's opt-out list; it first backfills the replies the gateway received
while nothing was listening, and it sends the profile's scheduled sends as they fall
due (`receiver_sends.py`). Without one, replies are stored but change no list. Either
way it runs the profile's keyword rules on each reply it stores (`receiver_rules.py`;
their automatic replies need the gateway).

An office runs one on an always-on machine for its team's store (a profile that names
a PostgreSQL server, or `--store postgresql://…`): every reply is on the server before
the gateway hears `OK`, and the ReplyPath is published there, so the team's consoles
give the gateway this receiver's address for their two-way sends. `--quiet` leaves
the replies out of stdout (a service's journal needs the ReplyPath and the notes only).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import queue
import signal
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import Any, Final, TypeAlias
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gwdesk.app.profile_data import INLINE_NAME, store_path
from gwdesk.cli import (
    EXIT_OK,
    EXIT_USAGE,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    open_store_of,
    resolve_password,
    resolve_profile,
    store_password,
)
from gwdesk.cli.receiver_rules import rules_in_background
from gwdesk.cli.receiver_sends import serve_in_background
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import DEFAULT_TIMEZONE, Profile
from gwdesk.domain.settings import TEAM_REPLY_PATH
from gwdesk.replies import (
    InboxClosed,
    ListenerError,
    PortInUseError,
    ReplyBatch,
    ReplyInbox,
    ReplyListener,
    backfill,
    suggested_start,
)
from gwdesk.replies.template import TemplateError, public_address, team_route
from gwdesk.store.changes import RESYNC, ChangeFeed
from gwdesk.store.database import StoreError
from gwdesk.store.local import LocalStore, open_local
from gwdesk.store.replies import StoredReply
from gwdesk.store.shared import server_of

log = logging.getLogger("gwdesk.cli.listen")

POLL: Final = 0.2
RECEIVER: Final = "the reply receiver"
"""Who the receiver is to the record (a login of its own is named by the server)."""
EXIT_INTERRUPTED: Final = 130
SENDER_STOP: Final = 30.0
"""Seconds a scheduled send on the wire may take to finish when the receiver stops."""
SignalHandler: TypeAlias = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
"""What `signal.signal` returns (and takes back)."""


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: any free port), not {text!r}")
    return int(text)


def _public_url(text: str) -> str:
    try:
        public_address(text)
    except TemplateError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text.strip()


def zone_named(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(
            f"Unknown time zone {name[:60]!r}; use a name such as Australia/Sydney."
        ) from None


def reply_line(reply: StoredReply, zone: ZoneInfo) -> str:
    """A reply as one line (`Output` shows its line breaks and escapes as `\\n`, `\\x1b`...)."""
    when = reply.received_at.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S")
    return f"{when}  {reply.from_number} -> {reply.to_number}  {reply.text}"


class _Printer:
    """Prints stored replies on the main thread (the feed delivers them on the writer thread)."""

    def __init__(self, out: Output, zone: ZoneInfo) -> None:
        self.out = out
        self.zone = zone
        self.batches: queue.SimpleQueue[ReplyBatch] = queue.SimpleQueue()

    def print_waiting(self, wait: float = 0.0) -> None:
        try:
            batch = self.batches.get(timeout=wait) if wait else self.batches.get_nowait()
        except queue.Empty:
            return
        while True:
            for reply in batch.new:
                if self.out.json_mode:
                    self.out.json_line(reply.as_json())
                else:
                    self.out.line(reply_line(reply, self.zone))
            try:
                batch = self.batches.get_nowait()
            except queue.Empty:
                break
        self.out.out.flush()


def _backfill_in_background(
    profile: Profile, password: Secret, inbox: ReplyInbox, out: Output
) -> threading.Thread:
    from gwdesk.gateway.errors import GatewayError
    from gwdesk.gateway.service import GatewayService

    async def run() -> str:
        async with GatewayService(profile, password) as service:
            start = suggested_start(inbox.store, datetime.now(UTC))
            result = await backfill(service, inbox, start)
        return (
            f"backfill since {start.astimezone(profile.zone):%Y-%m-%d %H:%M}: "
            f"{result.fetched} at the gateway, {result.added} were missing"
        )

    def target() -> None:
        try:
            out.note(asyncio.run(run()))
        except GatewayError as exc:
            out.note(f"backfill failed: {exc.message}")
        except InboxClosed:
            return  # stopped meanwhile
        except Exception as exc:  # a note, never a traceback over the reply lines
            out.note(f"backfill failed: {type(exc).__name__}: {exc}")

    thread = threading.Thread(target=target, name="gwdesk-backfill", daemon=True)
    thread.start()
    return thread


def _gateway(args: argparse.Namespace, out: Output) -> tuple[Profile | None, Secret | None]:
    if not (args.profile or args.base_url):
        return None, None
    profile = resolve_profile(args)
    try:
        return profile, resolve_password(profile, bool(args.profile), out)
    except UsageError as exc:
        out.note(f"{exc} No backfill, scheduled sends or automatic replies; listening only.")
        return profile, None


class StopOnSignal:
    """Ctrl+C (SIGINT) and SIGTERM set `stop`, so shutdown takes one orderly path (the
    replies already acknowledged are printed, the listener and the store closed); a
    second one ends the process at once, as that signal ends any program (what was
    stored stays stored).

    Python only turns SIGINT into KeyboardInterrupt when it did not start with SIGINT
    ignored, and a background job of a script starts so: the listener then ignored
    Ctrl+C and `kill -INT` alike. The handler is installed whatever was inherited (as
    Go's signal.Notify does); the previous handlers come back on exit.
    """

    SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self._previous: dict[int, SignalHandler] = {}

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if not self.stop.is_set():
            self.stop.set()
            return
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)


def _open_store(args: argparse.Namespace, profile: Profile | None, out: Output) -> LocalStore:
    """The store replies go into: the profile's (its team's server when it names one, or
    `--store`), else the command line's own file or, with `--store` alone, the team's
    server (replies stored, but with no gateway account a STOP changes no list)."""
    if profile is not None:
        # The account's store: keyword replies change that account's opt-out list.
        return open_store_of(profile, operator=RECEIVER)
    out.note(
        "no gateway named (--profile, or --base-url and --username): replies are "
        "stored, but a STOP changes no account's opt-out list"
    )
    if not args.store:
        return open_local(store_path(INLINE_NAME))
    from gwdesk.domain.profile import check_store_url
    from gwdesk.store.postgres import PostgresDatabase
    from gwdesk.store.shared import ServerData

    try:
        url = check_store_url(args.store)
    except ValueError as exc:
        raise UsageError(f"The store address: {exc}.") from None
    server = ServerData(
        PostgresDatabase(url, store_password(None), application="gwdesk listen", operator=RECEIVER)
    )
    try:
        return open_local(store_path(INLINE_NAME), shared=server)
    except BaseException:
        server.close()
        raise


def _follow_rules(local: LocalStore) -> ChangeFeed | None:
    """On a team's server the receiver is what applies STOP and START, so it applies the
    keywords any desk saves from the next reply on (and after every reconnection): the
    change feed says when the team's settings changed. None for a one-desk file."""
    server: Any = server_of(local.shared)
    if server is None or local.account is None:
        return None

    def changed(tables: frozenset[str]) -> None:
        if RESYNC in tables or "settings" in tables:
            try:
                local.apply_optout_keywords()
            except StoreError as exc:  # kept as they were; the next change tries again
                log.warning("the team's opt-out keywords were not read again: %s", exc)

    return ChangeFeed(server.connect, changed).start()


def _listen(args: argparse.Namespace, out: Output, stop: threading.Event) -> int:
    profile, password = _gateway(args, out)
    zone = profile.zone if profile else zone_named(args.timezone or DEFAULT_TIMEZONE)
    printer = _Printer(out, zone)
    local = _open_store(args, profile, out)
    store = local.replies
    rules = _follow_rules(local)
    sender: threading.Thread | None = None
    keyword_rules: threading.Thread | None = None
    try:
        with ReplyInbox(store) as inbox:
            if not args.quiet:
                inbox.subscribe(printer.batches.put)
            keyword_rules = rules_in_background(
                local, inbox, RECEIVER, stop, out, profile=profile, password=password
            )
            listener = ReplyListener(
                inbox,
                zone,
                host=args.host,
                port=args.port,
                public_host=args.public_host,
                public_url=args.public_url,
            )
            info = listener.start()
            try:
                # Notes first: whoever has read the template line has seen them too.
                out.note(
                    f"listening on {info.address} for replies (keyword forwards: "
                    f"{info.template.base_url}); times in {zone.key}; Ctrl+C stops"
                )
                if info.warning:
                    out.note(f"warning: {info.warning}")
                out.line(info.template.render())
                out.out.flush()
                if local.team:
                    # Team consoles give the gateway this receiver's ReplyPath.
                    try:
                        route = team_route(info.template)
                    except TemplateError as exc:
                        raise UsageError(f"The ReplyPath: {exc}.") from None
                    local.settings.set(TEAM_REPLY_PATH, route.render())
                if profile is not None and password is not None and not stop.is_set():
                    if not args.no_backfill:
                        _backfill_in_background(profile, password, inbox, out)
                    sender = serve_in_background(profile, password, local, RECEIVER, stop, out)
                while not stop.is_set():
                    printer.print_waiting(POLL)
            finally:
                stop.set()
                if sender is not None:  # it uses the store: done before the store closes
                    sender.join(SENDER_STOP)
                listener.stop()
        printer.print_waiting()
    finally:
        stop.set()
        if keyword_rules is not None:  # it uses the store too
            keyword_rules.join(SENDER_STOP)
        if rules is not None:
            rules.close()
        local.close()
    out.note("stopped")
    return EXIT_OK


def run_listen(args: argparse.Namespace) -> int:
    out = Output(args.json)
    try:
        with StopOnSignal(threading.Event()) as signals:
            return _listen(args, out, signals.stop)
    except UsageError as exc:
        out.failure("usage", str(exc))
    except PortInUseError as exc:
        out.failure("port_in_use", str(exc), port=exc.port, suggestion=exc.suggestion)
    except (ListenerError, StoreError) as exc:
        out.failure("listener", str(exc))
    except BrokenPipeError:
        return EXIT_OK  # whoever read the output has gone
    except KeyboardInterrupt:
        out.note("interrupted")
        return EXIT_INTERRUPTED
    return EXIT_USAGE


def register_listen(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "run the reply listener headless; first line: its ReplyPath, then one line a reply"
    p = sub.add_parser("listen", parents=[common], help=text, description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; any other is reachable from other machines)",
    )
    p.add_argument(
        "--port",
        type=_port,
        metavar="N",
        help="port (default: the profile's last one, else 8642; 0: any free port)",
    )
    p.add_argument(
        "--public-host", metavar="NAME", help="host name to put in the ReplyPath (default: --host)"
    )
    p.add_argument(
        "--public-url",
        type=_public_url,
        metavar="URL",
        help="the address the gateway reaches, when a reverse proxy is in front "
        "(https://replies.example.org): its scheme, host and port go in the ReplyPath",
    )
    p.add_argument(
        "--no-backfill", action="store_true", help="do not fetch replies missed while down"
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="print the ReplyPath and notes only, not each reply (a service's journal)",
    )
    p.set_defaults(run=run_listen)


COMMANDS: Final[Sequence[Registrar]] = (register_listen,)
