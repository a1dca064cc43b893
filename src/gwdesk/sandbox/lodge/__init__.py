"""The legacy `Lodge` service: SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST at one address."""

from __future__ import annotations

from aiohttp import web


def register(app: web.Application) -> None:
    """Add the Lodge routes (filled in by the Lodge work)."""
