"""How fast the console's log cache fills from the gateway, beside the naive way.

    python -m benchmarks.log_sync                  # 1,000,000 records
    python -m benchmarks.log_sync --quick          # a smoke run in seconds
    python -m benchmarks.log_sync --sandbox-db F   # reuse a seeded sandbox file
    python -m benchmarks.log_sync --keep-cache F   # keep the filled cache (benchmarks.logs_tab)

Seeds a sandbox account (`gwdesk.sandbox.seed`), starts `python -m gwdesk.sandbox
serve` on it as a real subprocess and measures over loopback HTTP:

- sync: `LogCacheSync` into an empty profile store (the console's first sync: pages
  fetched two at a time, parsed and written on a worker thread, FTS and every index
  maintained), records per second until the cache is complete, and peak RSS;
- incremental: a second sync when nothing changed, and one after new lodgings;
- naive: what a first attempt looks like, `async for record in service.sync_logs()`
  (pydantic models) with one upsert per record on the event loop, committed per page,
  over the first `--naive-records` records.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sqlite3
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
from gwdesk.gateway.service import GatewayService
from gwdesk.logs.cache import UPSERT, now_us
from gwdesk.logs.rows import TimeReader, to_row
from gwdesk.logs.sync import LogCacheSync, SyncProgress, SyncReport
from gwdesk.sandbox.seed import seed_account
from gwdesk.store.local import LocalStore


def say(text: str) -> None:
    print(text, flush=True)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> tuple[float, float]:
    """CPU time used so far by this process and by its children still running (the sandbox)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        try:
            running = (task / "children").read_text().split()
        except OSError:  # the thread ended meanwhile
            continue
        for pid in running:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children += (int(fields[11]) + int(fields[12])) / tick
    return own.ru_utime + own.ru_stime, children


def service_for(base: str) -> GatewayService:
    profile = Profile(name="bench", rest_url=base, username="demo", auth="oauth")
    return GatewayService(profile, Secret("demo"))


async def first_sync(
    base: str, store_path: Path, phases: dict[str, float] | None = None
) -> tuple[SyncReport, float]:
    last = [0.0]

    def progress(step: SyncProgress, _report: SyncReport) -> None:
        now = time.perf_counter()
        if phases is not None:
            phases.setdefault(step.phase, now)
        if now - last[0] > 5:
            last[0] = now
            total = f" of {step.total:,}" if step.total else ""
            say(f"  {step.phase}: {step.done:,}{total}")

    LocalStore(store_path).close()  # create and migrate the profile file
    async with service_for(base) as service:
        started = time.perf_counter()
        report = await LogCacheSync(service, store_path, progress=progress).run()
        return report, time.perf_counter() - started


async def incremental(base: str, store_path: Path, lodge: int) -> tuple[SyncReport, float]:
    async with service_for(base) as service:
        for start in range(0, lodge, 100):
            recipients = [f"6141{n:07d}" for n in range(start, min(lodge, start + 100))]
            await service.rest.send_once({"Message": "Incremental", "Recipients": recipients})
        if lodge:
            await asyncio.sleep(max(1.0, lodge / 1000))  # the sandbox loads batches ~1,250/s
        await service.rest.tokens.get()  # the console's service holds a token already
        started = time.perf_counter()
        report = await LogCacheSync(service, store_path).run()
        return report, time.perf_counter() - started


async def naive_sync(base: str, store_path: Path, limit: int) -> tuple[int, float]:
    """One upsert per pydantic record on the loop, a commit per page of 1,000."""
    LocalStore(store_path).close()
    conn = sqlite3.connect(store_path, isolation_level=None)
    async with service_for(base) as service:
        times = TimeReader(service.profile.zone)
        count = 0
        started = time.perf_counter()
        conn.execute("BEGIN")
        async for record in service.sync_logs():
            row = to_row(record.model_dump(by_alias=True), times, now_us())
            conn.execute(UPSERT, row)
            conn.execute(
                "INSERT INTO log_text(rowid, message, subject) SELECT id, message, subject "
                "FROM log_records WHERE message_id = ?",
                (record.message_id,),
            )
            count += 1
            if count % 1000 == 0:
                conn.execute("COMMIT")
                conn.execute("BEGIN")
            if count >= limit:
                break
        conn.execute("COMMIT")
        elapsed = time.perf_counter() - started
    conn.close()
    return count, elapsed


def run(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "messages": args.messages,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
    }
    with tempfile.TemporaryDirectory(prefix="gwdesk-logsync-") as folder:
        work = Path(folder)
        sandbox_db = Path(args.sandbox_db) if args.sandbox_db else work / "sandbox.sqlite3"
        if not args.sandbox_db or not sandbox_db.exists():
            say(f"seeding {args.messages:,} records into {sandbox_db} ...")
            seeded = seed_account(sandbox_db, args.messages, seed=1)
            say(f"seeded in {seeded.seconds:.1f} s")
        with sqlite3.connect(sandbox_db) as probe:
            expected = probe.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        figures["messages"] = expected
        with sandbox_process(sandbox_db, work / "sandbox.log") as base:
            say(f"sandbox subprocess at {base}")
            httpx.get(base + "/v2/message/logs", timeout=30)  # warm the file cache a little
            store = Path(args.keep_cache) if args.keep_cache else work / "profile.sqlite3"
            for suffix in ("", "-wal", "-shm"):
                Path(f"{store}{suffix}").unlink(missing_ok=True)
            rss_before = peak_rss_mb()
            phases: dict[str, float] = {}
            cpu_before = cpu_seconds()
            began = time.perf_counter()
            report, seconds = asyncio.run(first_sync(base, store, phases))
            ours, sandbox = (b - a for a, b in zip(cpu_before, cpu_seconds(), strict=True))
            held = sqlite3.connect(store).execute("SELECT COUNT(*) FROM log_records").fetchone()[0]
            rate = held / seconds
            figures.update(
                sync_records=held,
                sync_seconds=round(seconds, 2),
                sync_records_per_s=round(rate),
                sync_pages=report.pages,
                sync_target_records_per_s=30_000,
                sync_peak_rss_mb=round(peak_rss_mb()),
                sync_rss_growth_mb=round(peak_rss_mb() - rss_before),
                cache_file_mb=round(store.stat().st_size / 2**20),
                sync_fetch_seconds=round(phases.get("indexing", began + seconds) - began, 2),
                sync_client_cpu_us_per_record=round(ours / held * 1e6, 1),
                sync_sandbox_cpu_us_per_record=round(sandbox / held * 1e6, 1),
            )
            say(
                f"  pages fetched and written in {figures['sync_fetch_seconds']} s, then indexes; "
                f"CPU per record: this process {ours / held * 1e6:.1f} us, "
                f"the sandbox {sandbox / held * 1e6:.1f} us"
            )
            say(
                f"first sync: {held:,} records in {seconds:.1f} s = {rate:,.0f} records/s "
                f"({report.pages:,} pages; peak RSS {peak_rss_mb():,.0f} MB; "
                f"cache file {store.stat().st_size / 2**20:,.0f} MB)"
            )
            if held != expected:
                raise SystemExit(f"the cache holds {held:,} of {expected:,} records")

            report, seconds = asyncio.run(incremental(base, store, 0))
            figures["incremental_nothing_new_ms"] = round(seconds * 1000, 1)
            say(f"incremental sync, nothing new: {seconds * 1000:.0f} ms ({report.summary()})")
            report, seconds = asyncio.run(incremental(base, store, args.lodge))
            figures["incremental_new"] = report.new
            figures["incremental_new_ms"] = round(seconds * 1000, 1)
            say(
                f"incremental sync after lodging {args.lodge:,}: {seconds * 1000:.0f} ms "
                f"({report.summary()})"
            )

            count, seconds = asyncio.run(naive_sync(base, work / "naive.sqlite3", args.naive))
            figures["naive_records"] = count
            figures["naive_records_per_s"] = round(count / seconds)
            say(
                f"naive (since + pydantic + one upsert per record on the loop): {count:,} records "
                f"in {seconds:.1f} s = {count / seconds:,.0f} records/s"
            )
    return figures


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.log_sync")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--messages", type=int, default=None, metavar="N")
    parser.add_argument("--naive", type=int, default=None, metavar="N", help="naive records")
    parser.add_argument("--lodge", type=int, default=None, metavar="N", help="new before sync 3")
    parser.add_argument("--sandbox-db", default=None, metavar="FILE", help="seeded sandbox file")
    parser.add_argument(
        "--keep-cache", default=None, metavar="FILE", help="where to keep the cache"
    )
    args = parser.parse_args(argv)
    defaults = {
        "messages": 3_000 if args.quick else 1_000_000,
        "naive": 1_000 if args.quick else 100_000,
        "lodge": 200 if args.quick else 2_000,
    }
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
        if getattr(args, name) < (0 if name == "lodge" else 1):
            parser.error(f"--{name} is too small")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    figures = run(parse_args(argv))
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
