"""Seconds from a 100,000-row recipient CSV to a validated, deduplicated list.

    python -m benchmarks.csv_import              # 100,000 rows (target: under 3 s)
    python -m benchmarks.csv_import --rows 5000  # a smoke run

Generates a realistic file (a name column and a number column; national,
international and bare-digit numbers written with spaces, dashes, dots and
parentheses; 5% invalid entries; 10% duplicates written in another format) and
measures, on the same file:

- gwdesk: `gwdesk.importing.recipients.import_file` (encoding and delimiter
  detection, header and column guess, the cached fast-path normaliser, dedup,
  invalid rows with reasons); the first run in the process is the figure (what an
  operator's first import costs), the best of three is printed beside it;
- naive: the simplest correct loop, `csv.reader` and `phonenumbers.parse` +
  `is_valid_number` + `format_number` for every row, no caching.

The last line of the output is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import phonenumbers

from gwdesk.importing.recipients import import_file

TARGET_SECONDS = 3.0
REGION = "AU"
FIRST = ("Olivia", "Jack", "José", "Zoë", "Liam", "Chloé", "Noah", "Mia", "Ngọc", "Aarav")
LAST = ("Smith", "Nguyen", "Müller", "O'Brien", "García", "Williams", "Kowalski", "Brown")
_INVALID = (
    "0412 345",
    "0412 ABC 678",
    "n/a",
    "04123456789012",
    "+61 4",
    "=cmd|' /C calc'!A0",
    "0412 345 678 ext",
    "12",
)


def _au_mobile(rng: random.Random) -> str:
    return f"4{rng.choice('01236')}{rng.randrange(10)}{rng.randrange(10**6):06d}"


def _au_landline(rng: random.Random) -> str:
    return f"{rng.choice('2378')}{rng.choice('89')}{rng.randrange(10**7):07d}"


def _foreign_pool(rng: random.Random, size: int) -> list[str]:
    """Valid international numbers (digits with country code) of many countries."""
    examples = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS - {REGION}):
        example = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
        if example is not None:
            examples.append(
                phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.E164)
            )
    # Region by region: phonenumbers recompiles its patterns when regions interleave.
    pool: set[str] = set()
    per_region = size // len(examples) + 1
    for example in examples:
        for _ in range(per_region * 3):
            candidate = example[:-3] + f"{rng.randrange(1000):03d}"
            if phonenumbers.is_valid_number(phonenumbers.parse(candidate, None)):
                pool.add(candidate[1:])
                if len(pool) % per_region == 0:
                    break
    numbers = sorted(pool)
    rng.shuffle(numbers)
    return numbers[:size]


def _write_au(nsn: str, rng: random.Random) -> str:
    head, mid, tail = nsn[:3], nsn[3:6], nsn[6:]
    if nsn[0] != "4":
        area, rest = nsn[0], nsn[1:]
        forms = (f"(0{area}) {rest[:4]} {rest[4:]}", f"0{area} {rest[:4]} {rest[4:]}", f"+61 {nsn}")
        return rng.choice(forms)
    forms = (
        f"0{nsn}",
        f"0{head} {mid} {tail}",
        f"0{head}-{mid}-{tail}",
        f"0{head}.{mid}.{tail}",
        f"+61 {head} {mid} {tail}",
        f"+61{nsn}",
        f"61{nsn}",
        f"(0{head}) {mid} {tail}",
    )
    return rng.choice(forms)


def _write_foreign(digits: str, rng: random.Random) -> str:
    forms = (f"+{digits}", f"+{digits[:2]} {digits[2:6]} {digits[6:]}", f"0011 {digits}")
    return rng.choice(forms)


def generate_rows(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """(name, number) rows: 5% invalid, 10% repeats of earlier numbers in another format."""
    rng = random.Random(seed)
    foreign = _foreign_pool(rng, max(10, count // 9))
    written: list[tuple[str, bool]] = []  # (canonical, is_au)
    rows: list[tuple[str, str]] = []
    for _ in range(count):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if rng.random() < 0.1:
            name = f"{name.split()[1]}, {name.split()[0]}"  # a comma inside: quoted
        roll = rng.random()
        if roll < 0.05:
            rows.append((name, rng.choice(_INVALID)))
            continue
        if roll < 0.15 and written:
            canonical, is_au = rng.choice(written)
        elif roll < 0.25 and foreign:
            canonical, is_au = foreign.pop(), False
        else:
            canonical = _au_mobile(rng) if rng.random() < 0.85 else _au_landline(rng)
            is_au = True
        written.append((canonical, is_au))
        rows.append((name, _write_au(canonical, rng) if is_au else _write_foreign(canonical, rng)))
    return rows


def write_file(path: Path, count: int, seed: int = 7) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(("Name", "Mobile"))
        writer.writerows(generate_rows(count, seed))
    return path


def naive_import(path: Path) -> tuple[int, int, int]:
    """csv + phonenumbers per row, nothing cached: (valid, duplicates, invalid)."""
    seen: set[str] = set()
    duplicates = invalid = 0
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        next(reader)
        for row in reader:
            try:
                number = phonenumbers.parse(row[1], REGION)
            except (phonenumbers.NumberParseException, IndexError):
                invalid += 1
                continue
            if not phonenumbers.is_valid_number(number):
                invalid += 1
                continue
            e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
            if e164 in seen:
                duplicates += 1
            else:
                seen.add(e164)
    return (len(seen), duplicates, invalid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.csv_import", description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="gwdesk runs (the best counts)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gwdesk-csv-") as temp:
        path = write_file(Path(temp) / "recipients.csv", args.rows)
        size = path.stat().st_size
        print(f"file: {args.rows:,} rows, {size / 1_048_576:.1f} MB", flush=True)
        times = []
        for _ in range(max(1, args.runs)):
            started = time.perf_counter()
            _table, checked = import_file(path, REGION)
            times.append(time.perf_counter() - started)
        first, best = times[0], min(times)
        print(
            f"gwdesk: {first:.2f} s first run in this process, {best:.2f} s best of "
            f"{len(times)} (runs {', '.join(f'{t:.2f}' for t in times)}) "
            f"-> {len(checked.numbers):,} valid, {checked.duplicates:,} duplicates, "
            f"{len(checked.invalid):,} invalid",
            flush=True,
        )
        started = time.perf_counter()
        naive_valid, naive_duplicates, naive_invalid = naive_import(path)
        naive = time.perf_counter() - started
        print(
            f"naive:  {naive:.2f} s -> {naive_valid:,} valid, {naive_duplicates:,} duplicates, "
            f"{naive_invalid:,} invalid",
            flush=True,
        )
        verdict = "met" if first < TARGET_SECONDS else "NOT met"
        print(
            f"gwdesk's first run is {naive / first:.1f}x faster than the naive loop; "
            f"target < {TARGET_SECONDS:.0f} s {verdict}",
            flush=True,
        )
    figures: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "rows": args.rows,
        "file_megabytes": round(size / 1_048_576, 2),
        "gwdesk_seconds": round(first, 3),
        "gwdesk_best_seconds": round(best, 3),
        "gwdesk_runs": [round(t, 3) for t in times],
        "gwdesk_rows_per_second": round(args.rows / first, 1),
        "valid": len(checked.numbers),
        "duplicates": checked.duplicates,
        "invalid": len(checked.invalid),
        "naive_seconds": round(naive, 3),
        "naive_valid": naive_valid,
        "naive_duplicates": naive_duplicates,
        "naive_invalid": naive_invalid,
        "speedup": round(naive / first, 2),
        "target_seconds": TARGET_SECONDS,
        "target_met": first < TARGET_SECONDS,
    }
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
