"""A soak: batches of 50,000 through the durable outbox under ~5% faults, replies at 200/s.

    python -m benchmarks.soak                   # 10 minutes
    python -m benchmarks.soak --minutes 0.5     # a smoke run (the last batch always finishes)

Not part of the test suite. Three processes, as in the field:

- the gateway: `python -m gwdesk.sandbox serve` on a temporary database, injecting
  faults on `send` and `status` (503s, 429s, connections dropped before and after
  the message was lodged, answers held back; 5% of requests by default, `--faults`);
- the client (this process): batches of `--recipients` sent exactly as `gwdesk send
  --csv` sends them (`gwdesk.cli.profile_sending`: the application core's
  `Sending.send_list` over the profile's store, its `OutboxRunner` with
  `--concurrency` lanes); what a batch still holds after its send (failures that may
  pass, entries left unknown) goes through `Recovery.resume`, as `gwdesk outbox
  resume` would. A batch counts as complete once the gateway has
  created all its messages; then the next starts, until the time is up (the batch in
  progress then finishes). Meanwhile the reply listener (`ReplyInbox` +
  `ReplyListener` as `gwdesk listen` runs them) stores into the same temporary profile
  file;
- the replies: this module with `--reply-client` fills the listener's rendered
  `ReplyPath` template and sends `--reply-rate` GET webhooks a second, paced, over a
  few keep-alive connections, until the client side is done (its stdin closes).

At the end the sandbox database is read (read-only): messages lodged, recipients
lodged more than once within a batch (must be 0), recipients never lodged; the
sandbox's own count of injected faults; replies acknowledged against stored (must
be equal, and every acknowledged one found); the client's peak RSS. The last line
of the output is one JSON object with every figure; the exit code is 1 when a
check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from benchmarks.reply_flood import ZONE, missing_acknowledged
from benchmarks.sandbox_throughput import sandbox_server
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsMessage
from gwdesk.cli import profile_sending
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.domain.webhook_time import format_webhook_time
from gwdesk.gateway.service import GatewayService
from gwdesk.paths import DATA_ENV, AppPaths
from gwdesk.replies import ReplyInbox, ReplyListener
from gwdesk.replies.template import ReplyTemplate
from gwdesk.store.database import slug
from gwdesk.store.outbox import EntryState
from gwdesk.store.replies import ReplyStore

DEFAULT_FAULTS: Final = (
    "send+status:503=0.015@1,429=0.01@1,drop_before=0.005,drop_after=0.01,slow=0.01@2"
)
"""5% of send and status requests: refused (503, 429), dropped before or after the
message was lodged, or answered 2 s late."""
PROFILE: Final = "soak"
CREATED_TIMEOUT: Final = 600.0
"""How long a batch's messages may take to appear at the gateway after its send."""
MAX_RESUMES: Final = 5
REPLY_CONNECTIONS: Final = 8
OPEN: Final = (EntryState.PENDING, EntryState.IN_FLIGHT, EntryState.UNKNOWN, EntryState.FAILED)


def say(text: str) -> None:
    print(text, flush=True)


def peak_rss_mb() -> float:
    """This process's peak resident set (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---- the reply client (a separate process) ---------------------------------------------------


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """Block until the parent closes our stdin, then stop pacing."""
    with contextlib.suppress(OSError, ValueError):
        while sys.stdin.buffer.read(4096):
            pass
    loop.call_soon_threadsafe(stop.set)


async def _pace(rendered: str, rate: float, connections: int, max_seconds: float) -> dict[str, Any]:
    template = ReplyTemplate.parse(rendered)
    host, port = template.host, template.port
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    threading.Thread(target=_watch_stdin, args=(loop, stop), daemon=True).start()
    queue: asyncio.Queue[tuple[int, float] | None] = asyncio.Queue()
    acked: list[int] = []
    failures: list[str] = []
    latencies: array[float] = array("d")
    lags: array[float] = array("d")
    stamps: dict[int, str] = {}

    def target(seq: int) -> str:
        second = int(time.time())
        if second not in stamps:
            stamps.clear()
            stamps[second] = format_webhook_time(datetime.fromtimestamp(second, UTC), ZONE)
        stamp = stamps[second]
        url = template.fill(
            {
                "FROM": f"6149{seq % 10_000_000:07d}",
                "TO": "61400000000",
                "MSG": f"flood 0-{seq}",
                "SENTDTS": stamp,
                "RCVDDTS": stamp,
            }
        )
        parts = urlsplit(url)
        return f"{parts.path}?{parts.query}"

    async def connection() -> None:
        reader: asyncio.StreamReader | None = None
        writer: asyncio.StreamWriter | None = None
        while (item := await queue.get()) is not None:
            seq, due = item
            try:
                if reader is None or writer is None:
                    reader, writer = await asyncio.open_connection(host, port)
                request = (
                    f"GET {target(seq)} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                    "User-Agent: gwdesk-soak/1\r\n\r\n"
                ).encode("ascii")
                started = time.perf_counter()
                lags.append(started - due)
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                closing = False
                for line in head.split(b"\r\n"):
                    lower = line.lower()
                    if lower.startswith(b"content-length:"):
                        length = int(line[15:])
                    elif lower.startswith(b"connection:") and b"close" in lower:
                        closing = True
                body = await reader.readexactly(length)
                latencies.append(time.perf_counter() - started)
                if head.startswith(b"HTTP/1.1 200") and body.strip() == b"OK":
                    acked.append(seq)
                else:
                    failures.append(f"{seq}: {head.splitlines()[0].decode()} {body[:80]!r}")
                if closing:
                    writer.close()
                    reader = writer = None
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
                failures.append(f"{seq}: {type(exc).__name__}: {exc}")
                if writer is not None:
                    writer.close()
                reader = writer = None
        if writer is not None:
            writer.close()

    workers = [asyncio.create_task(connection()) for _ in range(connections)]
    started = time.perf_counter()
    end = started + max_seconds
    seq = 0
    while not stop.is_set() and time.perf_counter() < end:
        due = started + seq / rate
        wait = due - time.perf_counter()
        if wait > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)
            continue
        queue.put_nowait((seq, due))
        seq += 1
    for _ in workers:
        queue.put_nowait(None)
    await asyncio.gather(*workers)
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)

    def percentile(values: Sequence[float], fraction: float) -> float:
        return values[min(len(values) - 1, int(fraction * len(values)))] * 1000 if values else 0

    return {
        "seconds": round(elapsed, 2),
        "sent": seq,
        "acknowledged": len(acked),
        "per_second": round(len(acked) / elapsed, 1) if elapsed else 0.0,
        "failures": len(failures),
        "failure_examples": failures[:5],
        "p50_ms": round(percentile(ordered, 0.50), 2),
        "p99_ms": round(percentile(ordered, 0.99), 2),
        "max_ms": round(ordered[-1] * 1000, 1) if ordered else 0.0,
        "mean_ms": round(statistics.fmean(ordered) * 1000, 2) if ordered else 0.0,
        "max_lag_ms": round(max(lags, default=0.0) * 1000, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "acked": acked,
    }


def reply_client_main(rendered: str, rate: float, max_seconds: float, out: Path) -> int:
    result = asyncio.run(_pace(rendered, rate, REPLY_CONNECTIONS, max_seconds))
    out.write_text(json.dumps(result))
    return 0


@contextlib.contextmanager
def reply_pacer(rendered: str, rate: float, max_seconds: float, temp: Path) -> Iterator[list[Any]]:
    """The reply client process for the body of the `with`; its figures land in the list."""
    out = temp / "replies.json"
    command = [
        sys.executable, "-m", "benchmarks.soak", "--reply-client", rendered,
        "--reply-rate", str(rate), "--max-seconds", str(max_seconds), "--out", str(out),
    ]  # fmt: skip
    figures: list[Any] = []
    with (temp / "replies.log").open("wb") as errors:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=errors)
        try:
            yield figures
        finally:
            assert process.stdin is not None
            process.stdin.close()
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    if process.returncode != 0 or not out.exists():
        detail = (temp / "replies.log").read_text("utf-8", "replace")[-3000:]
        raise SystemExit(f"the reply client failed:\n{detail}")
    figures.append(json.loads(out.read_text()))


# ---- the gateway (a separate process) --------------------------------------------------------


@contextlib.contextmanager
def sandbox_process(db: Path, faults: str, seed: int, log: Path) -> Iterator[str]:
    """`gwdesk-sandbox serve` with faults on a free port; yields its REST base URL."""
    options = ("--faults", faults, "--seed", str(seed), "--exit-with-parent")
    with sandbox_server(db, log, *options, stop_timeout=30) as (url, _process):
        yield url


def read_only(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def last_message_id(db: Path) -> int:
    conn = read_only(db)
    try:
        return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()[0])
    finally:
        conn.close()


def created_since(db: Path, after_id: int, text: str) -> int:
    """Distinct recipients of `text` the gateway has created messages for."""
    conn = read_only(db)
    try:
        row = conn.execute(
            "SELECT COUNT(DISTINCT to_number) FROM messages WHERE id > ? AND message = ?",
            (after_id, text),
        ).fetchone()
        return int(row[0])
    finally:
        conn.close()


@dataclass(frozen=True, slots=True)
class Lodged:
    messages: int
    """Every message in the sandbox database."""
    duplicates: int
    """Messages beyond the first for a recipient within one batch (must be 0)."""
    missing: int
    """Recipients of a batch with no message at all."""


def count_lodged(db: Path, texts: Sequence[str], recipients: int) -> Lodged:
    conn = read_only(db)
    try:
        total = int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
        per_batch = {
            text: (count, distinct)
            for text, count, distinct in conn.execute(
                "SELECT message, COUNT(*), COUNT(DISTINCT to_number) FROM messages GROUP BY message"
            )
        }
    finally:
        conn.close()
    duplicates = sum(count - distinct for count, distinct in per_batch.values())
    missing = sum(recipients - per_batch.get(text, (0, 0))[1] for text in texts)
    return Lodged(total, duplicates, missing)


def injected_faults(url: str) -> dict[str, Any]:
    """The sandbox's own count of what it injected, by kind, and requests by endpoint."""
    snapshot = httpx.get(f"{url}/sandbox/faults", timeout=30).json()
    injected = {k: v for k, v in snapshot["injected"].items() if v and k != "latency"}
    return {"injected": injected, "requests": snapshot["requests"]}


# ---- the client (this process) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchRun:
    number: int
    text: str
    send_seconds: float
    """Until the outbox held nothing open (after resumes)."""
    created_seconds: float
    """Until the gateway had a message for every recipient."""
    failed_first_pass: int
    """Recipients whose request failed in the send itself (then resumed)."""
    resumes: int
    lodged_in_outbox: int
    left_open: int
    """Recipients the outbox still holds unsettled or failed (must be 0)."""


def numbers(count: int) -> list[str]:
    return [f"6142{i:07d}" for i in range(count)]


async def _open_recipients(sending: Sending, batch_id: int) -> tuple[int, int]:
    batch = await asyncio.to_thread(sending.runner.outbox.batch, batch_id)
    if batch is None:
        return (0, 0)
    return (batch.recipients_in(EntryState.LODGED), batch.recipients_in(*OPEN))


async def one_batch(
    sending: Sending, number: int, recipients: list[str], concurrency: int, db: Path
) -> BatchRun:
    text = f"Soak batch {number}"
    before = await asyncio.to_thread(last_message_id, db)
    started = time.perf_counter()
    message = SmsMessage(Channel.REST_SMS, text)
    outcome = await sending.send_list(message, recipients, lanes=concurrency)
    batch = outcome.batch
    first_failed = sum(sent.entry.recipient_count for sent in outcome.failed)
    lodged, left = await _open_recipients(sending, batch.id)
    resumes = 0
    while left and resumes < MAX_RESUMES:
        resumes += 1
        await sending.recovery.resume([batch.id], lanes=concurrency)
        lodged, left = await _open_recipients(sending, batch.id)
    sent = time.perf_counter() - started
    while True:
        created = await asyncio.to_thread(created_since, db, before, text)
        waited = time.perf_counter() - started
        if created >= lodged or waited > sent + CREATED_TIMEOUT:
            break
        await asyncio.sleep(0.5)
    return BatchRun(
        number, text, round(sent, 2), round(waited, 2), first_failed, resumes, lodged, left
    )


async def send_batches(
    url: str, db: Path, deadline: float, count: int, concurrency: int
) -> list[BatchRun]:
    profile = Profile(name=PROFILE, rest_url=url, username="demo")
    recipients = numbers(count)
    runs: list[BatchRun] = []
    async with (
        GatewayService(profile, Secret("demo")) as service,
        profile_sending(service) as sending,
    ):
        while not runs or time.monotonic() < deadline:
            run = await one_batch(sending, len(runs) + 1, recipients, concurrency, db)
            runs.append(run)
            say(
                f"batch {run.number}: {run.lodged_in_outbox:,} lodged per the outbox in "
                f"{run.send_seconds:.1f} s ({run.failed_first_pass:,} failed at first, "
                f"{run.resumes} resumes, {run.left_open} left "
                f"open); all messages at the gateway after {run.created_seconds:.1f} s"
            )
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to keep sending")
    parser.add_argument("--recipients", type=int, default=50_000, help="recipients a batch")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument("--reply-rate", type=float, default=200.0, help="reply webhooks a second")
    parser.add_argument("--faults", default=DEFAULT_FAULTS, help="the sandbox's --faults spec")
    parser.add_argument("--seed", type=int, default=7, help="the sandbox's --seed")
    parser.add_argument("--reply-client", metavar="TEMPLATE", help=argparse.SUPPRESS)
    parser.add_argument("--max-seconds", type=float, default=3600.0, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.reply_client:
        return reply_client_main(args.reply_client, args.reply_rate, args.max_seconds, args.out)
    if args.minutes <= 0 or args.recipients < 1 or args.concurrency < 1 or args.reply_rate <= 0:
        parser.error("--minutes, --recipients, --concurrency and --reply-rate must be positive")
    logging.basicConfig(level=logging.ERROR, format="%(name)s: %(message)s", stream=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="gwdesk-soak-") as name:
        temp = Path(name)
        os.environ[DATA_ENV] = str(temp / "data")  # the store `profile_sending` opens
        profile_db = AppPaths.default().profile_db(slug(PROFILE))
        profile_db.parent.mkdir(parents=True)
        sandbox_db = temp / "sandbox.sqlite3"
        store = ReplyStore(profile_db)
        inbox = ReplyInbox(store).start()
        listener = ReplyListener(inbox, ZONE, port=0)
        info = listener.start()
        started = time.perf_counter()
        deadline = time.monotonic() + args.minutes * 60
        with sandbox_process(sandbox_db, args.faults, args.seed, temp / "sandbox.log") as url:
            say(f"sandbox at {url} with faults {args.faults!r}; replies to {info.template.path}…")
            with reply_pacer(
                info.template.render(), args.reply_rate, args.minutes * 60 + 3600, temp
            ) as replies:
                runs = asyncio.run(
                    send_batches(url, sandbox_db, deadline, args.recipients, args.concurrency)
                )
            faults = injected_faults(url)
        elapsed = time.perf_counter() - started
        listener.stop()
        inbox.close()
        stats = inbox.stats
        stored = store.count()
        store.close()
        reply = replies[0]
        acked: list[int] = reply.pop("acked")
        missing_replies = missing_acknowledged(profile_db, [acked])
        lodged = count_lodged(sandbox_db, [run.text for run in runs], args.recipients)
    rss = peak_rss_mb()

    sent_recipients = args.recipients * len(runs)
    fault_total = sum(faults["injected"].values())
    faulted_requests = sum(faults["requests"].get(k, 0) for k in ("send", "status"))
    left_open = sum(run.left_open for run in runs)
    say(
        f"sent:       {len(runs)} batch(es) of {args.recipients:,} in {elapsed:.0f} s, "
        f"concurrency {args.concurrency}, {sum(r.resumes for r in runs)} resumes, "
        f"{left_open} recipients left open in the outbox"
    )
    say(
        f"lodged:     {lodged.messages:,} messages in the sandbox for {sent_recipients:,} "
        f"recipients; duplicates {lodged.duplicates}; missing {lodged.missing}"
    )
    say(
        f"faults:     {fault_total:,} injected in {faulted_requests:,} send/status requests "
        f"({fault_total / max(faulted_requests, 1):.1%}): "
        + ", ".join(f"{k} {v}" for k, v in sorted(faults["injected"].items()))
    )
    say(
        f"replies:    {reply['acknowledged']:,} acknowledged, {stored:,} stored, "
        f"{missing_replies} acknowledged but missing; {reply['per_second']:.1f}/s over "
        f"{reply['seconds']:.0f} s, {reply['failures']} refused, ack p99 {reply['p99_ms']} ms, "
        f"max pacing lag {reply['max_lag_ms']} ms"
    )
    for example in reply.pop("failure_examples"):
        say(f"  refused: {example}")
    say(f"memory:     client peak RSS {rss:.1f} MB (reply process {reply['peak_rss_mb']} MB)")
    ok = (
        lodged.duplicates == 0
        and lodged.missing == 0
        and left_open == 0
        and reply["acknowledged"] == stored
        and missing_replies == 0
    )
    say("checks:     " + ("passed" if ok else "FAILED"))
    figures = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "minutes": args.minutes,
        "seconds": round(elapsed, 1),
        "recipients_per_batch": args.recipients,
        "concurrency": args.concurrency,
        "faults_spec": args.faults,
        "batches": [asdict(run) for run in runs],
        "messages_lodged": lodged.messages,
        "recipients_sent": sent_recipients,
        "duplicates": lodged.duplicates,
        "missing": lodged.missing,
        "left_open_in_outbox": left_open,
        "faults_injected": fault_total,
        "faults_by_kind": faults["injected"],
        "fault_requests": faulted_requests,
        "replies": {
            **reply,
            "stored": stored,
            "missing": missing_replies,
            "inbox_commits": stats.commits,
            "inbox_duplicates": stats.duplicates,
        },
        "peak_rss_mb": round(rss, 1),
        "checks_passed": ok,
    }
    print(json.dumps(figures), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
