"""Scheduled sends falling due together, sent by what a receiver runs, beside a list sent now.

    python -m benchmarks.scheduled_send              # 10,000 scheduled sends, 10,000-list
    python -m benchmarks.scheduled_send --quick      # 500 of each, in seconds

Starts `python -m gwdesk.sandbox serve` as a real subprocess and measures over
loopback HTTP, on a temporary profile store:

- scheduled: N one-recipient sends, each a scheduled send of its own, all due in the
  same minute (recorded beforehand, on a clock the benchmark holds before their time);
  then the clock reaches their time and `ScheduledSends.run_due` (what `gwdesk listen`
  and an open console run) takes and sends them: each taken in its own transaction,
  opt-outs looked up, sent by the runner, written to history. Printed: the delay from
  their time to each one's lodging (p50, p99; wall clock from the moment they fell
  due) and the throughput;
- list: the same N recipients as one list sent now (`Sending.send_list`: requests of
  100), the way the same recipients would go unscheduled; its throughput, and the
  ratio of the two.

The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.sandbox_throughput import sandbox_process
from gwdesk.app.profile_data import ProfileData, account_key, open_profile, sending_for
from gwdesk.app.scheduled import ScheduledSends
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.service import GatewayService
from gwdesk.store.outbox import EntryState


@dataclass
class Clock:
    """The benchmark's clock for the schedule: held before the sends' time while they are
    recorded, then moved to it."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now


def say(text: str) -> None:
    print(text, flush=True)


def numbers(start: int, count: int) -> list[str]:
    return [f"614{i:08d}" for i in range(start, start + count)]


@contextlib.asynccontextmanager
async def sending(url: str, folder: Path, clock: Clock) -> AsyncIterator[Sending]:
    profile = Profile(name="bench", rest_url=url, username="demo")
    data = ProfileData(folder / "profile.sqlite3", account_key(profile), profile.region)
    store = await asyncio.to_thread(open_profile, data)
    try:
        async with GatewayService(profile, Secret("demo")) as service:
            made = sending_for(service, store, data)
            made.now = clock
            made.hours_source = None  # every recipient may be reached at once: no hours
            yield made
    finally:
        await asyncio.to_thread(store.close)


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def scheduled(url: str, folder: Path, count: int) -> dict[str, float]:
    due = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=5)
    clock = Clock(due - timedelta(minutes=4))
    async with sending(url, folder, clock) as made:
        flow = ScheduledSends(made)
        message = SmsMessage(Channel.REST_SMS, "Your appointment is tomorrow at 10")
        started = time.perf_counter()
        for i, number in enumerate(numbers(0, count)):
            await flow.schedule(message, [number], due + timedelta(seconds=i * 50 / count))
        recorded = time.perf_counter() - started
        say(f"scheduled: {count:,} sends recorded in {recorded:.1f} s (before their time)")
        clock.now = due + timedelta(minutes=1)  # every one of them is due now
        fell_due = time.time()
        started = time.perf_counter()
        outcomes = await flow.run_due()
        elapsed = time.perf_counter() - started
        outbox = made.runner.outbox
        batches = [o.batch.id for o in outcomes]
        entries = [e for b in batches for e in await asyncio.to_thread(outbox.entries, b)]
    lodged = [e for e in entries if e.state is EntryState.LODGED]
    delays = [(e.updated_us / 1e6) - fell_due for e in lodged]
    return {
        "scheduled_sends": float(count),
        "scheduled_lodged": float(len(lodged)),
        "scheduled_seconds": elapsed,
        "scheduled_per_second": len(lodged) / elapsed if elapsed else 0.0,
        "delay_p50_s": statistics.median(delays) if delays else float("nan"),
        "delay_p99_s": percentile(delays, 0.99) if delays else float("nan"),
    }


async def listed(url: str, folder: Path, count: int) -> dict[str, float]:
    clock = Clock(datetime.now(UTC))
    async with sending(url, folder, clock) as made:
        message = SmsMessage(Channel.REST_SMS, "Your appointment is tomorrow at 10")
        started = time.perf_counter()
        outcome = await made.send_list(message, numbers(count, count))
        elapsed = time.perf_counter() - started
    return {
        "list_recipients": float(count),
        "list_lodged": float(outcome.lodged_recipients),
        "list_seconds": elapsed,
        "list_per_second": outcome.lodged_recipients / elapsed if elapsed else 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="500 of each")
    args = parser.parse_args(argv)
    count = 500 if args.quick else args.count
    with tempfile.TemporaryDirectory(prefix="gwdesk-bench-") as tmp:
        folder = Path(tmp)
        with sandbox_process(folder / "gateway.sqlite3", folder / "sandbox.log") as url:
            (folder / "a").mkdir()
            (folder / "b").mkdir()
            figures = asyncio.run(scheduled(url, folder / "a", count))
            figures |= asyncio.run(listed(url, folder / "b", count))
    ratio = figures["scheduled_per_second"] / figures["list_per_second"]
    figures["throughput_ratio"] = ratio
    say(
        f"scheduled: {figures['scheduled_lodged']:,.0f} of {count:,} lodged in "
        f"{figures['scheduled_seconds']:.1f} s ({figures['scheduled_per_second']:,.0f}/s); "
        f"delay from their time to lodged p50 {figures['delay_p50_s']:.2f} s, "
        f"p99 {figures['delay_p99_s']:.2f} s"
    )
    say(
        f"list now: {figures['list_lodged']:,.0f} of {count:,} lodged in "
        f"{figures['list_seconds']:.1f} s ({figures['list_per_second']:,.0f}/s)"
    )
    say(f"throughput, scheduled / list: {ratio:.2f}")
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
