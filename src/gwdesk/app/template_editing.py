"""Saved templates as the operator edits them: the store's templates (a name each, its
text), and the changes that are more than a single store call: an edit of the name and
the text at once (`save_edited`), a rename, and what a text's fields are (`fields_of`).

The console's template picker (and its Manage list) takes what it needs from here, so
it never reaches the store; the rules of a name (`TemplateNameError`, `MAX_NAME`,
`name_key`: letter case and spacing do not tell two names apart) are the store's.
"""

from __future__ import annotations

from gwdesk.domain.templates import TemplateError, parse_template
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
    "fields_of",
    "name_key",
    "rename_template",
    "save_edited",
]


def rename_template(store: TemplateStore, old: str, new: str) -> SavedTemplate:
    """Keep `old`'s text under `new` and forget `old` (blocking). A change of letter case
    or spacing alone replaces it in place; another template's name is refused."""
    kept = store.get(old)
    if kept is None:
        raise TemplateNameError(f"There is no template called {old!r} any more.")
    return _keep(store, old, new, kept.text, replace=False)


def save_edited(
    store: TemplateStore, old: str | None, name: str, text: str, *, replace: bool = False
) -> SavedTemplate:
    """Keep `text` as the template `name` (blocking): a new one when `old` is None, else
    `old` edited, renamed when `name` is another (`TemplateExists` when that name is kept
    already, unless `replace`). A text that does not parse changes nothing."""
    if old is not None and name_key(old) != name_key(name) and store.get(old) is None:
        raise TemplateNameError(f"There is no template called {old!r} any more.")
    return _keep(store, old, name, text, replace=replace)


def _keep(
    store: TemplateStore, old: str | None, name: str, text: str, *, replace: bool
) -> SavedTemplate:
    """`text` as `name`; `old` replaced in place when only its letter case or spacing
    changed, forgotten once the new name is kept when it is another name."""
    if old is None or name_key(old) == name_key(name):
        return store.add(name, text, replace=replace or old is not None)
    saved = store.add(name, text, replace=replace)
    store.remove(old)
    return saved


def fields_of(text: str) -> str:
    """What a template's text takes from each recipient, in words: `Fields: {name},
    {clinic|our clinic}`, `No fields: every recipient gets the same text`, or why the
    text is no template (a `{` left open)."""
    try:
        template = parse_template(text)
    except TemplateError as exc:
        return f"Not a usable template: {exc}"
    shown = list(dict.fromkeys(p.shown for p in template.placeholders))
    if not shown:
        return "No fields: every recipient gets the same text."
    return "Fields: " + ", ".join(shown)
