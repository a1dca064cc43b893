"""`gwdesk contacts`: the profile's address book.

    gwdesk contacts [list] [--search TEXT] [--group NAME]   contacts, by name
    gwdesk contacts groups                                  the groups and their sizes
    gwdesk contacts import FILE                             a CSV or vCard file, merged in
    gwdesk contacts export FILE [--group NAME]              as CSV (no cell runs as a formula)

An import adds the contacts whose numbers are new and updates those whose numbers
are known, and lists every row or card it left out with its reason. A number that
opted out is shown as such (the account's opt-out list says so, as it does for a
send). No password is needed: only the profile. With `--json`, one JSON document.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

from gwdesk.app.contacts import export_contacts, import_contacts
from gwdesk.cli import (
    EXIT_FAILED,
    EXIT_OK,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    store_command,
)
from gwdesk.domain.numbers import display
from gwdesk.domain.profile import Profile
from gwdesk.importing.decoding import ImportFailed
from gwdesk.store.contacts import Contact
from gwdesk.store.local import LocalStore

ACTIONS: Final = ("list", "groups", "import", "export")
SHOWN: Final = 1000
SHOWN_INVALID: Final = 20


def contact_json(contact: Contact) -> dict[str, Any]:
    return {
        "id": contact.id,
        "name": contact.name,
        "numbers": list(contact.numbers),
        "opted_out": list(contact.opted_out),
        "groups": list(contact.groups),
        "fields": dict(contact.fields),
        "notes": contact.notes,
    }


def contact_line(contact: Contact) -> str:
    numbers = ", ".join(
        display(n) + (" (opted out)" if n in contact.opted_out else "") for n in contact.numbers
    )
    groups = f"  [{', '.join(contact.groups)}]" if contact.groups else ""
    return f"{contact.name or '(no name)'}  {numbers}{groups}"


def _file(args: argparse.Namespace, action: str) -> Path:
    if not args.file:
        raise UsageError(f"Name the file: gwdesk contacts {action} FILE.")
    return Path(args.file)


def contacts_work(
    args: argparse.Namespace, profile: Profile, store: LocalStore, out: Output
) -> int:
    contacts = store.contacts
    action = args.action
    if action == "import":
        path = _file(args, action)
        try:
            report = import_contacts(contacts, path, profile.region)
        except ImportFailed as exc:
            out.failure("import", f"Cannot read contacts from {path.name}: {exc.message}")
            return EXIT_FAILED
        data = {
            "ok": True,
            "file": str(path),
            "read_as": report.kind,
            "added": report.added,
            "updated": report.updated,
            "invalid": [{"row": r.row, "text": r.text, "reason": r.reason} for r in report.invalid],
        }
        lines = [f"{path.name} ({report.kind}): {report.summary()}"]
        lines += [
            f"row {r.row}: {r.text[:40]!r}: {r.reason}" for r in report.invalid[:SHOWN_INVALID]
        ]
        if len(report.invalid) > SHOWN_INVALID:
            lines.append(f"... and {len(report.invalid) - SHOWN_INVALID:,} more")
        out.result(data, lines)
        return EXIT_OK
    if action == "export":
        path = _file(args, action)
        count = export_contacts(contacts, path, group=args.group)
        out.result(
            {"ok": True, "written": count, "file": str(path)},
            [f"{count:,} contact(s) written to {path}"],
        )
        return EXIT_OK
    if action == "groups":
        groups = contacts.groups()
        out.result(
            {"ok": True, "groups": [{"name": n, "contacts": c} for n, c in groups]},
            [f"{name}: {count:,} contact(s)" for name, count in groups] or ["no groups"],
        )
        return EXIT_OK
    if args.file:
        raise UsageError("gwdesk contacts list takes no file (did you mean import?).")
    found = contacts.listing(args.search or "", group=args.group, limit=SHOWN)
    total = contacts.count(args.search or "", group=args.group)
    lines = [contact_line(c) for c in found]
    lines.append(
        f"{total:,} contact(s)" + (f", the first {SHOWN:,} shown" if total > SHOWN else "")
    )
    out.result({"ok": True, "total": total, "contacts": [contact_json(c) for c in found]}, lines)
    return EXIT_OK


def register_contacts(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "the profile's address book: list, groups, import, export"
    p = store_command(sub, common, "contacts", __doc__, text, ACTIONS, contacts_work)
    p.add_argument("file", nargs="?", metavar="FILE", help="import: CSV or vCard; export: CSV")
    p.add_argument("--search", metavar="TEXT", help="list: words of a name or notes, or digits")
    p.add_argument("--group", metavar="NAME", help="list, export: that group's contacts only")


COMMANDS: Final[tuple[Registrar, ...]] = (register_contacts,)
