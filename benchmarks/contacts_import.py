"""Contacts imported per second into the address book: a profile's file, or a team's server.

    python -m benchmarks.contacts_import                           # 10,000 contacts, a file
    python -m benchmarks.contacts_import --store postgresql://…    # and a throwaway database

`ContactStore.merge` (what `gwdesk contacts import` and the console's import run after
the file is read) takes 10,000 cards (a number, two fields, one or two groups each):
first as new contacts, then the same cards again, each updating the contact holding
its number. On a team's server every statement is a round trip, so the figure says
whether an import is written in a few statements per 500 contacts, as it should be,
or in several per contact. `--store` names a throwaway database: the contacts written
there stay.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gwdesk.domain.contacts import ContactCard
from gwdesk.store.contacts import ContactStore
from gwdesk.store.shared import ServerData, SharedData


def say(text: str) -> None:
    print(text, flush=True)


def cards(count: int) -> list[ContactCard]:
    return [
        ContactCard(
            f"Person {i}",
            (f"614{i:08d}",),
            (("Clinic", "Glebe"), ("Reference", f"R{i:07d}")),
            ("Patients",) if i % 2 else ("Patients", "Glebe"),
        )
        for i in range(count)
    ]


def measure(data: Path | SharedData, count: int) -> dict[str, float]:
    book = cards(count)
    store = ContactStore(data)
    try:
        started = time.perf_counter()
        added = store.merge(book)
        add_seconds = time.perf_counter() - started
        started = time.perf_counter()
        updated = store.merge(book)
        update_seconds = time.perf_counter() - started
    finally:
        store.close()
    if added.added != count or updated.updated != count:
        raise SystemExit(f"the import kept {added.added:,} and updated {updated.updated:,}")
    return {
        "add_seconds": round(add_seconds, 3),
        "added_per_second": round(count / add_seconds, 1),
        "update_seconds": round(update_seconds, 3),
        "updated_per_second": round(count / update_seconds, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.contacts_import", description=__doc__
    )
    parser.add_argument("--contacts", type=int, default=10_000)
    parser.add_argument("--store", metavar="URL", help="also a (throwaway) PostgreSQL database")
    args = parser.parse_args(argv)
    count = args.contacts
    figures: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "contacts": count,
    }
    with tempfile.TemporaryDirectory(prefix="gwdesk-contacts-") as temp:
        figures["sqlite"] = measure(Path(temp) / "profile.sqlite3", count)
    if args.store:
        from gwdesk.store.postgres import PostgresDatabase

        server = ServerData(PostgresDatabase(args.store))
        try:
            figures["postgresql"] = measure(server, count)
        finally:
            server.close()
    for engine in ("sqlite", "postgresql"):
        if engine in figures:
            found = figures[engine]
            say(
                f"{engine}: {count:,} contacts added in {found['add_seconds']:.2f} s "
                f"({found['added_per_second']:,.0f}/s), updated in {found['update_seconds']:.2f} s "
                f"({found['updated_per_second']:,.0f}/s)"
            )
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
