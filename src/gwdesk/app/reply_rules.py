"""Running the keyword rules on stored replies, once each, wherever they run.

The office's receiver runs them when one serves the profile (`cli/receiver_rules.py`),
so they work with every console closed; a console runs them for the replies its own
listener stores. Each new reply goes through `RuleSet.first` (an opt-out or opt-in
reply runs none: STOP handling stays first); the matching rule's run is claimed in the
store first (`RuleRuns.claim`), so of every runner that saw the reply exactly one acts,
and whether its automatic reply may go is decided in that claim from the number's last
24 hours. Then it acts: the conversation's assignment, state and tag (audited as this
runner's changes), the automatic reply through the ordinary send path (so the opt-out
list refuses it like any send, and it is in the history), and the forward, queued in the
claim's own transaction for `RuleForwarder` (`rule_forwards.py`).

An automatic reply is refused, with why, to a number that cannot receive one (not a
phone number) and to a reply that came from the number it was sent to (our own message
coming back). What each run did, or why not, is its `outcome` (plain text).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from gwdesk.app.sending import Sending
from gwdesk.app.sms import SmsForm
from gwdesk.domain.errors import GatewayError
from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.reply_rules import Action, Do, Rule, RuleSet
from gwdesk.store.conversations import ConversationStore
from gwdesk.store.database import StoreError
from gwdesk.store.replies import StoredReply
from gwdesk.store.rule_runs import Claim, RuleRuns, Wanted

log = logging.getLogger("gwdesk.app.reply_rules")

SendReply = Callable[[str, str, str], Awaitable[str]]
"""`send(number, text, rule)`: send an automatic reply; '' when it went, else why not
(an opted-out number is one such reason, never an exception)."""
FRESH: Final = 1.0
"""Seconds the rules read are used before they are read again."""
SHORTEST_PHONE: Final = 8
"""Digits below which a sender is a short code or a service, not a phone to reply to."""


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    reply_id: int
    rule: str
    outcome: str
    replied: bool


@dataclass(slots=True)
class RuleRunner:
    """Runs a profile's rules (`rules()` and `keywords()` read the current ones)."""

    runs: RuleRuns
    conversations: ConversationStore
    rules: Callable[[], RuleSet]
    keywords: Callable[[], Keywords]
    send: SendReply | None = None
    """None: this runner cannot send (no gateway): a rule's reply is skipped, said so."""
    region: str = "AU"
    forwarded: Callable[[], object] = lambda: None
    """Told when a forward was queued (the forwarder looks at once)."""
    _kept: tuple[float, RuleSet, Keywords] | None = None
    """The rules and keywords last read, and when (monotonic seconds)."""

    async def current(self) -> tuple[RuleSet, Keywords]:
        """The profile's rules and opt-out keywords, read again once `FRESH` has passed:
        under a flood a group every few milliseconds would otherwise read (and check) the
        whole rule set each time; a change saved at any desk applies within `FRESH`."""
        now = time.monotonic()
        if self._kept is None or now - self._kept[0] >= FRESH:
            rules, keywords = await asyncio.to_thread(lambda: (self.rules(), self.keywords()))
            self._kept = (now, rules, keywords)
        return self._kept[1], self._kept[2]

    async def run(self, replies: Sequence[StoredReply]) -> list[RuleOutcome]:
        """Act on each of `replies` a rule matches and no other runner claimed. A group
        costs three transactions whatever its size (the claims, the conversations'
        changes, what each run did), plus each automatic reply's own send."""
        ruleset, keywords = await self.current()
        matched = [
            (reply, rule) for reply in replies if (rule := ruleset.first(reply.text, keywords))
        ]
        if not matched:
            return []
        plans = [self._plan(reply, rule) for reply, rule in matched]
        try:
            claims = await asyncio.to_thread(self.runs.claim_all, [plan.wanted for plan in plans])
        except StoreError as exc:  # nothing was claimed: another runner, or a retry, may act
            log.warning("keyword rules on %d replies: %s", len(plans), exc)
            return []
        mine = [plan for plan, claim in zip(plans, claims, strict=True) if claim is not None]
        taken = {claim.reply_id: claim for claim in claims if claim is not None}
        said = await self._conversations(mine)
        outcomes = []
        for plan in mine:
            parts = said[plan.reply.id]
            replied = False
            if plan.answer is not None:
                replied, words = await self._answer(plan, taken[plan.reply.id])
                parts.append(words)
            if plan.forward is not None:
                parts.append("forward queued")
            outcomes.append(RuleOutcome(plan.reply.id, plan.rule.name, "; ".join(parts), replied))
        if any(plan.forward is not None for plan in mine):
            self.forwarded()
        try:
            await asyncio.to_thread(
                self.runs.finish_all, [(o.reply_id, o.outcome, o.replied) for o in outcomes]
            )
        except StoreError as exc:  # the runs stay claimed; only their words are missing
            log.warning("keyword rules: what %d runs did was not kept: %s", len(outcomes), exc)
        return outcomes

    def _plan(self, reply: StoredReply, rule: Rule) -> _Plan:
        answer = rule.action(Do.REPLY)
        refusal = "" if answer is None else self.cannot_answer(reply)
        forward = rule.action(Do.FORWARD)
        wanted = Wanted(
            reply.id,
            _digits(reply.from_number),
            rule.name,
            answer.per_day if answer is not None and not refusal else None,
            None if forward is None else (forward.value, forward_body(rule, reply)),
        )
        return _Plan(reply, rule, wanted, answer, refusal, forward)

    async def _conversations(self, plans: Sequence[_Plan]) -> dict[int, list[str]]:
        """Each run's conversation changes, made together (one at a time when one of
        them is refused, so the others still are): what was done or why not, by reply."""
        changes = [
            (plan, action)
            for plan in plans
            for action in plan.rule.actions
            if action.do in (Do.ASSIGN, Do.STATE, Do.TAG)
        ]
        said: dict[int, list[str]] = {plan.reply.id: [] for plan in plans}
        if not changes:
            return said
        try:
            await asyncio.to_thread(
                self.conversations.apply,
                [(plan.wanted.number, action.do.value, action.value) for plan, action in changes],
            )
        except StoreError:
            for plan, action in changes:
                said[plan.reply.id].append(await self._one_change(plan.wanted.number, action))
            return said
        for plan, action in changes:
            said[plan.reply.id].append(action.describe())
        return said

    async def _one_change(self, number: str, action: Action) -> str:
        try:
            await asyncio.to_thread(
                self.conversations.apply, [(number, action.do.value, action.value)]
            )
        except StoreError as exc:
            return f"not {action.do.value}: {exc}"
        return action.describe()

    def cannot_answer(self, reply: StoredReply) -> str:
        """Why `reply` may not be answered automatically ('' when it may)."""
        sender = _digits(reply.from_number)
        if sender and sender == _digits(reply.to_number):
            return "the reply came from the number it was sent to (our own message)"
        try:
            phone = normalise(reply.from_number, self.region)
        except NumberError:
            return "the sender is not a phone number that can receive a reply"
        if len(phone.lstrip("+")) < SHORTEST_PHONE:
            return "the sender is a short code, not a phone that can receive a reply"
        return ""

    async def _answer(self, plan: _Plan, claim: Claim) -> tuple[bool, str]:
        answer = plan.answer
        assert answer is not None
        if plan.refusal:
            return False, f"no automatic reply: {plan.refusal}"
        if not claim.may_reply:
            return False, (
                f"no automatic reply: {claim.replied_today} already in 24 hours "
                f"(at most {answer.per_day})"
            )
        if self.send is None:
            return False, "no automatic reply: no gateway to send it with here"
        try:
            why_not = await self.send(f"+{plan.wanted.number}", answer.value, plan.rule.name)
        except Exception as exc:  # a gateway's or a store's error: told, the run kept
            why_not = f"{type(exc).__name__}: {exc}"
        if why_not:
            return False, f"automatic reply not sent: {why_not}"
        return True, "automatic reply sent"


@dataclass(frozen=True, slots=True)
class _Plan:
    """A matched reply: its rule, what the claim asks for, and what it will do."""

    reply: StoredReply
    rule: Rule
    wanted: Wanted
    answer: Action | None
    refusal: str
    forward: Action | None


def replying_with(sending: Sending) -> SendReply:
    """Automatic replies sent as any single SMS is (`Sending.send_message`): checked,
    refused to an opted-out number, recorded in the outbox and the history."""

    async def send(number: str, text: str, rule: str) -> str:
        try:
            outcome = await sending.send_message(
                SmsForm(recipient=number, text=text), note=f"automatic reply (rule {rule})"
            )
        except GatewayError as exc:  # an opted-out number, a refused text, the gateway
            return exc.message
        if outcome.ok:
            return ""
        error = outcome.error
        return error.message if error is not None else "the gateway did not take it"

    return send


def forward_body(rule: Rule, reply: StoredReply) -> str:
    """What a forward posts: the reply as plain JSON fields, and the rule that sent it."""
    return json.dumps({"rule": rule.name, "reply": reply.as_json()}, ensure_ascii=False)


def _digits(number: str) -> str:
    return number.strip().lstrip("+")
