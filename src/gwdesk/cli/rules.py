"""`gwdesk rules`: the keyword rules run on customers' replies, shared with every desk.

    gwdesk rules [list]                                  the rules, in order
    gwdesk rules add NAME --whole|--first-word|--pattern VALUE
                     [--reply TEXT [--per-day N]] [--assign OPERATOR] [--state STATE]
                     [--tag TAG] [--forward URL] [--at N]
    gwdesk rules remove NAME
    gwdesk rules test TEXT                               what a reply would set off
    gwdesk rules secret NAME                             keep a forward's secret here (stdin)
    gwdesk rules runs                                    what the rules did lately
    gwdesk rules forwards [--failed]                     the forwards and their state

The first rule that matches a reply acts on it. A reply that opts out or back in runs
none: STOP handling comes first. The office's receiver (`gwdesk listen`) runs them
when it serves the profile, else the console that stores the reply. Rules live in
the profile's store (a team's server shares them and audits every change), so no
password is needed. A forwarding rule's signing secret is printed once when it is
added and kept in this machine's keyring; give it to the receiver's machine with
`gwdesk rules secret NAME` (read from stdin, never an argument). With `--json`, one
JSON document on stdout.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final

from gwdesk.app.rule_editing import RulesFlow, rule_secrets
from gwdesk.cli import EXIT_OK, Output, Registrar, SubParsers, UsageError, store_command
from gwdesk.domain.errors import InputRefused
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.domain.reply_rules import Draft, Match, Rule
from gwdesk.store.local import LocalStore
from gwdesk.store.rule_runs import FAILED, Forward, RuleRun

ACTIONS: Final = ("list", "add", "remove", "test", "secret", "runs", "forwards")


def rule_json(rule: Rule) -> dict[str, Any]:
    return {**rule.to_json(), "described": rule.describe()}


def run_json(run: RuleRun) -> dict[str, Any]:
    return {
        "reply_id": run.reply_id,
        "number": run.number,
        "rule": run.rule,
        "runner": run.runner,
        "replied": run.replied,
        "outcome": run.outcome,
    }


def forward_json(forward: Forward) -> dict[str, Any]:
    return {
        "id": forward.id,
        "reply_id": forward.reply_id,
        "rule": forward.rule,
        "url": forward.url,
        "state": forward.state,
        "attempts": forward.attempts,
        "last_error": forward.last_error,
    }


def _draft(args: argparse.Namespace) -> Draft:
    given = [(m, v) for m, v in ((Match.WHOLE, args.whole), (Match.FIRST_WORD, args.first_word),
                                (Match.PATTERN, args.pattern)) if v is not None]  # fmt: skip
    if not args.name or len(given) != 1:
        raise UsageError(
            "Name the rule and what it matches: gwdesk rules add NAME --whole WORDS, "
            "--first-word WORDS or --pattern PATTERN."
        )
    match, value = given[0]
    return Draft(
        args.name, match.value, value,
        reply=args.reply or "", per_day=args.per_day, assign=args.assign or "",
        state=args.state or "", tag=args.tag or "", forward=args.forward or "",
    )  # fmt: skip


def rules_work(args: argparse.Namespace, profile: Profile, store: LocalStore, out: Output) -> int:
    from gwdesk.profiles import PasswordVault

    flow = RulesFlow(store.settings, rule_secrets(PasswordVault(), profile), store.rule_runs)
    try:
        return _act(args, flow, out)
    except InputRefused as exc:
        raise UsageError(f"{exc.field}: {exc.message}") from None


def _act(args: argparse.Namespace, flow: RulesFlow, out: Output) -> int:
    action = args.action
    if action == "list":
        rules = flow.rules().rules
        lines = [f"{n}. {rule.describe()}" for n, rule in enumerate(rules, 1)] or ["no rules"]
        out.result({"ok": True, "rules": [rule_json(rule) for rule in rules]}, lines)
    elif action == "add":
        added = flow.add(_draft(args), at=args.at)
        data: dict[str, Any] = {"ok": True, "rule": rule_json(added.rule)}
        lines = [f"added: {added.rule.describe()}"]
        if added.secret is not None:
            data["secret"] = added.secret.reveal()
            lines.append(
                f"signing secret (shown once; give it to the endpoint's owner): "
                f"{added.secret.reveal()}"
            )
        out.result(data, lines)
    elif action == "remove":
        removed = flow.remove(_named(args))
        out.result({"ok": True, "removed": rule_json(removed)}, [f"removed: {removed.name}"])
    elif action == "test":
        text = args.name if args.name is not None else ""
        tested = flow.test(text)
        shown = rule_json(tested.rule) if tested.rule is not None else None
        out.result({"ok": True, "rule": shown, "said": tested.said}, [tested.said])
    elif action == "secret":
        name = _named(args)
        flow.set_secret(name, Secret(sys.stdin.readline().strip()))
        out.result({"ok": True, "rule": name}, [f"signing secret kept for {name}"])
    elif action == "runs":
        runs = flow.runs_done(args.limit)
        lines = [f"reply {r.reply_id}  {r.rule}  {r.outcome}" for r in runs] or ["no runs"]
        out.result({"ok": True, "runs": [run_json(r) for r in runs]}, lines)
    else:
        forwards = flow.forwards(state=FAILED if args.failed else None, limit=args.limit)
        lines = [
            f"{f.id}  reply {f.reply_id}  {f.rule}  {f.state} after {f.attempts}  {f.last_error}"
            for f in forwards
        ] or ["no forwards"]
        out.result({"ok": True, "forwards": [forward_json(f) for f in forwards]}, lines)
    return EXIT_OK


def _named(args: argparse.Namespace) -> str:
    if not args.name:
        raise UsageError(f"Name the rule: gwdesk rules {args.action} NAME.")
    return str(args.name)


def _count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise argparse.ArgumentTypeError(f"a whole number from 1, not {text[:20]!r}")
    return int(text)


def register_rules(sub: SubParsers, common: argparse.ArgumentParser) -> None:
    text = "keyword rules on replies: list, add, remove, test, secret, runs, forwards"
    p = store_command(sub, common, "rules", __doc__, text, ACTIONS, rules_work)
    p.add_argument("name", nargs="?", metavar="NAME", help="the rule's name (test: the text)")
    match = p.add_mutually_exclusive_group()
    match.add_argument("--whole", metavar="WORDS", help="add: the whole reply is these words")
    match.add_argument("--first-word", metavar="WORDS", help="add: the reply starts with these")
    match.add_argument("--pattern", metavar="PATTERN", help="add: * and ? wildcards, any case")
    p.add_argument("--reply", metavar="TEXT", help="add: answer automatically with this text")
    p.add_argument("--per-day", type=_count, default=1, metavar="N",
                   help="add: automatic replies to one customer in 24 hours (default 1)")  # fmt: skip
    p.add_argument("--assign", metavar="OPERATOR", help="add: assign the conversation")
    p.add_argument("--state", choices=("open", "waiting", "done"), help="add: set its state")
    p.add_argument("--tag", metavar="TAG", help="add: tag the conversation")
    p.add_argument("--forward", metavar="URL", help="add: post the reply as signed JSON here")
    p.add_argument("--at", type=_count, metavar="N", help="add: put it at position N (1 first)")
    p.add_argument("--failed", action="store_true", help="forwards: only those that failed")
    p.add_argument(
        "--limit", type=_count, default=100, metavar="N", help="runs, forwards: at most N"
    )


COMMANDS: Final[tuple[Registrar, ...]] = (register_rules,)
