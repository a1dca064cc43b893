"""`docs/architecture.md` stays true: what it names exists, and the send path it quotes
is the one `tests/ui/test_send_path.py` traces.

The doc is read as text and the code as text or syntax trees: nothing is imported, so a
drift is reported here without Qt or a sandbox.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
SEND_PATH_TEST = ROOT / "tests" / "ui" / "test_send_path.py"
SOURCES = ("src", "tests", "packaging", "resources", "benchmarks", "pyproject.toml")
WORDS = {
    1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen",
    14: "fourteen", 15: "fifteen", 16: "sixteen",
}  # fmt: skip


def quoted() -> list[str]:
    """Every `code span` of the doc."""
    return re.findall(r"`([^`\n]+)`", DOC.read_text(encoding="utf-8"))


@cache
def tracked_files() -> tuple[str, ...]:
    """The repository's files as paths relative to its root."""
    found = []
    for top in SOURCES:
        base = ROOT / top
        paths = [base] if base.is_file() else base.rglob("*")
        found += [
            p.relative_to(ROOT).as_posix()
            for p in paths
            if p.is_file() and "__pycache__" not in p.parts
        ]
    return tuple(found)


@cache
def source_words() -> frozenset[str]:
    """Every identifier-like word the code, tests and packaging spell."""
    words: set[str] = set()
    for name in tracked_files():
        if name.endswith((".py", ".toml", ".qss", ".spec", ".xml", ".desktop", ".sql")):
            text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
            words.update(re.findall(r"[A-Za-z_][\w.]*", text))
    parts = {part for word in words for part in word.split(".")}
    modules = {Path(n).stem for n in tracked_files() if n.endswith(".py")}
    return frozenset(words | parts | modules)


def named_files(span: str) -> list[str]:
    """The file names a code span holds (`ui/tasks.py`, `tests/team/test_*_engines.py`)."""
    return re.findall(r"[\w/.*-]+\.(?:py|md|qss|spec)\b", span)


def exists(name: str) -> bool:
    pattern = re.compile(re.escape(name).replace(r"\*", "[^/]*") + "$")
    return any((f == name or f.endswith("/" + name) or pattern.search(f)) for f in tracked_files())


def test_every_file_the_doc_names_exists() -> None:
    missing = {n for span in quoted() for n in named_files(span) if not exists(n)}
    assert not missing, f"docs/architecture.md names files that are gone: {sorted(missing)}"


def test_every_class_function_and_setting_the_doc_names_is_in_the_code() -> None:
    missing = set()
    for span in quoted():
        for name in re.findall(r"\b[A-Za-z_]\w*\b", span):
            is_code = (name[0].isupper() and not name.isupper()) or "_" in name.strip("_")
            if is_code and name not in source_words():
                missing.add(name)
    assert not missing, f"docs/architecture.md names what the code no longer has: {missing}"


def traced_path() -> tuple[str, ...]:
    """`PATH` of the send-path test, read from its source (no Qt imported)."""
    tree = ast.parse(SEND_PATH_TEST.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PATH":
            value = ast.literal_eval(node.value)
            assert isinstance(value, tuple)
            return tuple(str(v) for v in value)
    raise AssertionError("tests/ui/test_send_path.py defines no PATH")


def send_path_section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## One SMS from the Send button to the wire")
    return text[start : text.index("\n## ", start + 1)]


def test_the_doc_quotes_the_traced_counts_of_modules_and_steps() -> None:
    path = traced_path()
    section = send_path_section()
    counts = f"{WORDS[len(set(path))]} modules, in {WORDS[len(path)]} steps"
    assert counts in section.lower(), f"expected the doc to say {counts!r}"


def test_the_doc_lists_the_traced_modules_in_the_order_they_are_first_crossed() -> None:
    path = traced_path()
    first_crossed = list(dict.fromkeys(path))
    rows = re.findall(r"^\| \d+ \| `([\w/]+)\.py` \|", send_path_section(), re.M)
    assert ["gwdesk." + row.replace("/", ".") for row in rows] == first_crossed


def first_line(module: Path) -> str:
    """What a module's docstring says first: the line the doc's index would give it."""
    doc = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8"))) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


def test_every_module_of_the_package_is_named_in_the_doc() -> None:
    names = {word for span in quoted() for word in re.findall(r"[A-Za-z_]\w*", span)}
    package = ROOT / "src" / "gwdesk"
    missing = [
        f"| `{module.relative_to(package).as_posix()}` | {first_line(module)} |"
        for module in sorted(package.rglob("*.py"))
        if module.stem not in {"__init__", "__main__"} and module.stem not in names
    ]
    assert not missing, "docs/architecture.md does not name:\n" + "\n".join(missing)
