"""`gwdesk conversations` on one workstation's file, as real processes: two operators
(named by the OS, as each desk's login gives them) share the profile's file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gwdesk.store.replies import IncomingReply, ReplyStore

CUSTOMER = "61412345678"


@pytest.fixture
def desk(tmp_path: Path) -> Any:
    def run(who: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "GWDESK_"))}
        env.update(GWDESK_DATA_DIR=str(tmp_path / "data"), GWDESK_CONFIG_DIR=str(tmp_path / "config"),
                   LOGNAME=who, USER=who)  # fmt: skip
        return subprocess.run(
            [sys.executable, "-m", "gwdesk.cli", "conversations", *args,
             "--base-url", "http://127.0.0.1:9/", "--username", "demo"],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip

    return run


def store_reply(tmp_path: Path, text: str, second: int) -> None:
    [file] = (tmp_path / "data").rglob("*.sqlite3")
    store = ReplyStore(file)
    try:
        store.add(
            [
                IncomingReply(
                    CUSTOMER, "61400000000", text, datetime(2026, 3, 3, 3, 2, second, tzinfo=UTC)
                )
            ]
        )
    finally:
        store.close()


def test_an_assignment_shows_in_mine_only_for_the_operator_assigned(
    desk: Any, tmp_path: Path
) -> None:
    assert desk("alex", "list").returncode == 0  # the profile's file made
    store_reply(tmp_path, "hello", 0)
    done = desk("alex", "assign", "0412345678", "sam")
    assert done.returncode == 0, done.stderr
    sam = json.loads(desk("sam", "list", "--mine", "--json").stdout)
    alex = json.loads(desk("alex", "list", "--mine", "--json").stdout)
    assert [c["number"] for c in sam["conversations"]] == [CUSTOMER]
    assert alex["conversations"] == []


def test_a_reply_reopens_what_an_operator_marked_done(desk: Any, tmp_path: Path) -> None:
    assert desk("alex", "list").returncode == 0
    store_reply(tmp_path, "hello", 0)
    assert "done" in desk("alex", "done", "+61412345678").stdout
    store_reply(tmp_path, "one more thing", 1)
    listed = json.loads(desk("sam", "list", "--open", "--json").stdout)
    assert [(c["number"], c["changed_by"]) for c in listed["conversations"]] == [
        (CUSTOMER, "the customer")
    ]


def test_an_operators_name_with_control_codes_is_shown_as_plain_text(
    desk: Any, tmp_path: Path
) -> None:
    assert desk("alex", "list").returncode == 0
    store_reply(tmp_path, "hello", 0)
    assert desk("alex", "assign", CUSTOMER, "Sam\x1b]0;owned\x07").returncode == 0
    shown = desk("alex", "list").stdout
    assert not any(c in shown for c in "\x1b\x07")


def test_a_number_that_is_not_one_is_a_usage_error(desk: Any) -> None:
    refused = desk("alex", "done", "<b>0412</b>")
    assert refused.returncode == 2
    assert "not a usable phone number" in refused.stderr


def test_assign_without_whose_is_a_usage_error(desk: Any) -> None:
    assert desk("alex", "assign", CUSTOMER).returncode == 2
