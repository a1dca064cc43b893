"""Reply webhooks and keyword forwarding, with the contract's retries."""

from __future__ import annotations

from aiohttp import web


def register(app: web.Application) -> None:
    """Attach the webhook dispatcher to the engine (filled in by the webhook work)."""
