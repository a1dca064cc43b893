"""`gwdesk templates`: the profile's saved message templates.

    gwdesk templates [list]                         every template, by name
    gwdesk templates show NAME                      one template and the fields it asks for
    gwdesk templates add NAME TEXT [--replace]      keep a template ({field}, {field|fallback})
    gwdesk templates remove NAME                    forget one

Templates live in the profile's store, so no password is needed: only the profile
(`--profile`, or `--base-url` and `--username`). A template that cannot be read (a
brace left open) is refused with the character where it goes wrong. `gwdesk send
--template NAME` sends one, filled in per recipient. With `--json`, one JSON
document on stdout.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from gwdesk.cli import (
    EXIT_FAILED,
    EXIT_OK,
    Output,
    Registrar,
    SubParsers,
    UsageError,
    store_command,
)
from gwdesk.domain.profile import Profile
from gwdesk.domain.templates import TemplateError, parse_template
from gwdesk.store.local import LocalStore
from gwdesk.store.templates import SavedTemplate, TemplateExists, TemplateNameError

ACTIONS: Final = ("list", "show", "add", "remove")
#: How much of a template a listing line shows.
SHOWN: Final = 60


def template_json(saved: SavedTemplate) -> dict[str, Any]:
    try:
        fields: list[str] | None = [p.shown for p in parse_template(saved.text).placeholders]
    except TemplateError:
        fields = None
    return {
        "name": saved.name,
        "text": saved.text,
        "placeholders": fields,
        "updated": saved.updated.isoformat(),
    }


def _flat(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN else flat[: SHOWN - 1] + "…"


def _named(args: argparse.Namespace, action: str) -> str:
    if not args.name:
        raise UsageError(f"Name the template: gwdesk templates {action} NAME.")
    return str(args.name)


def templates_work(
    args: argparse.Namespace, _profile: Profile, store: LocalStore, out: Output
) -> int:
    templates = store.templates
    action = args.action
    if action == "add":
        name = _named(args, action)
        if args.text is None:
            raise UsageError("Give the text: gwdesk templates add NAME 'Hi {first name|there}'.")
        try:
            saved = templates.add(name, args.text, replace=args.replace)
        except TemplateError as exc:
            raise UsageError(f"The template cannot be read: {exc}") from None
        except TemplateNameError as exc:
            raise UsageError(str(exc)) from None
        except TemplateExists as exc:
            out.failure("exists", str(exc))
            return EXIT_FAILED
        out.result({"ok": True, **template_json(saved)}, [f"kept {saved.name!r}"])
        return EXIT_OK
    if action == "remove":
        name = _named(args, action)
        if not templates.remove(name):
            out.failure("not_found", f"There is no template called {name!r}.")
            return EXIT_FAILED
        out.result({"ok": True, "removed": name}, [f"removed {name!r}"])
        return EXIT_OK
    if action == "show":
        name = _named(args, action)
        found = templates.get(name)
        if found is None:
            out.failure("not_found", f"There is no template called {name!r}.")
            return EXIT_FAILED
        data = template_json(found)
        lines = [f"{found.name}:", *found.text.split("\n")]
        if data["placeholders"] is None:
            lines.append("(this template no longer reads as one: add it again)")
        elif data["placeholders"]:
            lines.append(f"fields: {', '.join(data['placeholders'])}")
        out.result({"ok": True, **data}, lines)
        return EXIT_OK
    listed = templates.listing()
    lines = [f"{t.name}: {_flat(t.text)}" for t in listed] or ["no templates kept"]
    out.result({"ok": True, "templates": [template_json(t) for t in listed]}, lines)
    return EXIT_OK


def register_templates(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "the profile's message templates: list, show, add, remove"
    p = store_command(sub, common, "templates", __doc__, text, ACTIONS, templates_work)
    p.add_argument("name", nargs="?", metavar="NAME", help="the template's name")
    p.add_argument(
        "text",
        nargs="?",
        metavar="TEXT",
        help="add: the text, with {field} and {field|fallback}; {{ and }} write braces",
    )
    p.add_argument("--replace", action="store_true", help="add: replace one of that name")


COMMANDS: Final[tuple[Registrar, ...]] = (register_templates,)
