"""SQL lives in the store: the console, the command line and the application layer import no
database engine, so a second engine can sit behind the store's methods (import-linter
checks the same in CI; this says which module broke the rule, by name)."""

from __future__ import annotations

import ast
from pathlib import Path

import gwdesk

ROOT = Path(gwdesk.__file__).parent
ABOVE_THE_STORE = ("ui", "cli", "app")
ENGINES = frozenset({"sqlite3", "_sqlite3"})


def engine_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in ENGINES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ENGINES:
            found.append(node.module or "")
    return found


def offenders() -> dict[str, list[str]]:
    found = {}
    for package in ABOVE_THE_STORE:
        for path in sorted((ROOT / package).rglob("*.py")):
            imports = engine_imports(path)
            if imports:
                found[path.relative_to(ROOT).as_posix()] = imports
    return found


def test_no_module_above_the_store_imports_a_database_engine() -> None:
    assert offenders() == {}
