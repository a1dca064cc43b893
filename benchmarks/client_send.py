"""Messages lodged per second through gwdesk's one way out, beside the naive way.

    python -m benchmarks.client_send            # 1,000 sends and one 10,000-recipient send
    python -m benchmarks.client_send --quick    # a smoke run in seconds

Starts `python -m gwdesk.sandbox serve` on a temporary database as a real
subprocess and measures over loopback HTTP:

- facade: 1,000 one-recipient sends as the Send tab and `gwdesk send` make them,
  `Sending.send_message` over a temporary profile store: each checked, recorded in
  the outbox (`synchronous=FULL`), sent by the `OutboxRunner` (one pooled keep-alive
  client, ExternalSystemIds, exactly-once logic) and written to the history, with
  bounded concurrency;
- naive: the same 1,000 messages as public clients of this gateway send them, a
  sequential loop of blocking `httpx.post` calls, each on a new connection (one
  token fetched up front), no outbox;
- batch: one `Sending.send_list` to 10,000 recipients (recorded, then 100 requests of
  100 through the runner's 4 lanes): how fast the gateway accepted them, and how fast
  its messages were all created.

With `--store postgresql://…` (a throwaway database) the outbox and the history are a
team's server's, as a team profile's are (`batch_send.on_server`).

The last line of the output is one JSON object with every figure (the keys keep
their names across versions, so runs compare).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from benchmarks.batch_send import on_server
from benchmarks.sandbox_throughput import sandbox_process
from gwdesk.app.profile_data import ProfileData, account_key, open_profile, sending_for
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsForm, SmsMessage
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.service import GatewayService


def say(text: str) -> None:
    print(text, flush=True)


def numbers(start: int, count: int) -> list[str]:
    return [f"614{i:08d}" for i in range(start, start + count)]


@contextlib.asynccontextmanager
async def gwdesk_sending(
    url: str, folder: Path, store_url: str | None = None
) -> AsyncIterator[tuple[GatewayService, Sending]]:
    """A profile's gateway and its sends, over a temporary store (outbox and history),
    or with its outbox and history on a team's server (`store_url`)."""
    profile = Profile(name="bench", rest_url=url, username="demo")
    data = ProfileData(folder / "profile.sqlite3", account_key(profile), profile.region)
    store = await asyncio.to_thread(open_profile, data)
    close_team = await asyncio.to_thread(on_server, store, store_url) if store_url else None
    try:
        async with GatewayService(profile, Secret("demo")) as service:
            yield service, sending_for(service, store, data)
    finally:
        await asyncio.to_thread(store.close)
        if close_team is not None:
            await asyncio.to_thread(close_team)


async def facade_sends(
    url: str, folder: Path, count: int, concurrency: int, store_url: str | None = None
) -> float:
    gate = asyncio.Semaphore(concurrency)
    async with gwdesk_sending(url, folder, store_url) as (_service, sending):

        async def one(number: str) -> None:
            form = SmsForm(Channel.REST_SMS, recipient=number, text="Benchmark message")
            async with gate:
                outcome = await sending.send_message(form)
            if not outcome.ok:
                raise SystemExit(f"a send failed: {outcome.error}")

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


async def big_send(
    url: str, folder: Path, count: int, store_url: str | None = None
) -> tuple[float, float, int]:
    """Seconds until the gateway accepted every request (recording included), until all
    messages existed; the number of requests."""
    async with gwdesk_sending(url, folder, store_url) as (service, sending):
        before = (await service.logs()).total_records
        message = SmsMessage(Channel.REST_SMS, "Benchmark batch")
        started = time.perf_counter()
        outcome = await sending.send_list(message, numbers(200_000, count))
        accepted = time.perf_counter() - started
        if not outcome.ok:
            raise SystemExit(f"the batch failed: {outcome.error}")
        # Polling the gateway: nothing local to wait on.
        while (await service.logs()).total_records < before + count:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        created = time.perf_counter() - started
        return (accepted, created, len(outcome.sent))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.client_send", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100 sends and a 1,000-recipient send")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--store", metavar="URL", help="outbox and history on this (throwaway) PostgreSQL database"
    )
    args = parser.parse_args(argv)
    sends = 100 if args.quick else 1000
    recipients = 1000 if args.quick else 10_000
    figures: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "sends": sends,
        "concurrency": args.concurrency,
        "batch_recipients": recipients,
        "store": "postgresql" if args.store else "sqlite",
    }
    with (
        tempfile.TemporaryDirectory(prefix="gwdesk-bench-") as temp,
        sandbox_process(Path(temp) / "sandbox.sqlite3", Path(temp) / "sandbox.log") as url,
    ):
        say(f"sandbox at {url}")
        facade = asyncio.run(facade_sends(url, Path(temp), sends, args.concurrency, args.store))
        say(
            f"gwdesk: {sends} one-recipient sends through the outbox, concurrency "
            f"{args.concurrency}: {facade:.2f} s, {sends / facade:,.0f} messages/s"
        )
        naive = naive_sends(url, sends)
        say(
            f"naive:  {sends} sequential httpx.post, new connection each: "
            f"{naive:.2f} s, {sends / naive:,.0f} messages/s"
        )
        say(f"        gwdesk is {naive / facade:.1f}x the naive rate")
        accepted, created, requests = asyncio.run(big_send(url, Path(temp), recipients, args.store))
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
