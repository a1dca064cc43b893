"""`gwdesk COMMAND`: the gateway's operations as subcommands (`gwdesk.launcher` opens the
console when there is no command).

Subcommands are registered by small functions (`COMMANDS`), each adding its own
parser with the shared gateway options and a handler; a new family of commands
is one more registrar. A gateway is a saved profile (`--profile NAME`) or given
inline (`--base-url`, `--username`, ...); the password comes from the environment
variable GWDESK_PASSWORD or, for a saved profile, the system keyring: never from
an argument, where other users of the machine could read it. Every send goes
through the profile's outbox and the application core (`profile_sending`), as the
console's do, into the same store file.

Exit status: 0 success; 1 the gateway refused or failed; 2 usage or set-up problem;
3 authentication refused; 4 a send whose outcome is unknown (check before resending);
5 a send that was lodged only in part.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, NoReturn, TextIO, TypeAlias, cast

from gwdesk import __version__
from gwdesk.domain.terminal import terminal_json, terminal_safe

if TYPE_CHECKING:
    from gwdesk.app.sending import Sending
    from gwdesk.domain.models import Message, Secret
    from gwdesk.domain.profile import Profile
    from gwdesk.gateway.service import GatewayService
    from gwdesk.store.local import LocalStore

PASSWORD_ENV: Final = "GWDESK_PASSWORD"  # noqa: S105 - a variable name
STORE_PASSWORD_ENV: Final = "GWDESK_STORE_PASSWORD"  # noqa: S105 - a variable name
EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_AUTH: Final = 3
EXIT_AMBIGUOUS: Final = 4
EXIT_PARTIAL: Final = 5

Handler = Callable[[argparse.Namespace, "GatewayService", "Output"], Awaitable[int]]
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
Registrar = Callable[[SubParsers, argparse.ArgumentParser], None]


class UsageError(Exception):
    """A problem with how gwdesk was called or set up (exit status 2)."""


class Output:
    """Where results and errors go: lines for people, one JSON document with `--json`.

    Every line passes `terminal_safe` here, once: replies, the gateway's messages,
    file names and CSV cells are shown, never obeyed by the terminal. JSON is
    `terminal_json`: exactly the data, escaped where a terminal would act on it.
    """

    def __init__(
        self, json_mode: bool, out: TextIO | None = None, err: TextIO | None = None
    ) -> None:
        """`out`, `err`: the process's streams as they are when the command runs."""
        self.json_mode = json_mode
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def line(self, text: str) -> None:
        """One line for people on stdout."""
        print(terminal_safe(text), file=self.out)

    def json_line(self, data: object) -> None:
        """One JSON document on one line of stdout."""
        print(terminal_json(data), file=self.out)

    def result(self, data: object, lines: Sequence[str]) -> None:
        if self.json_mode:
            self.json_line(data)
        else:
            for line in lines:
                self.line(line)

    def note(self, line: str) -> None:
        """Something the operator should know that is not the result (stderr)."""
        print(f"gwdesk: {terminal_safe(line)}", file=self.err)

    def failure(self, kind: str, message: str, **extra: object) -> None:
        self.note(message)
        if self.json_mode:
            self.json_line({"ok": False, "error": {"type": kind, "message": message, **extra}})


class Parser(argparse.ArgumentParser):
    """argparse, with its error lines (which quote what was given) made terminal-safe, and
    a command's positionals and options taken in any order (`optouts add --reason "…"
    0412345678` as well as `optouts add 0412345678 --reason "…"`): argparse alone gives an
    optional positional its default when an option comes first, and then refuses the
    number as unrecognised."""

    _intermixing = False

    def error(self, message: str) -> NoReturn:
        super().error(terminal_safe(message))

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # The top parser chooses the command (sub-parsers cannot be intermixed); each
        # command's parser reads its arguments intermixed, which calls back here once.
        if self._subparsers is not None or self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


class _SafeLogFormatter(logging.Formatter):
    def formatMessage(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().formatMessage(record))


def log_to_stderr(verbose: bool) -> None:
    """Library log lines on stderr, terminal-safe like every other line: warnings always
    (as Python's last-resort handler would print them), from INFO on with `-v`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_SafeLogFormatter("%(name)s: %(message)s" if verbose else "%(message)s"))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler])
    if not verbose:  # its retries repeat the one line the command ends with, six times over
        logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


def common_options() -> argparse.ArgumentParser:
    """Options every gateway command takes (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_argument_group("gateway (a saved profile, or inline)")
    where.add_argument("--profile", metavar="NAME", help="a saved profile")
    where.add_argument(
        "--base-url", metavar="URL", help="REST base URL (https, or http on localhost)"
    )
    where.add_argument(
        "--lodge-url",
        "--legacy-url",
        dest="lodge_url",
        metavar="URL",
        help="Lodge service address (…/Lodge.asmx)",
    )
    where.add_argument("--namespace", metavar="NS", help="Lodge SOAP namespace")
    where.add_argument("--username", metavar="USER")
    where.add_argument("--auth", choices=("oauth", "basic"), help="default: oauth")
    where.add_argument("--region", metavar="CC", help="region of national numbers (default AU)")
    where.add_argument("--timezone", metavar="TZ", help="the gateway account's time zone")
    where.add_argument("--ca-bundle", metavar="PEM", help="extra trusted CAs for TLS")
    where.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="read time-out (default 30)"
    )
    shared = common.add_argument_group("shared store")
    shared.add_argument(
        "--store",
        metavar="postgresql://…",
        help="the team's PostgreSQL store, instead of the profile's (no password in it: "
        f"{STORE_PASSWORD_ENV}, the keyring, PGPASSWORD or ~/.pgpass)",
    )
    common.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    common.add_argument("-v", "--verbose", action="store_true", help="log requests on stderr")
    return common


def subcommand(
    sub: SubParsers, name: str, common: argparse.ArgumentParser, help: str
) -> argparse.ArgumentParser:
    """A subcommand's parser, with the shared gateway options."""
    return sub.add_parser(name, parents=[common], help=help, description=help)


def moment(text: str) -> datetime:
    """An ISO 8601 time (an argument type); one without an offset is this machine's local time."""
    try:
        found = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time such as 2025-01-31T09:30:00+11:00: {text!r}"
        ) from None
    return found if found.tzinfo is not None else found.astimezone()


def message_json(message: Message) -> dict[str, Any]:
    """A gateway message as JSON, under the gateway's own field names."""
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


#: Modules whose `COMMANDS` (a sequence of registrars) make up the subcommands, in order.
#: A new family of commands (the Lodge `mms`, `fax`, `wap`) is one more module here.
COMMAND_MODULES: Final = (
    "gwdesk.cli.send",
    "gwdesk.cli.lookup",
    "gwdesk.cli.lodge",
    "gwdesk.cli.listen",
    "gwdesk.cli.replies",
    "gwdesk.cli.outbox",
    "gwdesk.cli.report",
    "gwdesk.cli.scheduled",
    "gwdesk.cli.optouts",
    "gwdesk.cli.templates",
    "gwdesk.cli.contacts",
    "gwdesk.cli.conversations",
    "gwdesk.cli.rules",
    "gwdesk.cli.team",
)


#: Each command's name -> the module of `COMMAND_MODULES` that registers it, so a command
#: imports only its own module: building every command's parser imported all of them (the
#: send flows, the listener's aiohttp), a second of CPU before `gwdesk team status` could
#: even refuse its address. A test keeps this table and the modules in step.
COMMAND_HOMES: Final = {
    "send": "gwdesk.cli.send",
    **dict.fromkeys(("balance", "logs", "status"), "gwdesk.cli.lookup"),
    **dict.fromkeys(("fax", "legacy-status", "lodge-status", "mms", "wap"), "gwdesk.cli.lodge"),
    "listen": "gwdesk.cli.listen",
    "replies": "gwdesk.cli.replies",
    "outbox": "gwdesk.cli.outbox",
    "report": "gwdesk.cli.report",
    "scheduled": "gwdesk.cli.scheduled",
    "optouts": "gwdesk.cli.optouts",
    "templates": "gwdesk.cli.templates",
    "contacts": "gwdesk.cli.contacts",
    "conversations": "gwdesk.cli.conversations",
    "rules": "gwdesk.cli.rules",
    "team": "gwdesk.cli.team",
}


def _registrars(command: str | None = None) -> list[Registrar]:
    """Every command's registrars, or only those of `command`'s module when it is known
    (help, a mistyped command and `--version` still see every command)."""
    home = COMMAND_HOMES.get(command) if command is not None else None
    found: list[Registrar] = []
    for name in (home,) if home is not None else COMMAND_MODULES:
        found.extend(importlib.import_module(name).COMMANDS)
    return found


def build_parser(
    registrars: Sequence[Registrar] | None = None, *, command: str | None = None
) -> argparse.ArgumentParser:
    parser = Parser(
        prog="gwdesk",
        description="Operator console for the messaging gateway. "
        "Without a command it opens the console "
        "(gwdesk [--profile NAME | --sandbox]).",
        epilog=__doc__.split("\n\n")[-1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gwdesk {__version__}")
    # Subcommands are `Parser`s too (argparse makes them of the parent's class).
    sub = cast(SubParsers, parser.add_subparsers(dest="command", metavar="COMMAND"))
    common = common_options()
    for register in registrars if registrars is not None else _registrars(command):
        register(sub, common)
    return parser


def resolve_profile(args: argparse.Namespace) -> Profile:
    """The profile named by `--profile`, with inline options laid over it, or an inline one."""
    import pydantic

    from gwdesk.app.profile_data import INLINE_NAME
    from gwdesk.domain.profile import Profile
    from gwdesk.profiles import ProfileStore, SettingsError

    inline = {
        "rest_url": args.base_url,
        "lodge_url": args.lodge_url,
        "soap_namespace": args.namespace,
        "username": args.username,
        "auth": args.auth,
        "region": args.region,
        "timezone": args.timezone,
        "ca_bundle": args.ca_bundle,
        "lodge_port": getattr(args, "lodge_port", None),  # a Lodge command's --port
        "store_url": getattr(args, "store", None),
    }
    given = {k: v for k, v in inline.items() if v is not None}
    if args.profile:
        try:
            base = ProfileStore().get(args.profile).model_dump()
        except SettingsError as exc:
            raise UsageError(str(exc)) from None
    else:
        missing = [
            f"--{k}" for k in ("base-url", "username") if getattr(args, k.replace("-", "_")) is None
        ]
        if missing:
            raise UsageError(
                f"Name a gateway: --profile NAME, or {' and '.join(missing)} (password in {PASSWORD_ENV})."
            )
        base = {"name": INLINE_NAME}
    try:
        return Profile.model_validate({**base, **given})
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = str(first["loc"][0]) if first["loc"] else "profile"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise UsageError(f"Gateway setting {where}: {message}.") from None


def resolve_password(profile: Profile, from_store: bool, out: Output) -> Secret:
    from gwdesk.domain.models import Secret
    from gwdesk.profiles import KeyringUnavailable, PasswordVault

    stored: Secret | None

    value = os.environ.get(PASSWORD_ENV)
    if value:
        return Secret(value)
    if from_store:
        try:
            stored = PasswordVault().get(profile)
        except KeyringUnavailable as exc:
            out.note(str(exc))
            stored = None
        if stored is not None:
            return stored
    raise UsageError(f"No password: set the environment variable {PASSWORD_ENV}.")


@contextlib.asynccontextmanager
async def profile_sending(service: GatewayService) -> AsyncIterator[Sending]:
    """The sends of a command: the application core over the profile's store, the one
    the console uses (`gwdesk.app.profile_data`). Its history rows are written before
    the store closes. Nothing is sent when the store cannot be opened."""
    async with profile_store_sending(service) as (_store, sending):
        yield sending


def store_password(profile: Profile | None) -> str | None:
    """The team store's password: the environment's, else the keyring's for this profile
    and role, else None (libpq then reads `PGPASSWORD` or `~/.pgpass`). Never an argument:
    a command line is visible to every user of the machine."""
    from gwdesk.profiles import KeyringUnavailable, PasswordVault

    value = os.environ.get(STORE_PASSWORD_ENV)
    if value:
        return value
    if profile is None or profile.store_url is None:
        return None
    try:
        kept = PasswordVault().get_store(profile)
    except KeyringUnavailable:
        return None
    return kept.reveal() if kept is not None else None


def store_id(listed_as: str) -> Callable[[str], int]:
    """An argument type: a row's id as `listed_as` shows it (ASCII digits a store can hold:
    no other script's digits, no sign, nothing past 64 bits)."""

    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) < 2**63:
            raise argparse.ArgumentTypeError(f"{listed_as}, not {text[:40]!r}")
        return int(text)

    return parse


def open_store_of(profile: Profile, *, operator: str | None = None) -> LocalStore:
    """The profile's store (its file, and its team's server when it names one). Blocking.
    `operator`: who this command is to the record, when not the profile's operator."""
    from dataclasses import replace

    from gwdesk.app.profile_data import locate, open_profile

    data = locate(profile)
    if operator is not None:
        data = replace(data, operator=operator)
    return open_profile(data, store_password(profile))


@contextlib.asynccontextmanager
async def profile_store_sending(
    service: GatewayService, *, sending_hours: bool = True
) -> AsyncIterator[tuple[LocalStore, Sending]]:
    """`profile_sending`, with the store it works on (its templates and contacts);
    `sending_hours` False: this command's sends ignore the office's sending hours
    (`--quiet-hours ignore`)."""
    from gwdesk.app.profile_data import locate, open_profile, sending_for
    from gwdesk.store.database import StoreError

    data = locate(service.profile)
    password = store_password(service.profile)
    try:
        store = await asyncio.to_thread(open_profile, data, password)
    except StoreError as exc:
        raise UsageError(
            f"{exc} Every send is recorded in its outbox first: gwdesk sends nothing without it."
        ) from None
    try:
        sending = sending_for(service, store, data)
        if not sending_hours:
            sending.hours_source = None
        yield store, sending
    finally:
        await asyncio.to_thread(store.close)


def not_opened(out: Output, exc: Exception, what: str = "The profile's store") -> int:
    """Say why what a command works on could not be opened, and its exit code: a usage
    problem (no such profile, a bad address) exits 2, a store or file that cannot be
    used 1."""
    if isinstance(exc, UsageError):
        out.failure("usage", str(exc))
        return EXIT_USAGE
    out.failure("store", f"{what} cannot be opened: {exc}")
    return EXIT_FAILED


StoreWork = Callable[[argparse.Namespace, "Profile", "LocalStore", "Output"], int]


def run_on_store(args: argparse.Namespace) -> int:
    """Run a command that needs the profile's store only (templates, contacts): its
    `store_work`, with no password and no gateway. Usage problems exit 2, a store or
    file that cannot be used 1."""
    work: StoreWork = args.store_work
    from gwdesk.store.database import StoreError

    out = Output(args.json)
    try:
        profile = resolve_profile(args)
        store = open_store_of(profile)
    except (UsageError, StoreError, OSError) as exc:
        return not_opened(out, exc)
    try:
        return work(args, profile, store, out)
    except UsageError as exc:
        out.failure("usage", str(exc))
        return EXIT_USAGE
    except (StoreError, OSError, ValueError) as exc:
        out.failure("store", str(exc))
        return EXIT_FAILED
    finally:
        store.close()


def store_command(
    sub: SubParsers,
    common: argparse.ArgumentParser,
    name: str,
    doc: str | None,
    help: str,
    actions: Sequence[str],
    work: StoreWork,
) -> argparse.ArgumentParser:
    """A command on the profile's store only (`run_on_store`): its parser, described by
    its module's first paragraph (`doc`), whose first word is one of `actions` (the
    first when it is left out); the caller adds the rest of its arguments."""
    p = sub.add_parser(name, parents=[common], help=help, description=(doc or "").split("\n\n")[0])
    p.add_argument("action", nargs="?", default=actions[0], choices=actions)
    p.set_defaults(run=run_on_store, store_work=work)
    return p


async def _run(args: argparse.Namespace, out: Output) -> int:
    from gwdesk.gateway.http import HttpSettings
    from gwdesk.gateway.service import GatewayService

    profile = resolve_profile(args)
    password = resolve_password(profile, bool(args.profile), out)
    http = HttpSettings(read=args.timeout) if args.timeout else HttpSettings()
    handler: Handler = args.handler
    async with GatewayService(profile, password, http=http) as service:
        return await handler(args, service, out)


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed gateway command; every failure becomes a message and an exit status."""
    from gwdesk.gateway.errors import AmbiguousSendError, AuthenticationError, GatewayError

    out = Output(args.json)
    try:
        return asyncio.run(_run(args, out))
    except UsageError as exc:
        out.failure("usage", str(exc))
        return EXIT_USAGE
    except AuthenticationError as exc:
        out.failure(exc.kind, exc.message, status=exc.status)
        return EXIT_AUTH
    except AmbiguousSendError as exc:
        out.failure(exc.kind, exc.message, external_system_id=exc.external_system_id)
        return EXIT_AMBIGUOUS
    except GatewayError as exc:
        field = getattr(exc, "field", None)
        out.failure(exc.kind, exc.message, status=exc.status, field=field)
        return EXIT_FAILED
    except KeyboardInterrupt:
        out.note("interrupted")
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (`gwdesk.launcher` decides whether there is one)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(command=arguments[0] if arguments else None)
    if not arguments:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(arguments)
    log_to_stderr(bool(getattr(args, "verbose", False)))
    standalone = getattr(args, "run", None)
    if standalone is not None:
        # A command that needs no gateway session up front (`listen`) runs itself.
        code: int = standalone(args)
        return code
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return run_command(args)
