"""Helpers for the seeding tests: a pinned end time and a `since` walk of the logs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from gwdesk.sandbox.seed import SeedReport, seed_account

#: Seeds end here, so their records (and the tests' expectations) do not drift with the clock.
END = datetime(2025, 6, 30, 7, 0, tzinfo=UTC)
LOG_FIELDS = [
    "messageId", "status", "dateSent", "dateLodged", "deliveryReceiptReceived", "sender",
    "costcentre", "from", "to", "subject", "message", "parts", "type", "senderid",
    "senderserviceid", "replytype", "replypath", "trackingId", "batchTrackingId",
]  # fmt: skip


def seed(path: Path, n: int, seed: int = 1, **options: Any) -> SeedReport:
    return seed_account(path, n, seed=seed, end=END, **options)


def walk_since(http: httpx.Client) -> list[dict[str, Any]]:
    """Every record, oldest first, the way the contract says a client pages with `since`."""
    held: list[dict[str, Any]] = []
    seen: set[str] = set()
    since = "2000-01-01T00:00:00+00:00"
    while True:
        response = http.get("/v2/message/logs", params={"since": since})
        assert response.status_code == 200, response.text
        fresh = [r for r in response.json()["messages"] if r["messageId"] not in seen]
        if not fresh:
            return held
        held.extend(fresh)
        seen.update(r["messageId"] for r in fresh)
        since = fresh[-1]["dateLodged"]
