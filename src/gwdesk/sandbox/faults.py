"""Deterministic fault injection for client tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    return await handler(request)


def register(app: web.Application) -> None:
    """Parse the configured fault plan (filled in by the fault work)."""
