"""`gwdesk conversations`: customers' conversations as work, shared with every desk.

    gwdesk conversations [list] [--mine|--open|--unassigned|--all]   the latest reply first
    gwdesk conversations assign NUMBER OPERATOR|--me|--nobody        whose it is
    gwdesk conversations done NUMBER                                 dealt with
    gwdesk conversations reopen NUMBER                               open again

A conversation is one customer's number: open, waiting on the customer, done or
snoozed (a new reply re-opens it), assigned to an operator or to nobody. The unread
counts are this operator's own. Conversations live in the profile's store (a team's
server shares them), so no password is needed: only the profile (`--profile`, or
`--base-url` and `--username`). With `--json`, one JSON document on stdout.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from gwdesk.app.conversations import ConversationRow, ConversationsFlow, ConversationState, Showing
from gwdesk.cli import EXIT_OK, Output, Registrar, SubParsers, UsageError, store_command
from gwdesk.domain.errors import InputRefused
from gwdesk.domain.numbers import display
from gwdesk.domain.profile import Profile
from gwdesk.store.local import LocalStore

ACTIONS: Final = ("list", "assign", "done", "reopen")


def state_json(kept: ConversationState) -> dict[str, Any]:
    return {
        "number": kept.number,
        "state": kept.state,
        "snoozed_until": kept.snoozed_until.isoformat() if kept.snoozed_until else None,
        "assigned_to": kept.assigned_to,
        "changed_at": kept.changed_at.isoformat() if kept.changed_at else None,
        "changed_by": kept.changed_by,
    }


def row_json(row: ConversationRow) -> dict[str, Any]:
    return {
        **state_json(row.kept),
        "replies": row.replies,
        "unread": row.unread,
        "last_reply_id": row.last_reply_id,
        "last_received": row.last_received.isoformat() if row.last_received else None,
    }


def state_line(kept: ConversationState) -> str:
    """One line (`Output` makes it terminal-safe): the number, state, whose."""
    whose = kept.assigned_to or "nobody"
    until = f" until {kept.snoozed_until:%Y-%m-%d %H:%M} UTC" if kept.snoozed_until else ""
    return f"{display(kept.number)}  {kept.state}{until}  {whose}"


def _showing(args: argparse.Namespace) -> Showing:
    for showing in (Showing.MINE, Showing.OPEN, Showing.UNASSIGNED):
        if getattr(args, showing.value):
            return showing
    return Showing.ALL


def _number(args: argparse.Namespace, action: str) -> str:
    if not args.number:
        raise UsageError(f"Name the customer's number: gwdesk conversations {action} NUMBER.")
    return str(args.number)


def conversations_work(
    args: argparse.Namespace, profile: Profile, store: LocalStore, out: Output
) -> int:
    flow = ConversationsFlow(store.conversations, profile.region)
    action = args.action
    try:
        if action == "list":
            listing = flow.listing(_showing(args))
            lines = [
                f"{state_line(row.kept)}  {row.unread} unread of {row.replies}"
                for row in listing.conversations
            ] or ["no conversations"]
            lines.append(
                f"unread: {listing.unread_conversations} conversations, "
                f"{listing.unread_replies} replies"
            )
            data = {
                "ok": True,
                "operator": flow.me,
                "showing": _showing(args).value,
                "conversations": [row_json(row) for row in listing.conversations],
                "unread": {
                    "conversations": listing.unread_conversations,
                    "replies": listing.unread_replies,
                },
            }
            out.result(data, lines)
            return EXIT_OK
        number = _number(args, action)
        if action == "assign":
            kept = _assign(flow, args, number)
        elif action == "done":
            kept = flow.done(number)
        else:
            kept = flow.reopen(number)
    except InputRefused as exc:
        raise UsageError(exc.message) from None
    out.result({"ok": True, **state_json(kept)}, [state_line(kept)])
    return EXIT_OK


def _assign(flow: ConversationsFlow, args: argparse.Namespace, number: str) -> ConversationState:
    chosen = [bool(args.operator), args.me, args.nobody]
    if sum(chosen) != 1:
        raise UsageError(
            "Say whose it is: gwdesk conversations assign NUMBER OPERATOR, --me or --nobody."
        )
    if args.me:
        return flow.take(number)
    return flow.assign(number, None if args.nobody else str(args.operator))


def register_conversations(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "customers' conversations as work: list, assign, done, reopen"
    p = store_command(sub, common, "conversations", __doc__, text, ACTIONS, conversations_work)
    p.add_argument("number", nargs="?", metavar="NUMBER", help="the customer's number")
    p.add_argument("operator", nargs="?", metavar="OPERATOR", help="assign: the operator's name")
    showing = p.add_mutually_exclusive_group()
    showing.add_argument("--mine", action="store_true", help="list: those assigned to me")
    showing.add_argument("--open", action="store_true", help="list: the open ones")
    showing.add_argument("--unassigned", action="store_true", help="list: nobody's")
    showing.add_argument("--all", action="store_true", help="list: every one (the default)")
    p.add_argument("--me", action="store_true", help="assign: to me")
    p.add_argument("--nobody", action="store_true", help="assign: to nobody")


COMMANDS: Final[tuple[Registrar, ...]] = (register_conversations,)
