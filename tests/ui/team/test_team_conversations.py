"""Conversations as work across two consoles of one team on a real PostgreSQL server,
the office's receiver (`gwdesk listen --store`) storing the replies."""

from __future__ import annotations

from gwdesk.sandbox.server import SandboxThread
from tests.contract.listener_support import Starter
from tests.ui.conftest import wait_until
from tests.ui.conversations_support import fresh_listing, states
from tests.ui.replies_support import CUSTOMER, post_reply
from tests.ui.team.conftest import Console, Desks, receiver


async def opened(console: Console) -> None:
    work = console.replies.conversation.work
    console.replies.conversation.open(CUSTOMER)
    await wait_until(lambda: work.state_label.text() != "", 20)


async def test_a_conversation_marked_done_at_one_desk_shows_done_at_the_other(
    desks: Desks, sandbox: SandboxThread, receivers: Starter, pg_url: str
) -> None:
    template = receiver(receivers, pg_url)
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    sam = await desks.open(sandbox, "Sam desk", "Sam", pg_url)
    assert (await post_reply(template, text="Is Friday still on?")).text == "OK"
    for console in (alex, sam):
        await wait_until(lambda c=console: c.reply_texts() == ["Is Friday still on?"], 20)
    await opened(alex)
    await opened(sam)
    shown_to_sam = sam.replies.conversation.work.state_label

    alex.replies.conversation.work.done_button.click()

    await wait_until(lambda: shown_to_sam.text().startswith("Done"), 20)
    await fresh_listing(sam.replies.conversations)  # read after Sam's desk saw it done
    assert states(sam.replies.conversations.tree) == ["Done"]
    assert (await post_reply(template, text="One more thing")).text == "OK"
    await wait_until(lambda: shown_to_sam.text().startswith("Open"), 20)
    alex_sees = alex.replies.conversation.work.state_label
    await wait_until(lambda: alex_sees.text().startswith("Open"), 20)
