"""Where gwdesk's data files live, installed or in a checkout.

A wheel carries the top-level `resources/` directory as `gwdesk/resources/` (pyproject's
`force-include`); an editable install or a plain checkout has it beside `src/`. Callers
name a file relative to `resources/` and never care which of the two they got.
"""

from __future__ import annotations

from pathlib import Path


def _candidates() -> tuple[Path, ...]:
    package = Path(__file__).resolve().parent
    return (package / "resources", package.parent.parent / "resources")


def resource_path(*parts: str) -> Path:
    """The path of `resources/<parts...>`, preferring the installed copy.

    Raises FileNotFoundError naming every place looked in, so a broken install
    says what is missing instead of failing later on a bad path.
    """
    if not parts:
        raise ValueError("resource_path needs at least one path part")
    tried = []
    for base in _candidates():
        candidate = base.joinpath(*parts)
        if candidate.exists():
            return candidate
        tried.append(str(candidate))
    raise FileNotFoundError(f"resource {'/'.join(parts)} not found; looked in: {', '.join(tried)}")
