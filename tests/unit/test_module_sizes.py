"""Modules stay small enough to read whole: one concern each (issue 20's bound), and the
Batch tab a small class over its flow rather than the place its decisions are made."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "gwdesk"
MOST_LINES = 600
BATCH_TAB = SRC / "ui" / "batch" / "tab.py"


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(SRC)): lines
        for path in SRC.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not long, f"split these by concern: {long}"


def test_the_batch_tab_is_under_400_lines_and_25_methods() -> None:
    text = BATCH_TAB.read_text(encoding="utf-8")
    tab = next(
        node
        for node in ast.parse(text).body
        if isinstance(node, ast.ClassDef) and node.name == "BatchTab"
    )
    methods = [n for n in tab.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert len(text.splitlines()) < 400
    assert len(methods) < 25
