"""Saved message templates: named, each name once whatever its letter case.

A template is kept only when it parses (`gwdesk.domain.templates`), so what the
Send and Batch tabs and `gwdesk send --template` pick is always usable; a row an
older or damaged file holds that no longer parses is still listed, and refused
when it is used.

Templates are shared data (a profile's file, or a team's server): each change
writes an audit entry (who, from which console, what the text became) in the same
transaction, so a team can tell who changed the wording of a message.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from gwdesk.domain.hidden_chars import describe_hidden, first_hidden
from gwdesk.domain.templates import parse_template
from gwdesk.store.database import StoreError, store_methods
from gwdesk.store.engine import Database
from gwdesk.store.shared import SharedData, database_for
from gwdesk.store.team import write_audit

MAX_NAME: Final = 80


class TemplateNameError(ValueError):
    """A name the store does not take (empty, too long, hiding characters)."""


class TemplateExists(StoreError):
    """A template of that name is kept already (`replace=True` replaces it)."""


@dataclass(frozen=True, slots=True)
class SavedTemplate:
    name: str
    text: str
    updated: datetime


def name_key(name: str) -> str:
    """Names are unique by this: spacing collapsed, letter case folded."""
    return " ".join(name.split()).casefold()


def check_name(name: str) -> str:
    """The name as kept (spacing collapsed), or `TemplateNameError` saying why not."""
    cleaned = " ".join(name.split())
    if not cleaned:
        raise TemplateNameError("Give the template a name.")
    if len(cleaned) > MAX_NAME:
        raise TemplateNameError(f"A template's name is at most {MAX_NAME} characters.")
    hidden = first_hidden(cleaned)
    if hidden is not None:
        raise TemplateNameError(f"The name holds {describe_hidden(hidden)}.")
    return cleaned


def _saved(row: Any) -> SavedTemplate:
    moment = datetime.fromtimestamp(row["updated_us"] / 1_000_000, UTC)
    return SavedTemplate(row["name"], row["text"], moment)


@store_methods
class TemplateStore:
    """A profile's or a team's templates (table `templates`); safe to use from any thread.

    `operator` and `console` say who made the changes, in the audit entries."""

    def __init__(
        self, data: Path | str | SharedData | Database, *, operator: str = "", console: str = ""
    ) -> None:
        self.database, self._owned = database_for(data)
        self.operator = operator
        self.console = console

    def close(self) -> None:
        if self._owned:
            self.database.close()

    def listing(self) -> list[SavedTemplate]:
        """Every template, by name."""
        with self.database.session() as session:
            rows = session.execute(
                "SELECT name, text, updated_us FROM templates ORDER BY name_key"
            ).fetchall()
        return [_saved(row) for row in rows]

    def get(self, name: str) -> SavedTemplate | None:
        with self.database.session() as session:
            row = session.execute(
                "SELECT name, text, updated_us FROM templates WHERE name_key = ?", (name_key(name),)
            ).fetchone()
        return None if row is None else _saved(row)

    def add(self, name: str, text: str, *, replace: bool = False) -> SavedTemplate:
        """Keep `text` under `name` (`TemplateError` when it does not parse,
        `TemplateNameError`, or `TemplateExists` unless `replace`)."""
        shown = check_name(name)
        parse_template(text)
        now = time.time_ns() // 1000
        upsert = (
            " ON CONFLICT(name_key) DO UPDATE SET name = excluded.name, text = excluded.text, "
            "updated_us = excluded.updated_us"
            if replace
            else " ON CONFLICT(name_key) DO NOTHING"
        )
        with self.database.transaction() as session:
            before = session.execute(
                "SELECT name FROM templates WHERE name_key = ?", (name_key(shown),)
            ).fetchone()
            changed = session.execute(
                "INSERT INTO templates(name_key, name, text, updated_us) VALUES (?, ?, ?, ?)"  # noqa: S608 - constant SQL
                + upsert,
                (name_key(shown), shown, text, now),
            ).rowcount
            if changed:
                action = "template added" if before is None else "template changed"
                write_audit(session, self.operator, self.console, action, shown, text)
        if not changed:
            kept = self.get(shown)
            raise TemplateExists(
                f"A template called {(kept.name if kept else shown)!r} is kept already: remove "
                "it first, or replace it."
            )
        return SavedTemplate(shown, text, datetime.fromtimestamp(now / 1_000_000, UTC))

    def remove(self, name: str) -> bool:
        """Forget a template; False when there was none of that name."""
        with self.database.transaction() as session:
            gone = session.execute(
                "DELETE FROM templates WHERE name_key = ? RETURNING name, text", (name_key(name),)
            ).fetchall()
            for row in gone:
                write_audit(
                    session, self.operator, self.console, "template removed", row[0], row[1]
                )
        return bool(gone)
