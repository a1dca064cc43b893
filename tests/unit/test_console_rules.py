"""A console's own listener runs the profile's keyword rules on what it stores (no
receiver serves a one-desk profile): the run claimed once, the conversation changed as
this desk's operator, a forward queued; a console closing lets the group it was handed
finish first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from gwdesk.app.reply_inbox import ReplyInboxFlow
from gwdesk.app.reply_state import ListenerState
from gwdesk.app.rule_editing import RulesFlow
from gwdesk.app.rule_host import rules_running
from gwdesk.domain.reply_rules import Draft
from gwdesk.store.local import LocalStore
from gwdesk.store.rule_runs import RuleRun
from tests.unit.test_reply_inbox_flow import (
    CUSTOMER,
    SYDNEY,
    FailingReads,
    Told,
    incoming,
    post_reply,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    opened = LocalStore(tmp_path / "profile.sqlite3", "demo", operator="Alex")
    yield opened
    opened.close()


@pytest.fixture
async def flow(store: LocalStore) -> AsyncIterator[ReplyInboxFlow]:
    started = ReplyInboxFlow(
        store, SYDNEY, None, FailingReads(store.path, store.shared), Told(),
        rules=lambda: rules_running(store, None, lambda _rule: None),
    )  # fmt: skip
    started.open()
    yield started
    await started.shutdown()


async def run_of_first_reply(store: LocalStore, flow: ReplyInboxFlow) -> RuleRun:
    """Drain as the console's timer does until the rules have run on the first reply."""
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        flow.drain()
        run = await asyncio.to_thread(store.rule_runs.run_of, 1)
        if run is not None and run.outcome:
            return run
        assert asyncio.get_running_loop().time() < deadline, "the rules did not run"
        await asyncio.sleep(0.02)


async def test_a_one_desk_console_runs_the_rule_on_a_reply_its_listener_stored(
    store: LocalStore, flow: ReplyInboxFlow
) -> None:
    RulesFlow(store.settings).add(Draft("late", "first word", "late", state="done", tag="late"))
    status = await flow.start(0)
    assert status.state is ListenerState.LISTENING, status
    assert flow.template is not None
    await post_reply(flow.template, "Late by 10 minutes, sorry")
    run = await run_of_first_reply(store, flow)
    assert (run.rule, run.runner) == ("late", "Alex")
    kept = store.conversations.get(CUSTOMER)
    assert kept.state == "done"
    assert store.conversations.tags([CUSTOMER]) == {CUSTOMER: ["late"]}


async def test_a_console_without_a_gateway_says_its_rule_could_not_reply(
    store: LocalStore, flow: ReplyInboxFlow
) -> None:
    RulesFlow(store.settings).add(Draft("hours", "whole", "hours", reply="Open 9 to 5"))
    await flow.start(0)
    assert flow.template is not None
    await post_reply(flow.template, "HOURS")
    run = await run_of_first_reply(store, flow)
    assert "no gateway" in run.outcome
    assert not run.replied


async def test_rules_started_again_run_on_the_replies_stored_while_they_were_not_running(
    store: LocalStore,
) -> None:
    RulesFlow(store.settings).add(Draft("late", "first word", "late", tag="late"))
    store.replies.add([incoming("late, before the rules ever ran", 0)])
    async with rules_running(store, None, lambda _rule: None):
        pass  # the first start: the rules are for replies from now on
    store.replies.add([incoming("late while they were stopped", 5)])
    async with rules_running(store, None, lambda _rule: None):
        pass  # closing lets the replies handed over finish
    assert store.rule_runs.run_of(1) is None
    run = store.rule_runs.run_of(2)
    assert run is not None
    assert run.outcome == "tag late"
