"""How fast the sandbox gateway seeds, lodges and serves logs, beside the naive way.

    python -m benchmarks.sandbox_throughput              # 1,000,000 records
    python -m benchmarks.sandbox_throughput --quick      # a smoke run in seconds

Seeds an account in a temporary database, starts `python -m gwdesk.sandbox serve`
on it as a real subprocess, and measures over loopback HTTP:

- seeding: records written per second;
- logs: records per second walking the whole account with `since` paging (1,000 a
  page) on a keep-alive client, beside `page=N` paging with a new connection per page;
- `simple_send`: requests per second from a keep-alive async client with bounded
  concurrency (aiohttp's, whose own cost stays well below the sandbox's; httpx's
  AsyncClient, which costs ~1.5 ms of CPU a request, is measured beside it), and a
  sequential loop that opens a new connection (and client) per request.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from gwdesk.sandbox.seed import seed_account

CREDENTIALS = {"grant_type": "password", "username": "demo", "password": "demo"}
SEND = {"Message": "Benchmark message", "Recipient": "61412345678"}
EPOCH = "2000-01-01T00:00:00+00:00"
STARTUP_TIMEOUT = 60.0


def say(text: str) -> None:
    print(text, flush=True)


@contextmanager
def sandbox_server(
    db: Path, log: Path, *options: str, stop_timeout: float = 15.0
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`gwdesk-sandbox serve` on a free port with extra `options`: (REST base URL, process).

    Every benchmark that needs a gateway in another process starts it here.
    """
    command = [sys.executable, "-m", "gwdesk.sandbox", "serve", "--db", str(db), "--port", "0"]
    with log.open("wb") as errors:
        process = subprocess.Popen(
            [*command, *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
        )
        try:
            yield _first_line_url(process, log), process
        finally:
            process.terminate()
            try:
                process.wait(timeout=stop_timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()


@contextmanager
def sandbox_process(db: Path, log: Path) -> Iterator[str]:
    """A `gwdesk-sandbox serve` subprocess on a free port; yields its REST base URL."""
    with sandbox_server(db, log) as (url, _process):
        yield url


def _first_line_url(process: subprocess.Popen[bytes], log: Path) -> str:
    """Parse `rest=... lodge=...`, the first line `serve` prints once it listens."""
    stdout = process.stdout
    assert stdout is not None
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(STARTUP_TIMEOUT)
    line = lines[0].decode("utf-8", "replace").strip() if lines else ""
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    if "rest" not in fields:
        detail = log.read_text("utf-8", "replace")[-2000:]
        raise SystemExit(f"the sandbox did not start (first line {line!r}):\n{detail}")
    return fields["rest"]


def bearer(base: str) -> dict[str, str]:
    response = httpx.post(f"{base}/v2/oauth/access_token", data=CREDENTIALS)
    response.raise_for_status()
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def walk_since(base: str, headers: dict[str, str]) -> tuple[int, float, int]:
    """Every record with `since` paging on one keep-alive connection: (records, s, requests)."""
    seen_last: set[str] = set()
    since, records, requests = EPOCH, 0, 0
    started = time.perf_counter()
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        while True:
            response = client.get("/v2/message/logs", params={"since": since})
            response.raise_for_status()
            requests += 1
            page = response.json()["messages"]
            # `since` is inclusive: drop what the previous page already gave (same time).
            fresh = [r for r in page if r["messageId"] not in seen_last]
            if not fresh:
                break
            records += len(fresh)
            since = fresh[-1]["dateLodged"]
            seen_last = {r["messageId"] for r in fresh if r["dateLodged"] == since}
    return records, time.perf_counter() - started, requests


def walk_pages(base: str, headers: dict[str, str], pages: int) -> tuple[int, float, int]:
    """`page=N` paging, a new connection per page, for at most `pages` pages."""
    records = 0
    started = time.perf_counter()
    for number in range(1, pages + 1):
        response = httpx.get(
            f"{base}/v2/message/logs", params={"page": number}, headers=headers, timeout=60
        )
        response.raise_for_status()
        page = response.json()["messages"]
        if not page:
            return records, time.perf_counter() - started, number
        records += len(page)
    return records, time.perf_counter() - started, pages


async def _aiohttp_sends(base: str, headers: dict[str, str], total: int, width: int) -> float:
    """`width` workers on one keep-alive aiohttp session: light enough not to be the limit."""
    remaining = iter(range(total))
    failures: list[int] = []
    connector = aiohttp.TCPConnector(limit=width)
    async with aiohttp.ClientSession(base, headers=headers, connector=connector) as session:

        async def send() -> None:
            async with session.post("/v2/message/simple_send", json=SEND) as response:
                await response.read()
                if response.status != 200:
                    failures.append(response.status)

        async def worker() -> None:
            for _ in remaining:
                await send()

        await send()  # warm up one connection
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(width)))
        elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} sends failed, e.g. HTTP {failures[0]}")
    return elapsed


async def _httpx_sends(base: str, headers: dict[str, str], total: int, width: int) -> float:
    """The same with httpx.AsyncClient (the console's HTTP client), for comparison."""
    limits = httpx.Limits(max_connections=width, max_keepalive_connections=width)
    remaining = iter(range(total))
    async with httpx.AsyncClient(
        base_url=base, headers=headers, limits=limits, timeout=60
    ) as client:

        async def worker() -> None:
            for _ in remaining:
                response = await client.post("/v2/message/simple_send", json=SEND)
                response.raise_for_status()

        await client.post("/v2/message/simple_send", json=SEND)
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(width)))
        return time.perf_counter() - started


def naive_sends(base: str, headers: dict[str, str], total: int) -> float:
    started = time.perf_counter()
    for _ in range(total):
        response = httpx.post(
            f"{base}/v2/message/simple_send", json=SEND, headers=headers, timeout=60
        )
        response.raise_for_status()
    return time.perf_counter() - started


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "messages": args.messages,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    with tempfile.TemporaryDirectory(prefix="gwdesk-bench-") as folder:
        db = Path(folder) / "sandbox.sqlite3"
        say(f"seeding {args.messages:,} records into {db} ...")
        report = seed_account(db, args.messages, seed=1)
        figures["seed_seconds"] = round(report.seconds, 2)
        figures["seed_records_per_s"] = round(report.rate)
        say(
            f"seed: {report.messages:,} records in {report.seconds:.1f} s "
            f"= {report.rate:,.0f} records/s ({report.replies:,} replies, {report.batches:,} batches)"
        )
        with sandbox_process(db, Path(folder) / "sandbox.log") as base:
            say(f"sandbox subprocess at {base}")
            headers = bearer(base)

            records, seconds, requests = walk_since(base, headers)
            figures["logs_since_records"] = records
            figures["logs_since_seconds"] = round(seconds, 2)
            figures["logs_since_records_per_s"] = round(records / seconds)
            say(
                f"logs, since paging, keep-alive: {records:,} records in {requests:,} requests, "
                f"{seconds:.1f} s = {records / seconds:,.0f} records/s"
            )
            if records != args.messages:
                raise SystemExit(
                    f"the since walk returned {records:,} of {args.messages:,} records"
                )

            records, seconds, requests = walk_pages(base, headers, args.naive_pages)
            figures["logs_page_records"] = records
            figures["logs_page_records_per_s"] = round(records / seconds)
            say(
                f"logs, naive page=N, new connection per page: {records:,} records "
                f"({requests:,} pages) in {seconds:.1f} s = {records / seconds:,.0f} records/s"
            )

            seconds = asyncio.run(_aiohttp_sends(base, headers, args.sends, args.concurrency))
            figures["simple_send_requests"] = args.sends
            figures["simple_send_concurrency"] = args.concurrency
            figures["simple_send_per_s"] = round(args.sends / seconds)
            say(
                f"simple_send, keep-alive aiohttp client, {args.concurrency} concurrent: "
                f"{args.sends:,} requests in {seconds:.2f} s = {args.sends / seconds:,.0f} requests/s"
            )
            count = max(1, args.sends // 4)
            seconds = asyncio.run(_httpx_sends(base, headers, count, args.concurrency))
            figures["simple_send_httpx_per_s"] = round(count / seconds)
            say(
                f"simple_send, keep-alive httpx.AsyncClient, {args.concurrency} concurrent: "
                f"{count:,} requests in {seconds:.2f} s = {count / seconds:,.0f} requests/s"
            )
            seconds = naive_sends(base, headers, args.naive_sends)
            figures["simple_send_naive_requests"] = args.naive_sends
            figures["simple_send_naive_per_s"] = round(args.naive_sends / seconds)
            say(
                f"simple_send, naive sequential, new connection each: {args.naive_sends:,} "
                f"requests in {seconds:.2f} s = {args.naive_sends / seconds:,.0f} requests/s"
            )
    return figures


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sandbox_throughput")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--messages", type=int, default=None, metavar="N")
    parser.add_argument("--sends", type=int, default=None, metavar="N")
    parser.add_argument("--naive-sends", type=int, default=None, metavar="N")
    parser.add_argument("--naive-pages", type=int, default=None, metavar="N")
    parser.add_argument("--concurrency", type=int, default=24, metavar="N")
    args = parser.parse_args(argv)
    quick = args.quick
    defaults = {
        "messages": 2_000 if quick else 1_000_000,
        "sends": 100 if quick else 4_000,
        "naive_sends": 10 if quick else 400,
        "naive_pages": 2 if quick else 200,
    }
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    figures = run(parse_args(argv))
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
