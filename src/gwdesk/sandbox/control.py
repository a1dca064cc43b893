"""Sandbox-only control endpoints under `/sandbox/` (replies, keywords, faults, attempts)."""

from __future__ import annotations

from aiohttp import web


def register(app: web.Application) -> None:
    """Add the `/sandbox/` routes (filled in by the webhook work)."""
