"""A compose form's saved draft, read back with suspicion.

The console wrote the draft, but another version or a hand edit may have changed it
since, so every value is checked for its type (a wrong one reads as absent) and cut
to its field's length. Each widget that is part of a draft keeps and restores its own
keys (`ReplyOptions`, `SendAtPicker`, `MarkingChoice`), so the Send and Batch tabs'
drafts hold them alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

Draft = Mapping[str, object]


def draft_text(data: Draft, key: str, limit: int) -> str:
    """The text kept under `key`, at most `limit` characters ("" when there is none)."""
    value = data.get(key)
    return value[:limit] if isinstance(value, str) else ""


def draft_moment(data: Draft, key: str) -> datetime | None:
    """The aware moment kept under `key` (None when there is none or it is not one)."""
    try:
        moment = datetime.fromisoformat(draft_text(data, key, 64))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
