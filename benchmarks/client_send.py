"""Messages lodged per second through the gateway facade, beside the naive way.

    python -m benchmarks.client_send            # 1,000 sends and one 10,000-recipient send
    python -m benchmarks.client_send --quick    # a smoke run in seconds

Starts `python -m gwdesk.sandbox serve` on a temporary database as a real
subprocess and measures over loopback HTTP:

- facade: 1,000 one-recipient `send`s through `GatewayService` (one pooled
  keep-alive client, ExternalSystemIds, exactly-once logic) with bounded concurrency;
- naive: the same 1,000 messages as public clients of this gateway send them, a
  sequential loop of blocking `httpx.post` calls, each on a new connection (one
  token fetched up front);
- batch: one `send` to 10,000 recipients through the facade (100 requests of 100):
  how fast the gateway accepted them, and how fast its messages were all created.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from benchmarks.sandbox_throughput import sandbox_process
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.sending import Outgoing
from gwdesk.gateway.service import GatewayService


def say(text: str) -> None:
    print(text, flush=True)


def numbers(start: int, count: int) -> list[str]:
    return [f"614{i:08d}" for i in range(start, start + count)]


async def facade_sends(url: str, count: int, concurrency: int) -> float:
    profile = Profile(name="bench", rest_url=url, username="demo")
    gate = asyncio.Semaphore(concurrency)
    async with GatewayService(profile, Secret("demo")) as service:

        async def one(number: str) -> None:
            async with gate:
                outcome = await service.send(Outgoing("Benchmark message", [number]))
            if not outcome.ok:
                raise SystemExit(f"a send failed: {outcome.failed[0].error}")

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in numbers(0, count)))
        return time.perf_counter() - started


def naive_sends(url: str, count: int) -> float:
    token = httpx.post(
        f"{url}/v2/oauth/access_token",
        data={"grant_type": "password", "username": "demo", "password": "demo"},
    ).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    started = time.perf_counter()
    for number in numbers(100_000, count):
        response = httpx.post(
            f"{url}/v2/message/send",
            json={"Message": "Benchmark message", "Recipients": [number]},
            headers=headers,
        )
        response.raise_for_status()
    return time.perf_counter() - started


async def big_send(url: str, count: int) -> tuple[float, float, int]:
    """Seconds until the gateway accepted every request, until all messages existed, requests."""
    profile = Profile(name="bench", rest_url=url, username="demo")
    async with GatewayService(profile, Secret("demo")) as service:
        before = (await service.logs()).total_records
        started = time.perf_counter()
        outcome = await service.send(Outgoing("Benchmark batch", numbers(200_000, count)))
        accepted = time.perf_counter() - started
        if not outcome.ok:
            raise SystemExit(f"the batch failed: {outcome.failed[0].error}")
        # Polling the gateway: nothing local to wait on.
        while (await service.logs()).total_records < before + count:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        created = time.perf_counter() - started
        return (accepted, created, len(outcome.chunks))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.client_send", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100 sends and a 1,000-recipient send")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    sends = 100 if args.quick else 1000
    recipients = 1000 if args.quick else 10_000
    figures: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "sends": sends,
        "concurrency": args.concurrency,
        "batch_recipients": recipients,
    }
    with (
        tempfile.TemporaryDirectory(prefix="gwdesk-bench-") as temp,
        sandbox_process(Path(temp) / "sandbox.sqlite3", Path(temp) / "sandbox.log") as url,
    ):
        say(f"sandbox at {url}")
        facade = asyncio.run(facade_sends(url, sends, args.concurrency))
        say(
            f"facade: {sends} one-recipient sends, concurrency {args.concurrency}: "
            f"{facade:.2f} s, {sends / facade:,.0f} messages/s"
        )
        naive = naive_sends(url, sends)
        say(
            f"naive:  {sends} sequential httpx.post, new connection each: "
            f"{naive:.2f} s, {sends / naive:,.0f} messages/s"
        )
        say(f"        facade is {naive / facade:.1f}x the naive rate")
        accepted, created, requests = asyncio.run(big_send(url, recipients))
        say(
            f"batch:  one send to {recipients:,} recipients in {requests} requests: accepted "
            f"in {accepted:.2f} s ({recipients / accepted:,.0f} recipients/s), all messages "
            f"created in {created:.2f} s ({recipients / created:,.0f} messages/s)"
        )
    figures.update(
        {
            "facade_seconds": round(facade, 3),
            "facade_messages_per_second": round(sends / facade, 1),
            "naive_seconds": round(naive, 3),
            "naive_messages_per_second": round(sends / naive, 1),
            "facade_speedup": round(naive / facade, 2),
            "batch_requests": requests,
            "batch_accepted_seconds": round(accepted, 3),
            "batch_recipients_accepted_per_second": round(recipients / accepted, 1),
            "batch_created_seconds": round(created, 3),
            "batch_messages_created_per_second": round(recipients / created, 1),
        }
    )
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
