"""Keyword rules' runs on both engines: a reply acted on once whoever runs the rules, the
automatic replies counted per number, the forwards leased and settled, tags audited."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.app.reply_rules import RuleRunner
from gwdesk.domain.optout_words import DEFAULT_OPT_IN, DEFAULT_OPT_OUT, Keywords
from gwdesk.domain.reply_rules import Draft, RuleSet
from gwdesk.store.conversations import ConversationStore
from gwdesk.store.engine import Database
from gwdesk.store.replies import IncomingReply, ReplyStore, StoredReply
from gwdesk.store.rule_runs import DAY_US, DELIVERED, FAILED, WAITING, RuleRuns
from gwdesk.store.shared import SharedData
from gwdesk.store.team import Audit

CUSTOMER = "61412345678"
OURS = "61400000000"
KEYWORDS = Keywords(DEFAULT_OPT_OUT, DEFAULT_OPT_IN)
T0 = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def database(shared: SharedData) -> Iterator[Database]:
    opened = shared.open()
    yield opened
    opened.close()


@pytest.fixture
def replies(shared: SharedData, tmp_path: Path) -> Iterator[ReplyStore]:
    store = ReplyStore(shared, local=tmp_path / "own.sqlite3")
    yield store
    store.close()


def stored(replies: ReplyStore, text: str, sender: str = CUSTOMER, seconds: int = 0) -> StoredReply:
    reply = IncomingReply(sender, OURS, text, T0 + timedelta(seconds=seconds))
    return replies.add([reply])[0].reply


class Sent:
    """The automatic replies a runner asked to send (the gateway's part is the receiver
    tests'), answering as a send would: '' when it went."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    async def __call__(self, number: str, text: str, rule: str) -> str:
        self.texts.append((number, text))
        return ""


def runner(database: Database, rules: RuleSet, sent: Sent | None, who: str = "desk") -> RuleRunner:
    return RuleRunner(
        RuleRuns(database, runner=who),
        ConversationStore(database, operator=who),
        lambda: rules,
        lambda: KEYWORDS,
        sent,
    )


def hours_rules(**more: object) -> RuleSet:
    fields: dict[str, object] = {
        "name": "hours",
        "match": "whole",
        "value": "HOURS",
        "reply": "Open 9 to 5 weekdays.",
    }
    fields.update(more)
    return RuleSet().with_rule(Draft(**fields).rule(KEYWORDS))  # type: ignore[arg-type]


def test_a_reply_is_claimed_once_whoever_asks(database: Database) -> None:
    first = RuleRuns(database, runner="receiver").claim(7, CUSTOMER, "hours", reply_per_day=1)
    again = RuleRuns(database, runner="desk").claim(7, CUSTOMER, "hours", reply_per_day=1)
    assert first is not None
    assert first.may_reply
    assert again is None


def test_the_daily_limit_counts_automatic_replies_to_the_number_by_any_rule(
    database: Database,
) -> None:
    runs = RuleRuns(database, runner="receiver")
    assert runs.claim(1, CUSTOMER, "hours", reply_per_day=2).may_reply  # type: ignore[union-attr]
    assert runs.claim(2, CUSTOMER, "price", reply_per_day=2).may_reply  # type: ignore[union-attr]
    third = runs.claim(3, CUSTOMER, "hours", reply_per_day=2)
    assert third is not None
    assert (third.may_reply, third.replied_today) == (False, 2)


def test_an_automatic_reply_that_did_not_go_does_not_count(database: Database) -> None:
    runs = RuleRuns(database, runner="receiver")
    runs.claim(1, CUSTOMER, "hours", reply_per_day=1)
    runs.finish(1, "automatic reply not sent: opted out", replied=False)
    assert runs.claim(2, CUSTOMER, "hours", reply_per_day=1).may_reply  # type: ignore[union-attr]


def test_a_forward_is_leased_to_one_runner_at_a_time(database: Database) -> None:
    runs = RuleRuns(database, runner="receiver")
    runs.claim(1, CUSTOMER, "crm", forward=("https://crm.example.org/in", '{"a": 1}'))
    taken = runs.take_forward(60_000_000)
    assert taken is not None
    assert taken.attempts == 1
    assert RuleRuns(database, runner="desk").take_forward(60_000_000) is None


def test_a_forward_retried_and_then_delivered_is_delivered_once(database: Database) -> None:
    runs = RuleRuns(database, runner="receiver")
    runs.claim(1, CUSTOMER, "crm", forward=("https://crm.example.org/in", "{}"))
    taken = runs.take_forward(60_000_000)
    assert taken is not None
    runs.forward_done(taken.id, error="the endpoint answered 500", retry_at=0)
    again = runs.take_forward(60_000_000)
    assert again is not None
    assert again.attempts == 2
    runs.forward_done(again.id)
    kept = runs.forwards()
    assert [(f.state, f.attempts) for f in kept] == [(DELIVERED, 2)]
    assert runs.take_forward(60_000_000) is None


def test_a_forward_out_of_tries_stays_failed_with_its_error(database: Database) -> None:
    runs = RuleRuns(database, runner="receiver")
    runs.claim(1, CUSTOMER, "crm", forward=("https://crm.example.org/in", "{}"))
    taken = runs.take_forward(60_000_000)
    assert taken is not None
    runs.forward_done(taken.id, error="the endpoint answered 404")
    assert [(f.state, f.last_error) for f in runs.forwards(state=FAILED)] == [
        (FAILED, "the endpoint answered 404")
    ]
    assert runs.forwards(state=WAITING) == []


async def test_the_runner_replies_once_to_hours_and_not_again_within_the_day(
    database: Database, replies: ReplyStore
) -> None:
    sent = Sent()
    run = runner(database, hours_rules(), sent)
    await run.run([stored(replies, "Hours?")])
    later = await run.run([stored(replies, "HOURS", seconds=60)])
    assert sent.texts == [(f"+{CUSTOMER}", "Open 9 to 5 weekdays.")]
    assert "at most 1" in later[0].outcome
    assert not later[0].replied


async def test_two_runners_seeing_the_same_reply_act_once(
    database: Database, replies: ReplyStore
) -> None:
    sent = Sent()
    reply = stored(replies, "hours")
    await runner(database, hours_rules(), sent, "receiver").run([reply])
    assert await runner(database, hours_rules(), sent, "desk").run([reply]) == []
    assert len(sent.texts) == 1


async def test_a_stop_reply_runs_no_rule(database: Database, replies: ReplyStore) -> None:
    rules = RuleSet().with_rule(Draft("all", "pattern", "*", tag="seen").rule(KEYWORDS))
    assert await runner(database, rules, Sent()).run([stored(replies, "STOP")]) == []


async def test_a_rule_assigns_tags_and_sets_the_state_audited_as_the_runner(
    database: Database, replies: ReplyStore
) -> None:
    rules = hours_rules(assign="Sam", tag="info", state="waiting")
    await runner(database, rules, Sent(), "receiver").run([stored(replies, "hours")])
    conversations = ConversationStore(database, operator="Alex")
    kept = conversations.get(CUSTOMER)
    assert (kept.state, kept.assigned_to) == ("waiting", "Sam")
    assert conversations.tags([CUSTOMER]) == {CUSTOMER: ["info"]}
    actions = {e.action for e in Audit(database).entries()}
    assert {"conversation assigned", "conversation waiting", "conversation tagged"} <= actions


async def test_no_automatic_reply_goes_to_a_short_code_that_cannot_receive_one(
    database: Database, replies: ReplyStore
) -> None:
    sent = Sent()
    done = await runner(database, hours_rules(), sent).run([stored(replies, "HOURS", "1900")])
    assert sent.texts == []
    assert "can receive a reply" in done[0].outcome


async def test_no_automatic_reply_goes_back_to_our_own_number(
    database: Database, replies: ReplyStore
) -> None:
    sent = Sent()
    done = await runner(database, hours_rules(), sent).run([stored(replies, "HOURS", OURS)])
    assert sent.texts == []
    assert "our own message" in done[0].outcome


async def test_a_forward_rule_queues_the_reply_as_json(
    database: Database, replies: ReplyStore
) -> None:
    reply = stored(replies, "<b>hours</b>\x1b[2J")
    rules = RuleSet().with_rule(
        Draft("crm", "pattern", "*hours*", forward="https://crm.example.org/in").rule(KEYWORDS)
    )
    await runner(database, rules, None).run([reply])
    (forward,) = RuleRuns(database).forwards()
    assert forward.url == "https://crm.example.org/in"
    assert forward.state == WAITING
    assert '"text": "<b>hours</b>\\u001b[2J"' in forward.body


def test_a_day_is_what_the_limit_counts() -> None:
    assert DAY_US == 86_400_000_000
