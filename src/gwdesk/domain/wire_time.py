"""A moment as the gateway's wire carries it: ISO 8601 with its offset.

A time without a zone would be read in the gateway's, so it is refused before any
request (the core checks a scheduled send with it, the REST client every time it sends).
"""

from __future__ import annotations

from datetime import datetime

from gwdesk.domain.errors import ValidationError


def iso(moment: datetime, what: str) -> str:
    """ISO 8601 with an offset; `ValidationError` naming `what` for a time without a zone."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValidationError(f"{what} needs a time zone.", field=what, status=None)
    return moment.isoformat()
