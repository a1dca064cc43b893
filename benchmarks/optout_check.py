"""A 100,000-recipient batch checked against a 100,000-entry opt-out list, beside an empty list.

    python -m benchmarks.optout_check                # 100,000 recipients, 100,000 opt-outs
    python -m benchmarks.optout_check --recipients 5000 --optouts 5000 --no-lodge   # smoke

The same list is sent three ways, each from a fresh profile store:

- empty list: no number has opted out (what a send costs without the check's work);
- full list: 100,000 numbers opted out, 1% of the batch among them (the check leaves
  them out when the batch is recorded, and asks again before each request of 100);
- naive: the full list, checked one number at a time (`OptOutStore.get` per
  recipient), the way a check bolted on per message would do it.

For each: the seconds to screen the list, to record the batch (screen included), and,
unless --no-lodge, to lodge every request into a sandbox gateway in another process
(which also pays for the per-request check). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.sandbox_throughput import sandbox_server
from gwdesk.app.profile_data import ProfileData, open_profile, sending_for
from gwdesk.app.sms import SmsForm, check_message
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.service import GatewayService

ACCOUNT = "demo@benchmark"


def numbers(rng: random.Random, count: int, prefix: str) -> list[str]:
    return [f"61{prefix}{n:07d}" for n in rng.sample(range(10**7), count)]


async def one_run(
    folder: Path, rest_url: str | None, batch: list[str], optouts: list[str], naive: bool
) -> dict[str, float]:
    data = ProfileData(folder / "profile.sqlite3", ACCOUNT, "AU")
    store = open_profile(data)
    store.optouts.import_numbers(optouts, reason="benchmark") if optouts else None
    profile = Profile(name="bench", rest_url=rest_url or "http://127.0.0.1:9", username="demo")
    service = GatewayService(profile, Secret("demo"))
    sending = sending_for(service, store, data)
    message = check_message(SmsForm(text="Benchmark message"), "AU")
    figures: dict[str, float] = {}
    try:
        started = time.perf_counter()
        if naive:
            left = [
                n for n in batch if (found := store.optouts.get(n)) is None or not found.opted_out
            ]
        else:
            assert sending.guard is not None
            left = list((await sending.guard.screen(batch)).kept)
        figures["screen_s"] = time.perf_counter() - started
        figures["kept"] = len(left)
        started = time.perf_counter()
        record_batch, entries = await sending.record_list(message, batch)
        figures["record_s"] = time.perf_counter() - started
        if rest_url is not None:
            started = time.perf_counter()
            outcome = await sending.run_list(record_batch, entries, message, lanes=8)
            figures["lodge_s"] = time.perf_counter() - started
            figures["lodged"] = outcome.lodged_recipients
    finally:
        await service.aclose()
        store.close()
    return figures


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(7)
    batch = numbers(rng, args.recipients, "41")
    listed = numbers(rng, args.optouts, "49")
    listed[: args.recipients // 100] = batch[: args.recipients // 100]  # 1% of the batch opted out
    results: dict[str, Any] = {"recipients": args.recipients, "optouts": args.optouts}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rest_url = None
        server = None
        if not args.no_lodge:
            server = sandbox_server(root / "sandbox.sqlite3", root / "sandbox.log")
            rest_url, _process = server.__enter__()
        try:
            for name, optouts, naive in (
                ("empty_list", [], False),
                ("full_list", listed, False),
                ("naive_full_list", listed, True),
            ):
                folder = root / name
                folder.mkdir()
                figures = await one_run(folder, rest_url, batch, optouts, naive)
                results[name] = {
                    k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()
                }
                shown = ", ".join(
                    f"{k} {v:,.3f}" if isinstance(v, float) else f"{k} {v:,}"
                    for k, v in figures.items()
                )
                print(f"{name:>16}: {shown}")
        finally:
            if server is not None:
                server.__exit__(None, None, None)
    full, empty = results["full_list"], results["empty_list"]
    for key in ("record_s", "lodge_s"):
        if key in full and empty.get(key):
            results[f"{key}_ratio_full_to_empty"] = round(full[key] / empty[key], 2)
            print(f"{key}: full list / empty list = {full[key] / empty[key]:.2f}x")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipients", type=int, default=100_000)
    parser.add_argument("--optouts", type=int, default=100_000)
    parser.add_argument("--no-lodge", action="store_true", help="screen and record only")
    results = asyncio.run(main_async(parser.parse_args()))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
