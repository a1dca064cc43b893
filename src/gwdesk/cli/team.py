"""`gwdesk team`: setting up and looking at a team's shared store on PostgreSQL.

    gwdesk team init postgresql://owner@host/db [--grant ROLE]   create or upgrade the schema
    gwdesk team status [postgresql://role@host/db | --profile NAME]   schema and live consoles

`init` is run once by whoever owns the database (and again after updating gwdesk): it
creates or upgrades the tables under an advisory lock, then, with `--grant`, gives the
consoles' role what it needs and no more (connect, and read and write the rows; no
schema changes), and checks that role can. `status` lists the consoles heard from in
the last half minute and the schema's version. The password comes from the environment
(`GWDESK_STORE_PASSWORD`, or libpq's own `PGPASSWORD` and `~/.pgpass`) or, for a saved
profile, the keyring; never from an argument.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, Final

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

ROLE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


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
    from gwdesk.settings import ProfileStore, SettingsError

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
        if args.action == "init":
            return _init(args, out)
        return _status(args, out)
    except UsageError as exc:
        out.failure("usage", str(exc))
        return EXIT_USAGE
    except StoreError as exc:
        out.failure("store", str(exc))
        return EXIT_FAILED


def _init(args: argparse.Namespace, out: Output) -> int:
    from gwdesk.store.postgres import PostgresDatabase, grant_console_role, privilege_problems

    if not args.url:
        raise UsageError("Name the store: gwdesk team init postgresql://owner@host/database.")
    url, password = store_url_of(args)
    if args.grant and not ROLE.fullmatch(args.grant):
        raise UsageError(f"--grant {args.grant[:40]!r}: not a role name.")
    database = PostgresDatabase(url, password, application="gwdesk team init")
    try:
        version = database.version()
        lines = [f"schema version {version} at {database.location}"]
        data: dict[str, Any] = {"ok": True, "schema_version": version, "store": database.location}
        if args.grant:
            grant_console_role(database, args.grant)
            missing = privilege_problems(database, args.grant)
            data["granted"] = args.grant
            data["missing"] = missing
            if missing:
                lines.append(
                    f"role {args.grant} is not as a console's should be: {', '.join(missing)}"
                )
                out.result({**data, "ok": False}, lines)
                return EXIT_FAILED
            lines.append(
                f"role {args.grant} may read and write the shared tables and append to the "
                "audit log and the opt-out history, nothing more"
            )
        out.result(data, lines)
        return EXIT_OK
    finally:
        database.close()


def _status(args: argparse.Namespace, out: Output) -> int:
    from gwdesk.store.postgres import PostgresDatabase
    from gwdesk.store.team import Presence

    url, password = store_url_of(args)
    database = PostgresDatabase(url, password, application="gwdesk team status", upgrade=False)
    try:
        version = database.version()
        consoles = Presence(database).live()
    finally:
        database.close()
    data = {
        "ok": True,
        "store": database.location,
        "schema_version": version,
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
    }
    lines = [f"schema version {version} at {database.location}"]
    lines += [
        f"{c.operator} on {c.host} (gwdesk {c.version}), since {c.started_at:%Y-%m-%d %H:%M} UTC"
        for c in consoles
    ]
    lines.append(f"{len(consoles)} console(s) connected")
    out.result(data, lines)
    return EXIT_OK


def register_team(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "a team's shared store on PostgreSQL: init (create or upgrade), status"
    p = sub.add_parser("team", help=text, description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=("init", "status"))
    p.add_argument("url", nargs="?", metavar="postgresql://…", help="the store (no password)")
    p.add_argument("--profile", metavar="NAME", help="status: the store of a saved profile")
    p.add_argument("--grant", metavar="ROLE", help="init: let the consoles' role use the tables")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(run=run_team)


COMMANDS: Final[tuple[Registrar, ...]] = (register_team,)
