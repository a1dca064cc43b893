"""A flood of reply webhooks against the listener, beside a bare aiohttp `OK` as the ceiling.

    python -m benchmarks.reply_flood                 # 30 s each
    python -m benchmarks.reply_flood --seconds 5     # a quick run

The listener is flooded as the console runs it, then with the receiver's `--metrics`
page on and scraped every second, and off again, in alternating order
(`--metrics-rounds`); each mode's median is printed with their ratio (the metrics may
cost at most 5% of the replies a second).

The listener runs in this process on its own thread and loop, as the console runs
it, storing into a temporary profile file (WAL, `synchronous=FULL`, group commit).
The flood comes from another process (this module with `--client`): many
keep-alive connections, each sending `GET` reply webhooks shaped like the
gateway's (every reply distinct) one after another as fast as they are answered,
recording each acknowledgement's latency. The same load then goes to a bare
aiohttp handler answering `OK` with nothing behind it: the most this machine's
Python HTTP stack can do, so the gap is the cost of storing.

Afterwards every reply the client saw acknowledged is looked up in the store:
`missing` must be 0.

Each run also prints this process's CPU time per acknowledged request (every thread:
the server's loop, and for the listener its writer too; the client is another
process): a figure that a busy machine disturbs far less than requests a second.

The console's side (UI event-loop lag while the Replies view consumes the feed)
plugs in through `run_listener_flood(..., foreground=...)`: the flood runs on a
helper thread while `foreground(inbox, finished)` runs on the calling thread (the
Qt main thread) until `finished()` is true; the figures it returns are merged in.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx
from aiohttp import web

from gwdesk.domain.webhook_time import format_webhook_time
from gwdesk.replies import ReplyInbox, ReplyListener
from gwdesk.replies.endpoint import ListenerCounts
from gwdesk.replies.listener import MetricsPage
from gwdesk.replies.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from gwdesk.replies.metrics import ReceiverMetrics
from gwdesk.store.replies import ReplyStore

ZONE = ZoneInfo("Australia/Sydney")
SCRAPE_EVERY = 1.0
"""Seconds between scrapes of the metrics page in the run with metrics on."""
TARGET_PER_SECOND = 5000
TARGET_P99_MS = 20.0
Foreground = Callable[[ReplyInbox, Callable[[], bool]], dict[str, Any]]


def say(line: str) -> None:
    print(line, flush=True)


# ---- the flooding client (a separate process) ----------------------------------------------


async def _connection(
    host: str,
    port: int,
    path: str,
    index: int,
    deadline: float,
    latencies: array[float],
    acked: list[int],
    failures: list[str],
    stamps: array[float] | None = None,
) -> None:
    """One keep-alive connection's replies; `stamps` gets each acknowledgement's wall-clock
    time (beside `acked`), for measuring when other processes saw the reply."""
    reader, writer = await asyncio.open_connection(host, port)
    sender = f"6149{index:07d}"
    seq = 0
    stamp_second = -1
    stamp = ""
    try:
        while time.monotonic() < deadline:
            now = time.time()
            if int(now) != stamp_second:
                stamp_second = int(now)
                moment = datetime.fromtimestamp(stamp_second, UTC)
                stamp = format_webhook_time(moment, ZONE).replace(" ", "%20").replace(":", "%3A")
            request = (
                f"GET {path}?from={sender}&to=61400000000&msg=flood%20{index}-{seq}"
                f"&sent={stamp}&rcvd={stamp} HTTP/1.1\r\nHost: {host}\r\n"
                "User-Agent: gwdesk-flood/1\r\n\r\n"
            ).encode("ascii")
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            body = await reader.readexactly(length)
            elapsed = time.perf_counter() - started
            if head.startswith(b"HTTP/1.1 200") and body.strip() == b"OK":
                latencies.append(elapsed)
                acked.append(seq)
                if stamps is not None:
                    stamps.append(time.time())
            else:
                failures.append(f"{index}-{seq}: {head.splitlines()[0].decode()} {body[:80]!r}")
            seq += 1
    finally:
        writer.close()


async def _flood(
    url: str, seconds: float, connections: int, with_stamps: bool = False
) -> dict[str, Any]:
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    deadline = time.monotonic() + seconds
    latencies: array[float] = array("d")
    acked: list[list[int]] = [[] for _ in range(connections)]
    failures: list[str] = []
    stamps: list[array[float]] = [array("d") for _ in range(connections)]
    started = time.perf_counter()
    await asyncio.gather(
        *(
            _connection(
                parts.hostname, parts.port, parts.path, i, deadline, latencies, acked[i],
                failures, stamps[i] if with_stamps else None,
            )
            for i in range(connections)
        )
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)

    def percentile(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000 if ordered else 0

    return {
        "seconds": elapsed,
        "acknowledged": len(latencies),
        "failures": len(failures),
        "failure_examples": failures[:5],
        "p50_ms": percentile(0.50),
        "p99_ms": percentile(0.99),
        "max_ms": ordered[-1] * 1000 if ordered else 0,
        "mean_ms": statistics.fmean(ordered) * 1000 if ordered else 0,
        "acked": acked,
        **({"stamps": [list(s) for s in stamps]} if with_stamps else {}),
    }


def client_main(
    url: str, seconds: float, connections: int, out: Path, with_stamps: bool = False
) -> int:
    result = asyncio.run(_flood(url, seconds, connections, with_stamps))
    out.write_text(json.dumps(result))
    return 0


# ---- the servers (this process) --------------------------------------------------------------


@dataclass(frozen=True)
class Flood:
    seconds: float
    acknowledged: int
    failures: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float

    @property
    def per_second(self) -> float:
        return self.acknowledged / self.seconds if self.seconds else 0.0


def flood(
    url: str, seconds: float, connections: int, stamps: list[list[float]] | None = None
) -> tuple[Flood, list[list[int]]]:
    """Run the client process against `url`; its figures and the acknowledged seqs per
    connection (and, into `stamps`, each acknowledgement's wall-clock time)."""
    with tempfile.TemporaryDirectory(prefix="gwdesk-flood-") as temp:
        out = Path(temp) / "client.json"
        command = [
            sys.executable, "-m", "benchmarks.reply_flood", "--client", url,
            "--seconds", str(seconds), "--connections", str(connections), "--out", str(out),
            *(["--stamps"] if stamps is not None else []),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120)
        if done.returncode != 0 or not out.exists():
            raise SystemExit(f"the flood client failed:\n{done.stderr[-3000:]}")
        data = json.loads(out.read_text())
    for example in data["failure_examples"]:
        say(f"  refused: {example}")
    acked = data.pop("acked")
    if stamps is not None:
        stamps.extend(data.pop("stamps"))
    data.pop("failure_examples")
    return Flood(**data), acked


def cpu_per_request_us(cpu_seconds: float, flood: Flood) -> float:
    """This process's CPU microseconds per acknowledged request."""
    return cpu_seconds * 1e6 / flood.acknowledged if flood.acknowledged else 0.0


@contextmanager
def bare_server() -> Iterator[str]:
    """An aiohttp server on its own thread answering `OK` to everything: the ceiling."""

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="OK", content_type="text/plain")

    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", ok)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, name="bare-ok", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/replies/bare"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.run_until_complete(runner.cleanup())
        loop.close()


def missing_acknowledged(db: Path, acked: list[list[int]]) -> int:
    """Acknowledged replies that are not in the store (must be 0)."""
    conn = sqlite3.connect(db)
    try:
        texts = {row[0] for row in conn.execute("SELECT text FROM replies")}
    finally:
        conn.close()
    return sum(
        1 for index, seqs in enumerate(acked) for seq in seqs if f"flood {index}-{seq}" not in texts
    )


def scrape_until(port: int, done: threading.Event) -> int:
    """Ask for the metrics page every `SCRAPE_EVERY` seconds until `done`, as a Prometheus
    server would (far more often than its default 15 s); the pages fetched."""
    pages = 0
    with httpx.Client() as http:
        while True:
            http.get(f"http://127.0.0.1:{port}/metrics").raise_for_status()
            pages += 1
            if done.wait(SCRAPE_EVERY):
                return pages


def run_listener_flood(
    seconds: float,
    connections: int,
    foreground: Foreground | None = None,
    metrics: bool = False,
) -> dict[str, Any]:
    """Flood a listener (this process, its own thread) and check the store afterwards;
    `metrics`: with the receiver's `--metrics` page on (and scraped meanwhile)."""
    with tempfile.TemporaryDirectory(prefix="gwdesk-flood-") as temp:
        db = Path(temp) / "profile.sqlite3"
        store = ReplyStore(db)
        inbox = ReplyInbox(store).start()
        counts = ListenerCounts()
        page = None
        if metrics:
            figures = ReceiverMetrics(inbox, counts)
            page = MetricsPage("127.0.0.1", 0, figures.page, METRICS_CONTENT_TYPE)
        listener = ReplyListener(inbox, ZONE, port=0, counts=counts, metrics=page)
        info = listener.start()
        outcome: list[tuple[Flood, list[list[int]]]] = []
        cpu_before = time.process_time()
        runner = threading.Thread(
            target=lambda: outcome.append(flood(info.template.base_url, seconds, connections)),
            name="flood",
        )
        runner.start()
        scrapes: list[int] = []
        flooded = threading.Event()
        scraper = None
        if info.metrics_port is not None:
            port = info.metrics_port
            scraper = threading.Thread(
                target=lambda: scrapes.append(scrape_until(port, flooded)), name="scraper"
            )
            scraper.start()
        extra = foreground(inbox, lambda: not runner.is_alive()) if foreground else {}
        runner.join()
        flooded.set()
        if scraper is not None:
            scraper.join()
            extra["scrapes"] = scrapes[0] if scrapes else 0
        cpu_seconds = time.process_time() - cpu_before
        listener.stop()
        inbox.close()
        stats = inbox.stats
        stored = store.count()
        store.close()
        if not outcome:
            raise SystemExit("the flood did not complete")
        result, acked = outcome[0]
        missing = missing_acknowledged(db, acked)
    return {
        "flood": result,
        "stored": stored,
        "commits": stats.commits,
        "duplicates": stats.duplicates,
        "missing": missing,
        "cpu_seconds": cpu_seconds,
        **extra,
    }


def _rates(run: dict[str, Any]) -> dict[str, Any]:
    result: Flood = run["flood"]
    return {
        "stored_per_second": round(run["stored"] / result.seconds, 1),
        "cpu_us_per_request": round(cpu_per_request_us(run["cpu_seconds"], result), 1),
        "p99_ms": result.p99_ms,
        "missing": run["missing"],
    }


def compare_metrics(
    off: dict[str, Any], seconds: float, connections: int, rounds: int
) -> dict[str, Any]:
    """The same flood with `--metrics` on (scraped every `SCRAPE_EVERY` s) beside it off:
    `rounds` of each in alternating order (off-on, on-off, …; the first round's off is
    `off`, already made), so a machine that gets busier or quieter during the run
    favours neither; the medians of each and their ratio (on / off; the issue's bound:
    no more than 5% slower)."""
    runs: dict[str, list[dict[str, Any]]] = {"off": [_rates(off)], "on": []}
    scrapes = 0
    for round_ in range(rounds):
        order = (False, True) if round_ % 2 == 0 else (True, False)
        for metrics in order:
            if round_ == 0 and not metrics:
                continue  # the first round's "off" is the run already made
            run = run_listener_flood(seconds, connections, metrics=metrics)
            scrapes += run.get("scrapes", 0)
            runs["on" if metrics else "off"].append(_rates(run))
    median = {
        name: {
            key: statistics.median(r[key] for r in each)
            for key in ("stored_per_second", "cpu_us_per_request", "p99_ms")
        }
        | {"missing": sum(r["missing"] for r in each), "runs": len(each)}
        for name, each in runs.items()
    }
    ratio = median["on"]["stored_per_second"] / max(median["off"]["stored_per_second"], 1e-9)
    cpu_ratio = median["on"]["cpu_us_per_request"] / max(median["off"]["cpu_us_per_request"], 1e-9)
    for name in ("off", "on"):
        say(
            f"metrics {name}: "
            + ", ".join(
                f"{r['stored_per_second']:,.0f}/s {r['cpu_us_per_request']:.0f} us"
                for r in runs[name]
            )
            + f" (replies a second, CPU a request; median of {len(runs[name])})"
        )
    say(
        f"metrics:  on/off {ratio:.3f} of the replies/s ({ratio - 1:+.1%}), "
        f"{cpu_ratio:.3f}x the CPU a request (medians; scraped {scrapes} times)"
    )
    return {
        **median,
        "scrapes": scrapes,
        "ratio": round(ratio, 4),
        "cpu_ratio": round(cpu_ratio, 4),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reply_flood", description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each flood")
    parser.add_argument("--connections", type=int, default=64, help="keep-alive connections")
    parser.add_argument("--no-ceiling", action="store_true", help="skip the bare aiohttp run")
    parser.add_argument(
        "--no-metrics-run", action="store_true", help="skip the runs with --metrics on"
    )
    parser.add_argument(
        "--metrics-rounds", type=int, default=2, help="floods with metrics on (and as many off)"
    )
    parser.add_argument("--client", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--stamps", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.connections < 1:
        parser.error("--seconds and --connections must be positive")
    if args.client:
        return client_main(args.client, args.seconds, args.connections, args.out, args.stamps)

    figures: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "seconds": args.seconds,
        "connections": args.connections,
    }
    if not args.no_ceiling:
        with bare_server() as url:
            cpu_before = time.process_time()
            ceiling, _ = flood(url, args.seconds, args.connections)
            ceiling_cpu = cpu_per_request_us(time.process_time() - cpu_before, ceiling)
        say(
            f"ceiling: bare aiohttp 'OK', {args.connections} connections, {ceiling.seconds:.1f} s: "
            f"{ceiling.per_second:,.0f} requests/s, p50 {ceiling.p50_ms:.2f} ms, "
            f"p99 {ceiling.p99_ms:.2f} ms, {ceiling_cpu:.0f} us CPU a request"
        )
        figures["ceiling"] = {
            **asdict(ceiling),
            "per_second": round(ceiling.per_second, 1),
            "cpu_us_per_request": round(ceiling_cpu, 1),
        }
    run = run_listener_flood(args.seconds, args.connections)
    if not args.no_metrics_run:
        figures["metrics"] = compare_metrics(
            run, args.seconds, args.connections, args.metrics_rounds
        )
    result: Flood = run.pop("flood")
    stored_per_second = run["stored"] / result.seconds
    listener_cpu = cpu_per_request_us(run["cpu_seconds"], result)
    say(
        f"listener: {args.connections} connections, {result.seconds:.1f} s: "
        f"{stored_per_second:,.0f} replies/s stored and acknowledged, "
        f"ack p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.2f} ms, max {result.max_ms:.1f} ms"
    )
    say(
        f"          {run['stored']:,} stored in {run['commits']:,} commits "
        f"({run['stored'] / max(run['commits'], 1):.1f} a commit), {result.failures} refused, "
        f"{listener_cpu:.0f} us CPU a request"
    )
    if "ceiling" in figures:
        ceiling_figures = figures["ceiling"]
        say(
            f"vs bare:  {stored_per_second / max(ceiling_figures['per_second'], 1):.0%} of its "
            f"requests/s, ack p99 {result.p99_ms / max(ceiling_figures['p99_ms'], 1e-9):.1f}x its p99, "
            f"CPU a request {listener_cpu / max(ceiling_figures['cpu_us_per_request'], 1e-9):.1f}x"
        )
    say(
        f"check:    {result.acknowledged:,} acknowledged, {run['missing']} of them missing "
        "from the store"
    )
    met = stored_per_second >= TARGET_PER_SECOND and result.p99_ms < TARGET_P99_MS
    say(
        f"targets:  >= {TARGET_PER_SECOND:,}/s and p99 < {TARGET_P99_MS:g} ms: "
        + ("met" if met and run["missing"] == 0 else "NOT met")
    )
    figures["listener"] = {
        **asdict(result),
        "stored": run["stored"],
        "stored_per_second": round(stored_per_second, 1),
        "commits": run["commits"],
        "missing": run["missing"],
        "cpu_us_per_request": round(listener_cpu, 1),
    }
    figures["targets_met"] = met and run["missing"] == 0
    print(json.dumps(figures))
    return 0 if run["missing"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
