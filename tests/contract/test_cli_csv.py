"""`gwdesk send --csv`: the file read by `gwdesk.importing`, as the Batch tab reads it.

The real entry point in a subprocess against a sandbox over loopback, with files
as other programs write them (Windows code page, semicolons, a BOM) and hostile
ones (a workbook, escape codes, formulas); `read_csv` itself for column choices, and
`send_recipients` for checking a long list off the event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import threading
from pathlib import Path

import pytest

from gwdesk.cli import Output, UsageError
from gwdesk.cli.send import read_csv, send_recipients
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.test_cli import PASSWORD, run


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


def batch_recipients(gateway: SandboxThread) -> list[str]:
    """The recipients of the batches the sandbox accepted (stored before it answers)."""
    return sorted(
        n for (text,) in gateway.query("SELECT recipients FROM batches") for n in json.loads(text)
    )


def test_a_windows_1252_semicolon_file_is_read_like_the_batch_import(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    sheet = tmp_path / "export.csv"
    sheet.write_bytes(
        "Name;Mobile\r\nMüller;0412 345 678\r\nZoë;+61 412 345 679\r\n".encode("cp1252")
    )
    done = run(gateway, "send", "--csv", str(sheet), "--yes", "--json", "Hi")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["lodged"] == 2
    assert "Windows-1252, semicolon-separated, a header row" in done.stderr
    assert "column 2 ('Mobile')" in done.stderr


def test_numbers_repeated_in_other_formats_are_sent_once(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("phone\n0412 345 678\n+61412345678\n61 412 345 678\n")
    done = run(gateway, "send", "--csv", str(sheet), "--yes", "--json", "Hi")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["duplicates"] == 2
    assert "2 repeated number(s) will be sent to once" in done.stderr
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(1,)]


def test_the_column_can_be_named_by_its_header(gateway: SandboxThread, tmp_path: Path) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("Name,Home,Mobile\nAda,0298765432,0412345678\nBob,0298765433,0412345679\n")
    done = run(gateway, "send", "--csv", str(sheet), "--column", "mobile", "--yes", "--json", "Hi")
    assert done.returncode == 0, done.stderr
    assert "column 3 ('Mobile')" in done.stderr
    assert batch_recipients(gateway) == ["61412345678", "61412345679"]


def test_a_workbook_is_refused_with_a_reason_and_nothing_is_sent(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    book = tmp_path / "people.xlsx"
    book.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    done = run(gateway, "send", "--csv", str(book), "Hi")
    assert done.returncode == 2
    assert "not a CSV or text file" in done.stderr
    assert "Traceback" not in done.stderr
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(0,)]


def test_a_missing_file_is_a_usage_error_without_a_traceback(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    done = run(gateway, "send", "--csv", str(tmp_path / "nowhere.csv"), "Hi")
    assert done.returncode == 2
    assert "nowhere.csv cannot be read" in done.stderr
    assert "Traceback" not in done.stderr


def test_escape_codes_and_formulas_in_cells_are_shown_escaped_and_never_sent(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    sheet = tmp_path / "hostile.csv"
    sheet.write_text("phone\n0412 345 678\n\x1b]0;owned\x07\x1b[2J\n=cmd|' /C calc'!A0\n")
    done = run(gateway, "send", "--csv", str(sheet), "Hi")
    assert done.returncode == 2
    assert "\x1b" not in done.stderr
    assert "row 3: '\\x1b]0;owned\\x07\\x1b[2J': " in done.stderr
    assert "row 4: \"=cmd|' /C calc'!A0\": " in done.stderr
    assert "2 recipient(s) are not usable; nothing was sent" in done.stderr
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(0,)]


def test_an_unusable_to_number_is_named_by_its_position(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--to", "0412 345 678", "--to", "0412 ABC", "Hi")
    assert done.returncode == 2
    assert "--to #2: '0412 ABC': " in done.stderr
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(0,)]


def test_a_column_number_out_of_range_is_refused(tmp_path: Path) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("name,phone\nAda,0412 345 678\n")
    with pytest.raises(UsageError, match="columns are 1 to 2"):
        read_csv(sheet, "AU", "3")


def test_an_unknown_header_is_refused_naming_the_headers(tmp_path: Path) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("name,phone\nAda,0412 345 678\n")
    with pytest.raises(UsageError, match="the headers: 'name', 'phone'"):
        read_csv(sheet, "AU", "mobile")


def test_a_column_chosen_by_number_overrides_the_guess(tmp_path: Path) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("name,phone,other\nAda,0412 345 678,0412 000 001\n")
    table, listing = read_csv(sheet, "AU", "3")
    assert table.column == 2
    assert listing.numbers == ("61412000001",)


async def test_a_long_list_is_checked_off_the_event_loop() -> None:
    numbers = [
        f"04{i // 1_000_000:02d} {i // 1000 % 1000:03d} {i % 1000:03d}" for i in range(60_000)
    ]
    args = argparse.Namespace(csv=None, column=None, to=numbers, skip_invalid=False)
    quiet = Output(json_mode=False, out=io.StringIO(), err=io.StringIO())
    ticks = 0
    stop = threading.Event()

    async def heartbeat() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    beat = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.02)
    before = ticks
    checked = await send_recipients(args, "AU", quiet)
    during = ticks - before
    stop.set()
    await beat
    assert len(checked.numbers) == 60_000
    # Checking 60,000 numbers takes about half a second; the loop kept turning meanwhile.
    assert during >= 10
