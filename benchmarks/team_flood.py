"""A team's reply flood: `gwdesk listen --store postgresql://…` with three consoles subscribed,
beside `gwdesk listen` on a profile's SQLite file.

    python -m benchmarks.team_flood                  # 30 s each
    python -m benchmarks.team_flood --seconds 5      # a quick run
    python -m benchmarks.team_flood --compare        # also the team's flood with no rules

A throwaway PostgreSQL server is started with its durable defaults (fsync on: a reply
is acknowledged only once it is on the server's disk). Then, each in a process of its
own, as in an office:

- the office's receiver, `gwdesk listen --store URL --quiet` (the real command);
- three console sessions, each subscribed to the server's change feed and reading new
  replies past its last id, exactly as the console's reply hub does
  (`gwdesk.app.team.TeamLink` + `gwdesk.app.catch_up.ReplyCatchUp`); each notes the
  wall-clock time it read every reply (the console shows a batch at its next 100 ms
  drain tick after that);
- the flood client of `benchmarks.reply_flood`: many keep-alive connections sending
  distinct reply webhooks as fast as they are acknowledged, stamping each `OK`.

Both listeners run the profile's keyword rules (`--rules`, 20 by default: 19 that match
none of the flood's replies and one that tags a tenth of them, each tagged reply a claim
and a tag written as the receiver runs it); `--compare` runs the team's flood once more
with none, side by side.

Figures: replies stored per second, acknowledgement p50/p99, and for each console the
time from a reply's acknowledgement to that console reading it (p50, p99, max), plus
`missing`: acknowledged replies absent from the server, or never read by a console
(both must be 0). The same flood then goes to `gwdesk listen` on a SQLite profile file.
Targets on a 2-core machine: >= 3,000 stored/s, ack p99 < 50 ms, visible p99 < 1 s.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.reply_flood import Flood, flood

TARGET_PER_SECOND = 3000
TARGET_ACK_P99_MS = 50.0
TARGET_VISIBLE_P99_MS = 1000.0
GWDESK = str(Path(sys.executable).with_name("gwdesk"))


def say(line: str) -> None:
    print(line, flush=True)


def percentile(ordered: Sequence[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


# ---- a console session (a process of its own) ---------------------------------------------


def console_main(url: str, name: str, out: Path, stop: Path) -> int:
    """Subscribe as a console does; note when each reply was read; write them at the end."""
    from gwdesk.app.catch_up import ReplyCatchUp
    from gwdesk.app.team import Member, TeamLink
    from gwdesk.store.postgres import PostgresDatabase
    from gwdesk.store.replies import ReplyStore
    from gwdesk.store.shared import ServerData

    database = PostgresDatabase(url, upgrade=False, application=f"bench console {name}")
    replies = ReplyStore(ServerData(database), local=out.with_suffix(".sqlite3"))
    catch_up = ReplyCatchUp(replies)
    changed = threading.Event()

    def on_change(tables: frozenset[str]) -> None:
        if "replies" in tables or "*" in tables:
            changed.set()

    link = TeamLink(database, Member(name), on_change=on_change, connect=database.connect).start()
    seen: dict[str, float] = {}
    reads = 0
    print("ready", flush=True)
    while not stop.exists():
        if changed.wait(0.1):
            changed.clear()
            found = catch_up.read()
            now = time.time()
            reads += 1
            for reply in found:
                seen.setdefault(reply.text, now)
    for reply in catch_up.read():  # whatever the last notification did not cover
        seen.setdefault(reply.text, time.time())
    link.close()
    replies.close()
    database.close()
    out.write_text(json.dumps({"seen": seen, "reads": reads}))
    return 0


# ---- the office (this process starts the others) ------------------------------------------


def _listen(args: Sequence[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """`gwdesk listen` with `args`; the process and its ReplyPath's address (its first line)."""
    process = subprocess.Popen(
        [GWDESK, "listen", "--port", "0", "--no-backfill", "--quiet", "--json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    first = process.stdout.readline()
    if not first:
        raise SystemExit(f"gwdesk listen did not start:\n{process.stderr.read()[-3000:]}")
    # Its notes (one a rule's run) are read as a journal reads them: a full pipe would
    # hold up whichever of its threads writes the next one.
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process, first.strip().split("?", 1)[0]  # the ReplyPath's address


def _stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _acked_keys(acked: list[list[int]], stamps: list[list[float]]) -> dict[str, float]:
    """Each acknowledged reply's text (what the client sent) and when its OK came."""
    return {
        f"flood {index}-{seq}": stamp
        for index, (seqs, times) in enumerate(zip(acked, stamps, strict=True))
        for seq, stamp in zip(seqs, times, strict=True)
    }


def _stored_texts_pg(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT text FROM replies")}


def _matched(rules: int, stored: set[str]) -> int:
    """Stored replies the one matching rule should have acted on (each once)."""
    return sum(1 for text in stored if text.endswith("7")) if rules else 0


def _count_pg(url: str, sql: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute(sql).fetchone()[0])  # type: ignore[index]


def _count_sqlite(path: Path, sql: str) -> int:
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute(sql).fetchone()[0])


def _stored_texts_sqlite(path: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute("SELECT text FROM replies")}
    finally:
        conn.close()


RULES_MATCHED = "flood *7"
"""The one benchmark rule that matches: a tenth of the flood's replies (their numbers end in 7)."""


def add_rules(count: int, folder: Path, url: str | None = None) -> None:
    """`count` keyword rules on the profile's store (the team's server with `url`), as a desk
    keeps them: `count - 1` that match none of the flood's replies (whole, first word and
    pattern, each read for every reply) and one that tags a tenth of them (a claim and a
    tag written for each, as the receiver runs it)."""
    if count <= 0:
        return
    from gwdesk.app.profile_data import INLINE_NAME, store_path
    from gwdesk.app.rule_editing import RulesFlow
    from gwdesk.domain.reply_rules import Draft
    from gwdesk.store.local import LocalStore
    from gwdesk.store.postgres import PostgresDatabase
    from gwdesk.store.shared import ServerData

    shared = ServerData(PostgresDatabase(url)) if url else None
    path = folder / "rules-desk.sqlite3" if url else store_path(INLINE_NAME)
    store = LocalStore(path, "benchmark", shared=shared, operator="benchmark")
    try:
        flow = RulesFlow(store.settings)
        kinds = ("whole", "first word", "pattern")
        for n in range(count - 1):
            kind = kinds[n % 3]
            value = f"*keyword{n}*" if kind == "pattern" else f"keyword{n}"
            flow.add(Draft(f"rule {n}", kind, value, tag=f"tag{n}"))
        flow.add(Draft("sevens", "pattern", RULES_MATCHED, tag="seven"))
    finally:
        store.close()
        if shared is not None:
            shared.close()


def run_team(seconds: float, connections: int, consoles: int, rules: int = 0) -> dict[str, Any]:
    from tests.postgres_server import postgres_server

    with postgres_server(durable=True) as server, tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        url = server.create_database("office")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
        env["GWDESK_DATA_DIR"] = str(folder / "data")
        env["GWDESK_CONFIG_DIR"] = str(folder / "config")
        subprocess.run([GWDESK, "team", "init", url], check=True, env=env, capture_output=True)
        add_rules(rules, folder, url)
        receiver, base_url = _listen(["--store", url], env)
        stop = folder / "stop"
        sessions = []
        for n in range(consoles):
            out = folder / f"console{n}.json"
            process = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.team_flood", "--console", url,
                 "--name", f"console {n}", "--out", str(out), "--stop", str(stop)],
                stdout=subprocess.PIPE, text=True, env=env,
            )  # fmt: skip
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                raise SystemExit(f"console {n} did not start")
            sessions.append((process, out))
        stamps: list[list[float]] = []
        result, acked = flood(f"{base_url}", seconds, connections, stamps)
        time.sleep(
            2
        )  # the last notifications reach the consoles (their final read covers the rest)
        stop.touch()
        for process, _out in sessions:
            process.wait(120)
        _stop(receiver)
        sent = _acked_keys(acked, stamps)
        stored = _stored_texts_pg(url)
        figures: dict[str, Any] = {
            "rules": rules,
            "rule_runs": _count_pg(url, "SELECT COUNT(*) FROM rule_runs"),
            "rule_matches": _matched(rules, stored),
            "flood": asdict(result),
            "stored": len(stored),
            "stored_per_second": round(len(stored) / result.seconds, 1),
            "missing": sum(1 for key in sent if key not in stored),
            "consoles": [],
        }
        for n, (_process, out) in enumerate(sessions):
            data = json.loads(out.read_text())
            seen: dict[str, float] = data["seen"]
            delays = sorted((seen[k] - t) * 1000 for k, t in sent.items() if k in seen)
            figures["consoles"].append(
                {
                    "console": n,
                    "read": len(seen),
                    "reads": data["reads"],
                    "never_read": sum(1 for key in sent if key not in seen),
                    "visible_p50_ms": round(percentile(delays, 0.50), 1),
                    "visible_p99_ms": round(percentile(delays, 0.99), 1),
                    "visible_max_ms": round(delays[-1], 1) if delays else 0.0,
                }
            )
    return figures


def run_sqlite(seconds: float, connections: int, rules: int = 0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
        env["GWDESK_DATA_DIR"] = str(folder / "data")
        env["GWDESK_CONFIG_DIR"] = str(folder / "config")
        if rules:  # in the listener's own folders: a child with its environment
            subprocess.run(
                [sys.executable, "-m", "benchmarks.team_flood", "--add-rules", str(rules),
                 "--out", str(folder)],
                check=True, env=env,
            )  # fmt: skip
        receiver, base_url = _listen([], env)
        result, acked = flood(base_url, seconds, connections)
        _stop(receiver)
        files = list((folder / "data").rglob("*.sqlite3"))
        stored = _stored_texts_sqlite(files[0]) if files else set()
        sent = {f"flood {i}-{seq}" for i, seqs in enumerate(acked) for seq in seqs}
        return {
            "rules": rules,
            "rule_runs": _count_sqlite(files[0], "SELECT COUNT(*) FROM rule_runs") if files else 0,
            "rule_matches": _matched(rules, stored),
            "flood": asdict(result),
            "stored": len(stored),
            "stored_per_second": round(len(stored) / result.seconds, 1),
            "missing": len(sent - stored),
        }


def _report(label: str, run: dict[str, Any]) -> None:
    result = Flood(**run["flood"])
    say(
        f"{label}: {result.seconds:.1f} s: {run['stored_per_second']:,.0f} replies/s stored, "
        f"ack p50 {result.p50_ms:.1f} ms, p99 {result.p99_ms:.1f} ms, max {result.max_ms:.0f} ms; "
        f"{result.acknowledged:,} acknowledged, {run['missing']} missing, "
        f"{result.failures} refused; {run.get('rule_runs', 0):,} rule runs of "
        f"{run.get('rule_matches', 0):,} replies matched"
    )
    for console in run.get("consoles", []):
        say(
            f"  console {console['console']}: read {console['read']:,} in {console['reads']:,} "
            f"reads; visible p50 {console['visible_p50_ms']:.0f} ms, "
            f"p99 {console['visible_p99_ms']:.0f} ms, max {console['visible_max_ms']:.0f} ms; "
            f"{console['never_read']} never read"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.team_flood", description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each flood")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections")
    parser.add_argument("--consoles", type=int, default=3, help="console sessions subscribed")
    parser.add_argument("--no-sqlite", action="store_true", help="skip the SQLite listener")
    parser.add_argument(
        "--rules", type=int, default=20, help="keyword rules active (0: none; default 20)"
    )
    parser.add_argument(
        "--compare", action="store_true", help="also run the team's flood with no rules"
    )
    parser.add_argument("--add-rules", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--console", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--stop", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.console:
        return console_main(args.console, args.name, args.out, args.stop)
    if args.add_rules is not None:
        add_rules(args.add_rules, args.out)
        return 0
    if args.seconds <= 0 or args.connections < 1 or args.consoles < 0:
        parser.error("--seconds and --connections must be positive")
    figures: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "seconds": args.seconds,
        "connections": args.connections,
    }
    if args.compare and args.rules:
        bare = run_team(args.seconds, args.connections, args.consoles)
        _report(f"PostgreSQL, {args.consoles} consoles, no rules", bare)
        figures["postgresql_no_rules"] = bare
    team = run_team(args.seconds, args.connections, args.consoles, args.rules)
    _report(f"PostgreSQL, {args.consoles} consoles, {args.rules} rules", team)
    figures["postgresql"] = team
    if not args.no_sqlite:
        alone = run_sqlite(args.seconds, args.connections, args.rules)
        _report(f"SQLite file, one desk, {args.rules} rules", alone)
        figures["sqlite"] = alone
    flood_result = Flood(**team["flood"])
    visible = [c["visible_p99_ms"] for c in team["consoles"]]
    unseen = sum(c["never_read"] for c in team["consoles"])
    met = (
        team["stored_per_second"] >= TARGET_PER_SECOND
        and flood_result.p99_ms < TARGET_ACK_P99_MS
        and all(v < TARGET_VISIBLE_P99_MS for v in visible)
        and team["missing"] == 0
        and unseen == 0
    )
    say(
        f"targets: >= {TARGET_PER_SECOND:,}/s, ack p99 < {TARGET_ACK_P99_MS:g} ms, visible p99 "
        f"< {TARGET_VISIBLE_P99_MS:g} ms, 0 missing: " + ("met" if met else "NOT met")
    )
    figures["targets_met"] = met
    print(json.dumps(figures))
    return 0 if team["missing"] == 0 and unseen == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
