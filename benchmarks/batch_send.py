"""Recipients lodged per second sending a 100,000-recipient batch, beside the naive way.

    python -m benchmarks.batch_send                      # 100,000 recipients
    python -m benchmarks.batch_send --recipients 2000    # a smoke run in seconds

Each phase starts its own `python -m gwdesk.sandbox serve --port 0` on a fresh
temporary database as a real subprocess, so one phase's background work (the sandbox
creates a batch's messages after it accepted the request) never slows the next, and
measures over loopback HTTP:

- gwdesk, the console's Batch tab path: a CSV file of distinct Australian mobiles
  (national, spaced and international formats) imported and checked as the tab does
  (`import_file` on a worker thread), the message checked (`app.sms.check_message`),
  the batch recorded in the profile's durable outbox (`Sending.record_list`: one
  entry per 100-recipient request, each with its own ExternalSystemId), then sent by
  `Sending.run_list` (the outbox runner, the tab's default 4 lanes, the history row
  written) while `app.status.follow` polls `status?batch_code=` for progress, as the
  tab does. Figures: seconds to import,
  seconds to record, recipients lodged per second (every request accepted) with the
  CPU client and sandbox used meanwhile, seconds until the sandbox's database (opened
  read-only) holds every message, seconds until the tab's own progress shows it, and
  the client's peak RSS;
- cli: `gwdesk send --csv FILE`'s path, `cli.commands.send_recipients` (the file read
  and checked once by `gwdesk.importing` on a worker thread, as the Batch tab does)
  then `Sending.send_list` with that list (record, lodge at its default 4 lanes,
  history), and the reading and checking alone;
- sweep: the Batch tab path at parallel 1, 4 and 8 on a smaller batch;
- naive: what a public client of this gateway writes, a sequential loop of blocking
  `httpx.post` calls of 100 already-normalised recipients each, a new connection per
  request, no outbox (one token fetched up front), on a smaller batch; its time for
  the full count is scaled from its rate.

The sandbox creates a batch's messages in the background (25 of each pending batch a
round, 20 ms between rounds) in the same process that answers the requests, so "all
created" is its pace as much as gwdesk's, and it shares the machine's two cores with
the client: the CPU figures say which side the time goes to.

With `--store postgresql://…` (a throwaway database: the benchmark writes batches and
history rows into it) the outbox and the history are a team's server's instead of the
profile file's, as a team profile's are; the rest of the profile stays in its file.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import io
import json
import os
import platform
import resource
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.sandbox_throughput import sandbox_server
from gwdesk.app.profile_data import ProfileData, account_key, sending_for
from gwdesk.app.send_values import DEFAULT_LANES, MAX_RECIPIENTS_PER_REQUEST
from gwdesk.app.sending import Sending
from gwdesk.app.sms import SmsForm, SmsMessage, check_message
from gwdesk.app.status import Progress, follow
from gwdesk.cli import Output
from gwdesk.cli.send import send_recipients
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.service import GatewayService
from gwdesk.importing.recipients import import_file
from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.history import HistoryStore
from gwdesk.store.local import LocalStore
from gwdesk.store.outbox import EntryState, OutboxEntry, OutboxStore
from gwdesk.store.shared import ServerData

CREATED_TIMEOUT = 900.0
POLL_INTERVAL = 0.1
TEXT = "Benchmark batch: your appointment is tomorrow at 10:30. Reply STOP to opt out."


def say(text: str) -> None:
    print(text, flush=True)


def rss_mb() -> float:
    """This process's resident set now."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1_048_576


def peak_rss_mb() -> float:
    """This process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Sandbox:
    url: str
    pid: int
    db: Path
    folder: Path
    """Where this phase's outbox file goes."""


def recipient_texts(count: int) -> list[str]:
    """Distinct Australian mobiles as operators type them: national, spaced, international."""
    texts = []
    for i in range(count):
        digits = f"4{i:08d}"
        form = i % 4
        if form == 0:
            texts.append(f"0{digits}")
        elif form == 1:
            texts.append(f"0{digits[:3]} {digits[3:6]} {digits[6:]}")
        elif form == 2:
            texts.append(f"+61 {digits[:3]} {digits[3:6]} {digits[6:]}")
        else:
            texts.append(f"61{digits}")
    return texts


def write_csv(path: Path, count: int) -> Path:
    """A recipient file as operators bring one: a name column and a mobile column."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(("Name", "Mobile"))
        writer.writerows((f"Customer {i}", text) for i, text in enumerate(recipient_texts(count)))
    return path


def created_in_sandbox(db: Path) -> int:
    """Messages the sandbox has created so far (read-only; in WAL mode a reader never
    holds up the sandbox's writes)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
    except sqlite3.OperationalError:
        return 0  # the schema is not there yet
    finally:
        conn.close()


async def wait_created(db: Path, count: int, started: float) -> float:
    """Seconds from `started` until the sandbox holds `count` messages (polled off the loop)."""
    deadline = time.perf_counter() + CREATED_TIMEOUT
    while await asyncio.to_thread(created_in_sandbox, db) < count:
        if time.perf_counter() > deadline:
            raise SystemExit(f"the sandbox did not create {count:,} messages in time")
        await asyncio.sleep(POLL_INTERVAL)
    return time.perf_counter() - started


@contextmanager
def profile_sending(
    service: GatewayService, folder: Path, store_url: str | None = None
) -> Iterator[Sending]:
    """What the console's session (and `gwdesk send`) builds: the profile's `Sending`
    over its store (outbox and history), on a throw-away file, or with its outbox and
    history on a team's server (`store_url`)."""
    data = ProfileData(
        folder / "profile.sqlite3", account_key(service.profile), service.profile.region
    )
    store = LocalStore(data.path)
    with contextlib.ExitStack() as team:
        try:
            if store_url:
                team.callback(on_server(store, store_url))
            yield sending_for(service, store, data)
        finally:
            store.close()


def on_server(store: LocalStore, url: str) -> Callable[[], None]:
    """Move the store's outbox and history onto a team's server (as a team profile has
    them); what closes the server's side afterwards."""
    from gwdesk.store.postgres import PostgresDatabase

    server = ServerData(PostgresDatabase(url))
    writer = BackgroundWriter(server.open())
    store.outbox.close()
    store.outbox = OutboxStore(server)
    store.history = HistoryStore(server, writer)

    def close() -> None:
        writer.close()
        server.close()

    return close


def message_for(profile: Profile) -> SmsMessage:
    return check_message(SmsForm(text=TEXT), profile.region)


def profile_for(url: str) -> Profile:
    return Profile(name="bench", rest_url=url, username="demo")


async def tab_send(
    sandbox: Sandbox,
    file: Path,
    count: int,
    lanes: int,
    *,
    follow_to_end: bool = True,
    store_url: str | None = None,
) -> dict[str, Any]:
    """The Batch tab's path: import, record in the outbox, send in lanes while following.

    Without `follow_to_end`, following stops once the sandbox holds every message
    (its next poll would only confirm it, a second later).
    """
    rss_before = rss_mb()
    profile = profile_for(sandbox.url)
    async with GatewayService(profile, Secret("demo")) as service:
        with profile_sending(service, sandbox.folder, store_url) as sending:
            # The tab imports on a worker thread: read, guess the column, normalise, dedup.
            started = time.perf_counter()
            _table, checked = await asyncio.to_thread(import_file, file, profile.region)
            imported = time.perf_counter() - started
            if len(checked.numbers) != count:
                raise SystemExit(f"the import kept {len(checked.numbers):,} of {count:,} numbers")
            message = message_for(profile)

            started = time.perf_counter()
            batch, recorded_entries = await sending.record_list(message, checked.numbers)
            recorded = time.perf_counter() - started
            rows = {e.id: row for row, e in enumerate(recorded_entries)}
            entries = list(recorded_entries)

            def changed(entry: OutboxEntry) -> None:
                """Where the tab takes the entry's new row and repaints it."""
                entries[rows[entry.id]] = entry

            sending_now = True
            progress = Progress()
            stop, follow_stop = asyncio.Event(), asyncio.Event()
            client_cpu, sandbox_cpu = time.process_time(), cpu_seconds(sandbox.pid)
            started = time.perf_counter()
            # Both at once, as the tab starts them: `follow` keeps polling while sending.
            following = asyncio.create_task(
                follow(
                    service,
                    lambda: entries,
                    progress,
                    stop=follow_stop,
                    busy=lambda: sending_now,
                    on_change=lambda _entry: None,
                )
            )
            created_task = asyncio.create_task(wait_created(sandbox.db, count, started))
            outcome = await sending.run_list(
                batch, recorded_entries, message, lanes=lanes, stop=stop, on_change=changed
            )
            sending_now = False
            lodged = time.perf_counter() - started
            client_cpu = time.process_time() - client_cpu
            sandbox_cpu = cpu_seconds(sandbox.pid) - sandbox_cpu
            if not outcome.ok:
                failed = next(e for e in entries if e.state is not EntryState.LODGED)
                raise SystemExit(f"request {failed.seq} was not lodged: {failed.reason}")
            created = await created_task
            if not follow_to_end:
                follow_stop.set()
            await following
            followed = time.perf_counter() - started
            if follow_to_end and progress.total(entries) != count:
                shown = progress.total(entries)
                raise SystemExit(f"the tab's progress shows {shown:,} of {count:,} created")
    return {
        "requests": len(entries),
        "outbox_entries": batch.entries,
        "import_seconds": imported,
        "record_seconds": recorded,
        "lodge_seconds": lodged,
        "lodge_client_cpu_seconds": client_cpu,
        "lodge_sandbox_cpu_seconds": sandbox_cpu,
        "created_seconds": created,
        "progress_seconds": followed,
        "rss_before_mb": rss_before,
    }


async def cli_send(
    sandbox: Sandbox, file: Path, count: int, store_url: str | None = None
) -> tuple[float, float]:
    """`gwdesk send --csv FILE`'s path: (seconds to read and check the file, seconds to
    read it, check it and send it through `Sending.send_list`: record, lodge, history)."""
    profile = profile_for(sandbox.url)
    args = argparse.Namespace(csv=str(file), column=None, to=None, skip_invalid=False)
    notes = Output(json_mode=False, out=io.StringIO(), err=io.StringIO())
    async with GatewayService(profile, Secret("demo")) as service:
        with profile_sending(service, sandbox.folder, store_url) as sending:
            # The reading and checking alone first.
            started = time.perf_counter()
            check = await send_recipients(args, profile.region, notes)
            checked = time.perf_counter() - started
            if len(check.numbers) != count:
                raise SystemExit(f"the check kept {len(check.numbers):,} of {count:,}")
            started = time.perf_counter()
            check = await send_recipients(args, profile.region, notes)
            outcome = await sending.send_list(message_for(profile), check.numbers)
            seconds = time.perf_counter() - started
    if not outcome.ok or outcome.lodged_recipients != count:
        raise SystemExit(f"gwdesk send failed: {outcome.failed[:1]}")
    return checked, seconds


def naive_send(url: str, count: int) -> float:
    """Sequential blocking posts of 100 normalised recipients, a new connection each."""
    token = httpx.post(
        f"{url}/v2/oauth/access_token",
        data={"grant_type": "password", "username": "demo", "password": "demo"},
    ).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    numbers = [f"614{i:08d}" for i in range(90_000_000, 90_000_000 + count)]
    started = time.perf_counter()
    for start in range(0, count, MAX_RECIPIENTS_PER_REQUEST):
        response = httpx.post(
            f"{url}/v2/message/send",
            json={
                "Message": TEXT,
                "Recipients": numbers[start : start + MAX_RECIPIENTS_PER_REQUEST],
            },
            headers=headers,
            timeout=60,
        )
        response.raise_for_status()
    return time.perf_counter() - started


@contextmanager
def phase(temp: Path, name: str) -> Iterator[Sandbox]:
    """A fresh sandbox, on its own database, and a folder for one phase's outbox."""
    folder = temp / name
    folder.mkdir()
    db = folder / "sandbox.sqlite3"
    with sandbox_server(db, folder / "sandbox.log") as (url, process):
        yield Sandbox(url, process.pid, db, folder)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch_send", description=__doc__)
    parser.add_argument("--recipients", type=int, default=100_000, help="the batch's size")
    parser.add_argument(
        "--parallel", type=int, default=DEFAULT_LANES, help="the headline's parallel requests"
    )
    parser.add_argument(
        "--sweep-recipients", type=int, default=20_000, help="the batch of each parallel level"
    )
    parser.add_argument(
        "--naive-recipients", type=int, default=10_000, help="the naive loop's batch (scaled)"
    )
    parser.add_argument(
        "--store", metavar="URL", help="outbox and history on this (throwaway) PostgreSQL database"
    )
    args = parser.parse_args(argv)
    count = args.recipients
    if count < 1 or args.parallel < 1:
        parser.error("--recipients and --parallel must be at least 1")
    sweep_count = max(1, min(args.sweep_recipients, count))
    naive_count = max(1, min(args.naive_recipients, count))
    figures: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "recipients": count,
        "parallel": args.parallel,
        "store": "postgresql" if args.store else "sqlite",
    }
    with tempfile.TemporaryDirectory(prefix="gwdesk-batch-") as temp_name:
        temp = Path(temp_name)
        file = write_csv(temp / "recipients.csv", count)
        sweep_file = write_csv(temp / "sweep.csv", sweep_count)
        with phase(temp, "tab") as sandbox:
            say(f"sandbox at {sandbox.url}")
            tab = asyncio.run(tab_send(sandbox, file, count, args.parallel, store_url=args.store))
        peak = peak_rss_mb()
        rate = count / tab["lodge_seconds"]
        say(
            f"gwdesk: {count:,} recipients in {tab['requests']:,} requests through the outbox "
            f"(Batch tab path), parallel {args.parallel}"
        )
        say(
            f"        file imported and checked (read, normalised, deduplicated): "
            f"{tab['import_seconds']:.2f} s"
        )
        say(
            f"        recorded in the outbox ({tab['outbox_entries']:,} entries): "
            f"{tab['record_seconds']:.2f} s"
        )
        say(
            f"        lodged (every request accepted): {tab['lodge_seconds']:.2f} s, "
            f"{rate:,.0f} recipients/s (CPU meanwhile: client "
            f"{tab['lodge_client_cpu_seconds']:.1f} s, sandbox "
            f"{tab['lodge_sandbox_cpu_seconds']:.1f} s)"
        )
        say(
            f"        every message created in the sandbox {tab['created_seconds']:.2f} s after "
            f"the first request; the tab's progress showed it at {tab['progress_seconds']:.2f} s"
        )
        say(
            f"        client RSS {tab['rss_before_mb']:.0f} MB before, peak {peak:.0f} MB "
            f"(+{peak - tab['rss_before_mb']:.0f} MB)"
        )
        with phase(temp, "cli") as sandbox:
            cli_check, cli = asyncio.run(cli_send(sandbox, file, count, args.store))
        say(
            f"cli:    gwdesk send --csv's path (send_recipients: gwdesk.importing once; "
            f"Sending.send_list: record, lodge, parallel {DEFAULT_LANES}): {cli:.2f} s, "
            f"{count / cli:,.0f} recipients/s; "
            f"of which reading and checking {cli_check:.2f} s"
        )
        sweep: dict[str, dict[str, float]] = {}
        for level in (1, 4, 8):
            with phase(temp, f"parallel-{level}") as sandbox:
                done = asyncio.run(
                    tab_send(
                        sandbox,
                        sweep_file,
                        sweep_count,
                        level,
                        follow_to_end=False,
                        store_url=args.store,
                    )
                )
            sweep[str(level)] = {
                "lodge_seconds": round(done["lodge_seconds"], 3),
                "recipients_per_second": round(sweep_count / done["lodge_seconds"], 1),
                "created_seconds": round(done["created_seconds"], 3),
            }
            say(
                f"sweep:  {sweep_count:,} recipients, parallel {level}: lodged in "
                f"{done['lodge_seconds']:.2f} s, {sweep_count / done['lodge_seconds']:,.0f} "
                f"recipients/s; all created at {done['created_seconds']:.2f} s"
            )
        with phase(temp, "naive") as sandbox:
            naive = naive_send(sandbox.url, naive_count)
        naive_rate = naive_count / naive
        say(
            f"naive:  {naive_count:,} recipients, {-(-naive_count // MAX_RECIPIENTS_PER_REQUEST):,} "
            f"sequential httpx.post of 100, new connection each, no outbox: {naive:.2f} s, "
            f"{naive_rate:,.0f} recipients/s (scaled to {count:,}: {count / naive_rate:.1f} s)"
        )
        say(f"        gwdesk lodges at {rate / naive_rate:.1f}x the naive rate")
    figures.update(
        {
            "requests": tab["requests"],
            "outbox_entries": tab["outbox_entries"],
            "import_seconds": round(tab["import_seconds"], 3),
            "record_seconds": round(tab["record_seconds"], 3),
            "lodge_seconds": round(tab["lodge_seconds"], 3),
            "recipients_lodged_per_second": round(rate, 1),
            "lodge_client_cpu_seconds": round(tab["lodge_client_cpu_seconds"], 2),
            "lodge_sandbox_cpu_seconds": round(tab["lodge_sandbox_cpu_seconds"], 2),
            "created_seconds": round(tab["created_seconds"], 3),
            "progress_complete_seconds": round(tab["progress_seconds"], 3),
            "rss_before_mb": round(tab["rss_before_mb"], 1),
            "peak_rss_mb": round(peak, 1),
            "cli_check_seconds": round(cli_check, 3),
            "cli_send_seconds": round(cli, 3),
            "cli_recipients_per_second": round(count / cli, 1),
            "sweep_recipients": sweep_count,
            "sweep": sweep,
            "naive_recipients": naive_count,
            "naive_seconds": round(naive, 3),
            "naive_recipients_per_second": round(naive_rate, 1),
            "naive_scaled_seconds": round(count / naive_rate, 3),
            "speedup": round(rate / naive_rate, 2),
        }
    )
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
