"""`gwdesk optouts`: the account's opt-out list from the command line.

    gwdesk optouts [list] [--search TEXT] [--all]       who opted out (newest first)
    gwdesk optouts add NUMBER --reason TEXT            opt a number out by hand
    gwdesk optouts remove NUMBER --reason TEXT         opt it back in (a reason is required)
    gwdesk optouts import FILE [--reason TEXT]         opt out every number of a CSV/text file
    gwdesk optouts export FILE [--all]                 write the list as CSV

An imported file's Reason (or Note, Comment, Why) column gives each number its own
reason; `--reason` (else the file's name) stands for the rows without one.

The list lives in the profile's store, beside its replies and outbox (`gwdesk listen`
with the same gateway options records the STOPs it receives there), so no password
is needed: only the profile (`--profile`, or `--base-url` and `--username`) that names
the gateway account. With `--json`, one JSON document on stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

from gwdesk.app.optout_editing import ChangeRefused, check_change
from gwdesk.app.optouts import export_file, import_file
from gwdesk.cli import EXIT_OK, Output, Registrar, SubParsers, UsageError, store_command
from gwdesk.domain.profile import Profile
from gwdesk.store.local import LocalStore

ACTIONS: Final = ("list", "add", "remove", "import", "export")
SHOWN: Final = 1000


def _json(optout: Any) -> dict[str, Any]:
    return {
        "number": optout.number,
        "opted_out": optout.opted_out,
        "since": optout.at.isoformat(),
        "how": optout.how.value,
        "by": optout.by,
        "keyword": optout.keyword,
        "reason": optout.reason,
    }


def _line(optout: Any) -> str:
    return f"{optout.number}  {optout.describe()}"


def optouts_work(args: argparse.Namespace, profile: Profile, store: LocalStore, out: Output) -> int:
    optouts = store.optouts
    action = args.action
    if action in ("add", "remove"):
        if not args.target:
            raise UsageError(f"Name the number: gwdesk optouts {action} NUMBER --reason TEXT.")
        try:  # the checks the console's dialog makes (`gwdesk.app.optout_editing`)
            change = check_change(
                args.target, args.reason or "", opt_out=action == "add", region=profile.region
            )
        except ChangeRefused as exc:
            if exc.field == "reason":
                raise UsageError(
                    "Say why with --reason: it is kept in the number's history."
                ) from None
            raise UsageError(f"{args.target[:40]!r}: {exc.message}") from None
        now = optouts.set(change.number, change.opt_out, reason=change.reason)
        out.result({"ok": True, **_json(now)}, [_line(now)])
        return EXIT_OK
    if action == "import":
        if not args.target:
            raise UsageError("Name the file: gwdesk optouts import FILE.")
        path = Path(args.target)
        report = import_file(optouts, path, profile.region, reason=args.reason or "")
        data_out = {
            "ok": True,
            "added": report.added,
            "listed": report.listed,
            "duplicates": report.duplicates,
            "invalid": [{"row": r.row, "text": r.text, "reason": r.reason} for r in report.invalid],
        }
        lines = [f"{path.name}: {report.summary()}"]
        lines += [f"row {r.row}: {r.text[:40]!r}: {r.reason}" for r in report.invalid[:20]]
        out.result(data_out, lines)
        return EXIT_OK
    if action == "export":
        if not args.target:
            raise UsageError("Name the file: gwdesk optouts export FILE.")
        count = export_file(optouts, Path(args.target), include_opted_in=args.all)
        out.result(
            {"ok": True, "written": count, "file": args.target},
            [f"{count:,} numbers written to {args.target}"],
        )
        return EXIT_OK
    rows = optouts.listing(args.search or "", include_opted_in=args.all, limit=SHOWN)
    opted, back_in = optouts.count()
    summary = f"{opted:,} opted out, {back_in:,} opted back in"
    out.result(
        {"ok": True, "opted_out": opted, "opted_in": back_in, "numbers": [_json(o) for o in rows]},
        [*(_line(o) for o in rows), summary],
    )
    return EXIT_OK


def register_optouts(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "the account's opt-out list: list, add, remove, import, export"
    p = store_command(sub, common, "optouts", __doc__, text, ACTIONS, optouts_work)
    p.add_argument("target", nargs="?", metavar="NUMBER|FILE", help="the number, or the file")
    p.add_argument(
        "--reason",
        metavar="TEXT",
        help="why (kept in the number's history; on import, for rows whose file gives none)",
    )
    p.add_argument(
        "--search", metavar="TEXT", help="list: digits of a number, or words of a reason"
    )
    p.add_argument("--all", action="store_true", help="also the numbers that opted back in")


COMMANDS: Final[tuple[Registrar, ...]] = (register_optouts,)
