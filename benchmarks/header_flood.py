"""Request heads that never end, flooding the reply listener, beside aiohttp's own limits.

    python -m benchmarks.header_flood                                  # 1,000 connections, ~1 MB heads
    python -m benchmarks.header_flood --connections 300 --seconds 5    # a quick run

Each run serves a reply listener in a process of its own (`--serve`), as the
console or `gwdesk listen` runs it (its own thread and loop, a real profile file),
and floods it from another process (`--attack`): `--connections` connections each
send a request line and then 8 KB headers up to `--head-kb`, never ending the head,
and connect again when cut off, for `--seconds`. Meanwhile the serving process sends
the listener a valid reply webhook every 0.25 s and notes how long its `OK` took. The
listener process's RSS is sampled before, throughout, and 3 s after the flood (its
open file descriptors too: one per connection still held).

The naive baseline is the same listener with aiohttp's own parser limits (a line,
a header and 128 headers of 8 KB each, nothing on their sum); then the listener as
it ships (`ListenerLimits()`). The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from zoneinfo import ZoneInfo

from gwdesk.domain.webhook_time import format_webhook_time
from gwdesk.replies import ListenerLimits, ReplyInbox, ReplyListener
from gwdesk.store.replies import ReplyStore

ZONE: Final = ZoneInfo("Australia/Sydney")
HEADER: Final = b"X-Pad: " + b"a" * 8000 + b"\r\n"
NAIVE: Final = ListenerLimits(max_head=2**40, max_line=8190, max_field=8190, max_headers=128)
"""aiohttp's defaults for the parser, and no cap on a head's total (the listener before)."""
VARIANTS: Final = {"naive": NAIVE, "listener": ListenerLimits()}
SETTLE: Final = 3.0
"""Seconds after the flood before the "after" figures are taken."""


def say(line: str) -> None:
    print(line, flush=True)


def rss_mb(pid: int | str = "self") -> float:
    """A process's resident set now."""
    with open(f"/proc/{pid}/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1_048_576


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# ---- the attacker (a separate process) -------------------------------------------------------


@dataclass
class Attack:
    opened: int = 0
    cut_off: int = 0
    """Connections the listener closed (or answered) before the flood ended."""
    refused: int = 0
    """Connection attempts that failed."""
    sent_mb: float = 0.0


async def _attacker(host: str, port: int, head_bytes: int, deadline: float, tally: Attack) -> None:
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            tally.refused += 1
            await asyncio.sleep(0.05)
            continue
        tally.opened += 1
        try:
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            sent = 0
            while sent < head_bytes and time.monotonic() < deadline:
                writer.write(HEADER)
                await writer.drain()
                sent += len(HEADER)
                tally.sent_mb += len(HEADER) / 1_048_576
            left = deadline - time.monotonic()
            if left > 0:
                await asyncio.wait_for(reader.read(), left)  # returns when the listener closes
                tally.cut_off += 1
        except (OSError, TimeoutError):
            if time.monotonic() < deadline:
                tally.cut_off += 1
        finally:
            writer.close()


async def attack(host: str, port: int, connections: int, head_bytes: int, seconds: float) -> Attack:
    """`connections` connections sending heads of `head_bytes` that never end, for `seconds`."""
    tally = Attack()
    deadline = time.monotonic() + seconds
    await asyncio.gather(
        *(_attacker(host, port, head_bytes, deadline, tally) for _ in range(connections))
    )
    return tally


# ---- the listener's process ------------------------------------------------------------------


@dataclass
class Samples:
    peak_mb: float = 0.0
    peak_fds: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.wait(0.05):
            self.peak_mb = max(self.peak_mb, rss_mb())
            self.peak_fds = max(self.peak_fds, open_fds())


def rss_after_trim() -> float | None:
    """RSS once glibc has handed its free memory back (`malloc_trim`): how much of what
    stayed was held, not just kept by the allocator. None without glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        return None
    return rss_mb()


def valid_reply(port: int, path: str, text: str, timeout: float = 30.0) -> tuple[bool, float]:
    """One reply webhook as the gateway sends it; whether it got `OK`, and after how long."""
    stamp = format_webhook_time(datetime.now(UTC), ZONE).replace(" ", "%20").replace(":", "%3A")
    query = f"from=61412345678&to=61400000000&msg={text}&sent={stamp}&rcvd={stamp}"
    request = f"GET {path}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(request.encode("ascii"))
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    except OSError:
        return False, time.perf_counter() - started
    elapsed = time.perf_counter() - started
    return answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"OK"), elapsed


def serve(variant: str, connections: int, head_kb: int, seconds: float) -> dict[str, Any]:
    """Run one listener, flood it from a child process, and return the figures."""
    with tempfile.TemporaryDirectory(prefix="gwdesk-heads-") as temp:
        store = ReplyStore(Path(temp) / "profile.sqlite3")
        inbox = ReplyInbox(store).start()
        listener = ReplyListener(inbox, ZONE, port=0, limits=VARIANTS[variant])
        info = listener.start()
        port, path = info.port, info.template.path
        for n in range(5):  # warm up the paths a reply takes
            valid_reply(port, path, f"warm{n}")
        rss_before, fds_before = rss_mb(), open_fds()
        samples = Samples(peak_mb=rss_before, peak_fds=fds_before)
        sampler = threading.Thread(target=samples.run, daemon=True)
        sampler.start()
        command = [
            sys.executable, "-m", "benchmarks.header_flood", "--attack", str(port),
            "--connections", str(connections), "--head-kb", str(head_kb),
            "--seconds", str(seconds),
        ]  # fmt: skip
        attacker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        latencies: list[float] = []
        failed = 0
        sent = 0
        time.sleep(min(1.0, seconds / 4))  # let the flood build up first
        while attacker.poll() is None:
            sent += 1
            ok, elapsed = valid_reply(port, path, f"valid{sent}")
            latencies.append(elapsed)
            failed += not ok
            time.sleep(0.25)
        out, _ = attacker.communicate()
        tally = json.loads(out.strip().splitlines()[-1])
        time.sleep(SETTLE)
        rss_after, fds_after = rss_mb(), open_fds()
        rss_trimmed = rss_after_trim()
        samples.stop.set()
        sampler.join()
        texts = {reply.text for reply in store.latest(limit=10_000)}
        missing = sum(1 for n in range(1, sent + 1) if f"valid{n}" not in texts)
        listener.stop()
        inbox.close()
        store.close()
    ordered = sorted(latencies)
    return {
        "variant": variant,
        "rss_before_mb": round(rss_before, 1),
        "rss_peak_mb": round(samples.peak_mb, 1),
        "rss_after_mb": round(rss_after, 1),
        "rss_after_trim_mb": None if rss_trimmed is None else round(rss_trimmed, 1),
        "fds_before": fds_before,
        "fds_peak": samples.peak_fds,
        "fds_after": fds_after,
        "valid_sent": sent,
        "valid_failed": failed,
        "valid_missing": missing,
        "valid_p50_ms": round(statistics.median(ordered) * 1000, 1) if ordered else None,
        "valid_max_ms": round(ordered[-1] * 1000, 1) if ordered else None,
        "attack": tally,
    }


def run_variant(variant: str, connections: int, head_kb: int, seconds: float) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "benchmarks.header_flood", "--serve", variant,
        "--connections", str(connections), "--head-kb", str(head_kb), "--seconds", str(seconds),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 300)
    if done.returncode != 0:
        raise SystemExit(f"the {variant} run failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.header_flood", description=__doc__)
    parser.add_argument("--connections", type=int, default=1000, help="flooding connections")
    parser.add_argument("--head-kb", type=int, default=960, help="head each sends, in KB")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of the flood")
    parser.add_argument("--serve", choices=sorted(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--attack", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.connections < 1 or args.head_kb < 1:
        parser.error("--seconds, --connections and --head-kb must be positive")
    head_bytes = args.head_kb * 1024
    if args.attack is not None:
        tally = asyncio.run(
            attack("127.0.0.1", args.attack, args.connections, head_bytes, args.seconds)
        )
        tally.sent_mb = round(tally.sent_mb, 1)
        print(json.dumps(tally.__dict__))
        return 0
    if args.serve is not None:
        print(json.dumps(serve(args.serve, args.connections, args.head_kb, args.seconds)))
        return 0

    figures: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "connections": args.connections,
        "head_kb": args.head_kb,
        "seconds": args.seconds,
    }
    say(
        f"{args.connections:,} connections, each sending {args.head_kb:,} KB of headers without "
        f"ending them (again when cut off), for {args.seconds:g} s; a valid reply every 0.25 s"
    )
    for variant in VARIANTS:
        run = run_variant(variant, args.connections, args.head_kb, args.seconds)
        attack_ = run["attack"]
        title = "naive (aiohttp's limits)" if variant == "naive" else "listener (as shipped)"
        say(f"{title}:")
        say(
            f"  RSS {run['rss_before_mb']:.0f} MB before, peak {run['rss_peak_mb']:.0f} MB, "
            f"{run['rss_after_mb']:.0f} MB {SETTLE:g} s after ({run['rss_after_trim_mb']} MB "
            f"after malloc_trim); open fds {run['fds_before']} "
            f"before, peak {run['fds_peak']}, {run['fds_after']} after"
        )
        say(
            f"  valid replies: {run['valid_sent']} sent, {run['valid_failed']} not OK, "
            f"{run['valid_missing']} not stored; OK after p50 {run['valid_p50_ms']} ms, "
            f"max {run['valid_max_ms']} ms"
        )
        say(
            f"  flood: {attack_['opened']:,} connections opened, {attack_['cut_off']:,} cut off "
            f"by the listener, {attack_['refused']:,} refused, {attack_['sent_mb']:,.0f} MB sent"
        )
        figures[variant] = run
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
