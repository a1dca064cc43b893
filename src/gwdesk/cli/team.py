"""`gwdesk team`: setting up and looking at a team's shared store on PostgreSQL.

    gwdesk team init postgresql://owner@host/db [--grant ROLE]   create or upgrade the schema
    gwdesk team add-operator postgresql://owner@host/db LOGIN [--name NAME] [--receiver]
    gwdesk team remove-operator postgresql://owner@host/db LOGIN
    gwdesk team status [postgresql://role@host/db | --profile NAME]

`init`, `add-operator` and `remove-operator` are the database owner's (who needs the
CREATEROLE attribute). `init` creates or upgrades the tables under an advisory lock, makes
the office's two group roles and gives them exactly what a console and the reply
receiver need, takes back any right a login holds of its own, and checks the result;
`--grant ROLE` keeps a login that several desks share (an older install's) working
until each operator has one of their own. `add-operator` gives one operator (or, with
`--receiver`, the office's receiver) a login of their own: the record names everything
it does by `--name`, whatever a console says. `status` lists the operators, the
consoles heard from in the last half minute and the schema's version.

Passwords come from the environment, never from an argument: the owner's (or a
console's) in `GWDESK_STORE_PASSWORD` (or libpq's own `PGPASSWORD` and `~/.pgpass`;
a saved profile's from the keyring); a new login's in `GWDESK_OPERATOR_PASSWORD`, or
typed at a prompt. It reaches the server only as a SCRAM verifier.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import TYPE_CHECKING, Any, Final

from gwdesk.cli import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    store_password,
)

if TYPE_CHECKING:
    from gwdesk.store.postgres import PostgresDatabase

OPERATOR_PASSWORD_ENV: Final = "GWDESK_OPERATOR_PASSWORD"  # noqa: S105 - a variable's name
ACTIONS: Final = ("init", "add-operator", "remove-operator", "status")


def store_url_of(args: argparse.Namespace) -> tuple[str, str | None]:
    """The store's URL and password: the one named, or the profile's (`--profile`)."""
    from gwdesk.domain.profile import check_store_url

    if args.url:
        try:
            return check_store_url(args.url), store_password(None)
        except ValueError as exc:
            raise UsageError(f"The store address: {exc}.") from None
    if not args.profile:
        raise UsageError(
            "Name the store: gwdesk team status postgresql://role@host/db, or --profile."
        )
    from gwdesk.profiles import ProfileStore, SettingsError

    try:
        profile = ProfileStore().get(args.profile)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    if profile.store_url is None:
        raise UsageError(f"Profile {profile.name!r} keeps its data in its own file, not a server.")
    return profile.store_url, store_password(profile)


def run_team(args: argparse.Namespace) -> int:
    from gwdesk.store.database import StoreError

    out = Output(args.json)
    try:
        if args.action == "status":
            return _status(args, out)
        if not args.url:
            raise UsageError(
                f"Name the store: gwdesk team {args.action} postgresql://owner@host/db …"
            )
        database = _owners(args)
        try:
            if args.action == "init":
                return _init(args, out, database)
            if args.action == "add-operator":
                return _add(args, out, database)
            return _remove(args, out, database)
        finally:
            database.close()
    except UsageError as exc:
        out.failure("usage", str(exc))
        return EXIT_USAGE
    except StoreError as exc:
        out.failure("store", str(exc))
        return EXIT_FAILED


def _owners(args: argparse.Namespace) -> PostgresDatabase:
    from gwdesk.store.postgres import PostgresDatabase

    url, password = store_url_of(args)
    if args.action == "init" and args.grant:
        _login_named(args.grant)
    if args.action != "init":
        _login_named(args.login)
    # `init` upgrades the schema itself, in the same transaction as the roles it makes.
    return PostgresDatabase(
        url,
        password,
        application=f"gwdesk team {args.action}",
        operator="the database owner",
        upgrade=args.action != "init",
    )


def _login_named(name: str | None) -> str:
    from gwdesk.store.pg_roles import check_role_name

    if not name:
        raise UsageError("Name the operator's login: gwdesk team add-operator URL LOGIN.")
    try:
        return check_role_name(name)
    except ValueError as exc:
        raise UsageError(f"{exc}.") from None


def _init(args: argparse.Namespace, out: Output, database: PostgresDatabase) -> int:
    from gwdesk.store.pg_roles import prepare_team, privilege_problems

    prepared = prepare_team(database, shared=args.grant or None)
    problems = privilege_problems(database)
    groups = prepared.groups
    version = prepared.version
    data: dict[str, Any] = {
        "ok": not problems,
        "schema_version": version,
        "store": database.location,
        "groups": {"operators": groups.operators, "receivers": groups.receivers},
        "taken_back": list(prepared.taken_back),
        "shared": prepared.shared,
        "problems": problems,
    }
    lines = [
        f"schema version {version} at {database.location}",
        f"group roles: {groups.operators} (operators), {groups.receivers} (the reply receiver)",
    ]
    if prepared.taken_back:
        lines.append(
            "rights of their own taken back from: " + ", ".join(prepared.taken_back)
            + " (a login's rights come from its group: gwdesk team add-operator)"
        )  # fmt: skip
    if prepared.shared:
        lines.append(
            f"{prepared.shared} is kept as a login several desks share: the server cannot tell "
            "them apart, so the names they give are not verified; give each operator a login "
            "of their own (docs/team.md)"
        )
    if problems:
        lines.append("rights are not as they should be: " + ", ".join(problems))
        out.result(data, lines)
        return EXIT_FAILED
    lines.append(
        "the groups may read the record and add sends and opt-out changes to it, change "
        "settings only through the server's checks, and never write the audit log"
    )
    out.result(data, lines)
    return EXIT_OK


def _new_password(args: argparse.Namespace) -> str | None:
    """The new login's password: the environment's, else typed twice at a terminal."""
    if args.no_password:
        return None
    value = os.environ.get(OPERATOR_PASSWORD_ENV)
    if value:
        return value
    if not sys.stdin.isatty():
        raise UsageError(
            f"Give {args.login}'s password in {OPERATOR_PASSWORD_ENV} (or run this in a "
            "terminal to type it; --no-password for a login by certificate or peer)."
        )
    first = getpass.getpass(f"Password for {args.login}: ")
    if not first or getpass.getpass("Again: ") != first:
        raise UsageError("The two passwords were not the same (or empty): nothing was changed.")
    return first


def _add(args: argparse.Namespace, out: Output, database: PostgresDatabase) -> int:
    from gwdesk.domain.operator import operator_name
    from gwdesk.store.pg_roles import add_operator

    display = operator_name(args.name or args.login)
    added = add_operator(
        database, args.login, display, receiver=args.receiver, password=_new_password(args)
    )
    data = {"ok": True, "login": added.role, "name": added.display, "kind": added.kind}
    what = "the office's reply receiver" if args.receiver else "an operator"
    out.result(
        data, [f"{added.role} may now log in as {what}; the record names it {added.display}"]
    )
    return EXIT_OK


def _remove(args: argparse.Namespace, out: Output, database: PostgresDatabase) -> int:
    from gwdesk.store.pg_roles import remove_operator

    said = remove_operator(database, args.login)
    out.result({"ok": True, "login": args.login, "result": said}, [said])
    return EXIT_OK


def _status(args: argparse.Namespace, out: Output) -> int:
    from gwdesk.store.database import StoreError
    from gwdesk.store.pg_roles import operators
    from gwdesk.store.pg_schema import PG_MIGRATIONS
    from gwdesk.store.postgres import PostgresDatabase
    from gwdesk.store.team import Presence

    url, password = store_url_of(args)
    database = PostgresDatabase(url, password, application="gwdesk team status", upgrade=False)
    try:
        version = database.version()
        if version < len(PG_MIGRATIONS):
            raise StoreError(
                f"The shared store's schema is version {version}; this gwdesk needs "
                f"{len(PG_MIGRATIONS)}: whoever owns the database runs gwdesk team init."
            )
        me = database.whoami()
        team = [o for o in operators(database) if o.removed_at is None]
        presence = Presence(database)
        consoles = presence.live()
    finally:
        database.close()
    data = {
        "ok": True,
        "store": database.location,
        "schema_version": version,
        "you": {"login": me.role, "name": me.name, "verified": me.verified, "owner": me.owner},
        "operators": [{"login": o.role, "name": o.display, "kind": o.kind} for o in team],
        "consoles": [
            {
                "id": c.id,
                "operator": c.operator,
                "host": c.host,
                "since": c.started_at.isoformat(),
                "seen": c.seen_at.isoformat(),
                "version": c.version,
            }
            for c in consoles
        ],
        "unreadable_consoles": presence.unreadable.count,
    }
    lines = [f"schema version {version} at {database.location}"]
    if me.owner:
        lines.append(f"you are the database's owner, logged in as {me.role}")
    else:
        verified = "" if me.verified else " (a name the server cannot verify)"
        lines.append(f"you are {me.name}{verified}, logged in as {me.role}")
    lines += [f"{o.kind} {o.role}: {o.display}" for o in team]
    lines += [
        f"{o.role} is shared by several desks: the names they give are not verified "
        "(docs/team.md: one login per operator)"
        for o in team
        if o.kind == "shared"
    ]
    lines += [
        f"{c.operator} on {c.host} (gwdesk {c.version}), since {c.started_at:%Y-%m-%d %H:%M} UTC"
        for c in consoles
    ]
    if presence.unreadable.count:
        lines.append(f"{presence.unreadable.count} console row(s) could not be read")
    lines.append(f"{len(consoles)} console(s) connected")
    out.result(data, lines)
    return EXIT_OK


def register_team(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "a team's shared store on PostgreSQL: init, add-operator, remove-operator, status"
    p = sub.add_parser("team", help=text, description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("url", nargs="?", metavar="postgresql://…", help="the store (no password)")
    p.add_argument("login", nargs="?", metavar="LOGIN", help="add/remove-operator: the login")
    p.add_argument("--profile", metavar="NAME", help="status: the store of a saved profile")
    p.add_argument(
        "--grant",
        metavar="ROLE",
        help="init: keep ROLE, a login several desks share (an older install's), working",
    )
    p.add_argument("--name", metavar="NAME", help="add-operator: how the record names them")
    p.add_argument(
        "--receiver", action="store_true", help="add-operator: the office's reply receiver"
    )
    p.add_argument(
        "--no-password",
        action="store_true",
        help="add-operator: no password (a login by certificate or peer)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(run=run_team)


COMMANDS: Final[tuple[Registrar, ...]] = (register_team,)
