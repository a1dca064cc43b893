"""Saved templates as the operator edits them: the store's templates (a name each, its
text), and the one change that is more than a single store call, a rename.

The console's template picker (and its Manage list) takes what it needs from here, so
it never reaches the store; the rules of a name (`TemplateNameError`, `MAX_NAME`,
`name_key`: letter case and spacing do not tell two names apart) are the store's.
"""

from __future__ import annotations

from gwdesk.store.templates import (
    MAX_NAME,
    SavedTemplate,
    TemplateExists,
    TemplateNameError,
    TemplateStore,
    name_key,
)

__all__ = [
    "MAX_NAME",
    "SavedTemplate",
    "TemplateExists",
    "TemplateNameError",
    "TemplateStore",
    "name_key",
    "rename_template",
]


def rename_template(store: TemplateStore, old: str, new: str) -> SavedTemplate:
    """Keep `old`'s text under `new` and forget `old` (blocking). A change of letter case
    or spacing alone replaces it in place; another template's name is refused."""
    kept = store.get(old)
    if kept is None:
        raise TemplateNameError(f"There is no template called {old!r} any more.")
    if name_key(old) == name_key(new):
        return store.add(new, kept.text, replace=True)
    saved = store.add(new, kept.text)
    store.remove(old)
    return saved
