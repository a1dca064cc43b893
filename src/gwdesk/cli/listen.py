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

As a service (packaging/systemd/gwdesk-receiver.service) it tells systemd when it is
ready and pings its watchdog while it works (`systemd_notify.py`, `receiver_health.py`),
answers `GET /healthz`, serves Prometheus metrics with `--metrics` on a port of its
own, and logs JSON with `--log-format json` (`receiver_log.py`). A stop takes 2 s at
most from any state (`stop_signal.py`): calls during it get 503.
"""

from __future__ import annotations

import argparse
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final
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
from gwdesk.cli.receiver_backfill import Backfill
from gwdesk.cli.receiver_health import ReceiverWatch
from gwdesk.cli.receiver_log import LOG_FORMATS, EventOutput, event_output
from gwdesk.cli.receiver_rules import rules_in_background
from gwdesk.cli.receiver_sends import ScheduledSender
from gwdesk.cli.stop_signal import StopDeadline, StopOnSignal
from gwdesk.cli.systemd_notify import SystemdNotifier
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import DEFAULT_TIMEZONE, Profile
from gwdesk.domain.settings import TEAM_REPLY_PATH
from gwdesk.replies import (
    ListenerError,
    PortInUseError,
    ReplyBatch,
    ReplyInbox,
    ReplyListener,
)
from gwdesk.replies.endpoint import ListenerCounts
from gwdesk.replies.health import HealthCheck
from gwdesk.replies.listener import LOOPBACK, ListenerInfo, MetricsPage
from gwdesk.replies.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from gwdesk.replies.metrics import ReceiverMetrics
from gwdesk.replies.template import TemplateError, public_address, team_route
from gwdesk.store.changes import RESYNC, ChangeFeed
from gwdesk.store.database import StoreError
from gwdesk.store.local import LocalStore, open_local
from gwdesk.store.replies import StoredReply
from gwdesk.store.shared import server_of

log = logging.getLogger("gwdesk.cli.listen")

TICK: Final = 60.0
"""Seconds between the main thread's looks at the receiver without a watchdog to ping."""
RECEIVER: Final = "the reply receiver"
"""Who the receiver is to the record (a login of its own is named by the server)."""
EXIT_INTERRUPTED: Final = 130
STOP_WITHIN: Final = 1.5
"""Seconds a stop takes at most, from the signal (supervisors wait 2 s and more, then kill)."""
REQUEST_GRACE: Final = 0.5
WRITER_WAIT: Final = 0.3
"""Seconds the stop waits for the inbox's writer once no request waits for it (what it
still holds is unacknowledged: fetched again by the next backfill, or retried)."""
"""Seconds requests in progress get to finish when the receiver stops (new ones get 503)."""


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
    """Prints stored replies on a thread of its own (the feed delivers them on the writer
    thread, which must not wait for stdout; the main thread waits for signals)."""

    def __init__(self, out: Output, zone: ZoneInfo) -> None:
        self.out = out
        self.zone = zone
        self.batches: queue.SimpleQueue[ReplyBatch | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="gwdesk-printer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Print what was stored until now, then stop."""
        self.batches.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while (batch := self.batches.get()) is not None:
                for reply in batch.new:
                    if self.out.json_mode:
                        self.out.json_line(reply.as_json())
                    else:
                        self.out.line(reply_line(reply, self.zone))
                if self.batches.empty():
                    self.out.out.flush()
        except (BrokenPipeError, ValueError):
            return  # whoever read the output has gone (or it was closed)


def _gateway(args: argparse.Namespace, out: Output) -> tuple[Profile | None, Secret | None]:
    if not (args.profile or args.base_url):
        return None, None
    profile = resolve_profile(args)
    try:
        return profile, resolve_password(profile, bool(args.profile), out)
    except UsageError as exc:
        out.note(f"{exc} No backfill, scheduled sends or automatic replies; listening only.")
        return profile, None


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


def _follow_rules(local: LocalStore, stop: threading.Event) -> ChangeFeed | None:
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
                if not stop.is_set():  # stopping: the store closed under it, nothing to say
                    log.warning("the team's opt-out keywords were not read again: %s", exc)

    return ChangeFeed(server.connect, changed).start()


def _metrics_page(args: argparse.Namespace, metrics: ReceiverMetrics | None) -> MetricsPage | None:
    if metrics is None:
        return None
    host, port = args.metrics
    return MetricsPage(host, port, metrics.page, METRICS_CONTENT_TYPE)


def _listen(
    args: argparse.Namespace, out: EventOutput, signals: StopOnSignal, notifier: SystemdNotifier
) -> int:
    stop = signals.stop
    deadline = StopDeadline(STOP_WITHIN, lambda: _stopped_late(out))
    signals.on_stop(deadline.start)  # from the signal on, whatever it is doing then
    profile, password = _gateway(args, out)
    zone = profile.zone if profile else zone_named(args.timezone or DEFAULT_TIMEZONE)
    printer = _Printer(out, zone)
    local = _open_store(args, profile, out)
    store = local.replies
    rules = _follow_rules(local, stop)
    sender: ScheduledSender | None = None
    backfilling: Backfill | None = None
    keyword_rules: threading.Thread | None = None
    inbox = ReplyInbox(store)
    try:
        with inbox:
            if not args.quiet:
                inbox.subscribe(printer.batches.put)
            counts = ListenerCounts()
            metrics = ReceiverMetrics(inbox, counts) if args.metrics else None
            keyword_rules = rules_in_background(
                local, inbox, RECEIVER, stop, out, profile=profile, password=password,
                counted=metrics.rule_ran if metrics is not None else None,
            )  # fmt: skip
            health = HealthCheck(inbox)
            listener = ReplyListener(
                inbox,
                zone,
                host=args.host,
                port=args.port,
                public_host=args.public_host,
                public_url=args.public_url,
                counts=counts,
                health=health,
                metrics=_metrics_page(args, metrics),
            )
            info = listener.start()
            try:
                _said_listening(out, info, zone, args)
                if local.team:
                    # Team consoles give the gateway this receiver's ReplyPath.
                    try:
                        route = team_route(info.template)
                    except TemplateError as exc:
                        raise UsageError(f"The ReplyPath: {exc}.") from None
                    local.settings.set(TEAM_REPLY_PATH, route.render())
                out.line(info.template.render())  # ready: listening, and published
                out.out.flush()
                printer.start()  # the replies after the template line
                notifier.ready(f"listening on {info.address}")
                if profile is not None and password is not None and not stop.is_set():
                    if not args.no_backfill:
                        backfilling = Backfill(profile, password, inbox, out, metrics).start()
                    told = metrics.scheduled_sent if metrics is not None else None
                    sender = ScheduledSender(profile, password, local, RECEIVER, out, told)
                    sender.start()
                watch = ReceiverWatch(notifier, health, listener, _health_said(out))
                every = notifier.watchdog_every
                if every is not None:
                    watch.tick()
                while not signals.wait(every or TICK):
                    if every is not None:
                        watch.tick()
            finally:
                stop.set()
                notifier.stopping()
                deadline.start()
                listener.stop(grace=REQUEST_GRACE)
                if backfilling is not None:
                    backfilling.stop(deadline.left())
                if sender is not None:  # it uses the store: done before the store closes
                    sender.stop(deadline.left())
            # Every request was answered (or dropped, unacknowledged): what the writer still
            # holds is the backfill's, fetched again next time if the store is away now.
            inbox.close(min(deadline.left(), WRITER_WAIT))
        printer.close(deadline.left())  # every acknowledged reply was stored and published
    finally:
        stop.set()
        if keyword_rules is not None:  # it uses the store too
            keyword_rules.join(deadline.left())
        if rules is not None:
            rules.close(deadline.left())
        local.close()  # a writer still waiting on a server's pool fails now, unheard
    deadline.cancel()
    out.event("stopped", "stopped")
    return EXIT_OK


def _said_listening(
    out: EventOutput, info: ListenerInfo, zone: ZoneInfo, args: argparse.Namespace
) -> None:
    """Where it listens (never the ReplyPath's secret: that is stdout's first line)."""
    metrics = ""
    if info.metrics_port is not None:
        metrics = f"; metrics on http://{args.metrics[0]}:{info.metrics_port}/metrics"
    out.event(
        "listening",
        f"listening on {info.address} for replies (keyword forwards: the ReplyPath without "
        f"its query); times in {zone.key}{metrics}; Ctrl+C stops",
        address=info.address,
        metrics_port=info.metrics_port,
    )
    if info.warning:
        out.event("listening", f"warning: {info.warning}", level="warning")


def _health_said(out: EventOutput) -> Callable[[str], None]:
    def say(text: str) -> None:
        out.event("health", text, level="info" if text.endswith(": ok") else "warning")

    return say


def _stopped_late(out: Output) -> None:
    """The stop's last words when the store held it past its bound (`StopDeadline`)."""
    out.note(
        f"stopped after {STOP_WITHIN:g} s with work still waiting (the store did not answer); "
        "replies not acknowledged are left to the gateway's retries"
    )
    out.out.flush()
    out.err.flush()


def run_listen(args: argparse.Namespace) -> int:
    out = event_output(args.log_format, args.json)
    notifier = SystemdNotifier.from_environment()
    try:
        with StopOnSignal(threading.Event()) as signals:
            return _listen(args, out, signals, notifier)
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
    finally:
        notifier.close()
    return EXIT_USAGE


def _metrics_address(text: str) -> tuple[str, int]:
    """`--metrics`: PORT (on 127.0.0.1) or HOST:PORT."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or LOOPBACK
    if not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"--metrics takes PORT or HOST:PORT, not {text[:60]!r}")
    return host, int(port)


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
        "--metrics",
        type=_metrics_address,
        metavar="[HOST:]PORT",
        help="serve Prometheus metrics at /metrics on this port (host 127.0.0.1 unless "
        "given), never on the reply port; off by default",
    )
    p.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="text",
        help="stderr as lines for people (text, the default) or one JSON object a line",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="print the ReplyPath and notes only, not each reply (a service's journal)",
    )
    p.set_defaults(run=run_listen)


COMMANDS: Final[Sequence[Registrar]] = (register_listen,)
