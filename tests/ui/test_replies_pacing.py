"""The Replies view's pacer: deliveries handed over a slice a frame, in order, none lost."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtWidgets import QApplication

from gwdesk.store.replies import StoredReply
from gwdesk.ui.replies.pacing import DeliveryPacer
from gwdesk.ui.reply_state import ReplyDelivery
from tests.ui.conftest import wait_until

NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def replies(first: int, count: int) -> tuple[StoredReply, ...]:
    return tuple(
        StoredReply(n, "61412345678", "61400000000", f"reply {n}", NOW, None, None, None, None, "webhook", NOW)
        for n in range(first, first + count)
    )  # fmt: skip


def pacer(slice_rows: int = 100) -> tuple[DeliveryPacer, list[ReplyDelivery]]:
    shown: list[ReplyDelivery] = []
    return DeliveryPacer(shown.append, slice_rows=slice_rows), shown


def test_a_lone_delivery_is_handed_over_at_once(qapp: QApplication) -> None:
    paced, shown = pacer()
    delivery = ReplyDelivery(replies(1, 3))

    paced.add(delivery)

    assert shown == [delivery]
    assert paced.idle


def test_a_huge_delivery_is_handed_over_in_slices_one_a_frame(qapp: QApplication) -> None:
    paced, shown = pacer(slice_rows=100)

    paced.add(ReplyDelivery(replies(1, 250)))

    assert [len(d.new) for d in shown] == [100]  # the rest waits for the frames that follow
    assert paced.waiting == 150


async def test_every_reply_is_handed_over_once_in_the_order_it_arrived(qapp: QApplication) -> None:
    paced, shown = pacer(slice_rows=100)
    for first in (1, 251, 261):
        paced.add(ReplyDelivery(replies(first, 250 if first == 1 else 10)))
    paced.add(ReplyDelivery(replies(271, 130)))

    await wait_until(lambda: paced.idle)

    ids = [reply.id for delivery in shown for reply in delivery.new]
    assert ids == list(range(1, 401))
    assert all(len(delivery.new) <= 100 for delivery in shown)


async def test_updates_and_overflow_ride_with_the_last_slice_of_their_delivery(
    qapp: QApplication,
) -> None:
    paced, shown = pacer(slice_rows=100)
    updated = replies(7, 1)
    paced.add(ReplyDelivery(replies(1, 150), updated, 2))

    await wait_until(lambda: paced.idle)

    assert [(len(d.new), d.updated, d.dropped) for d in shown] == [(100, (), 0), (50, updated, 2)]


def test_clearing_forgets_what_waits(qapp: QApplication) -> None:
    paced, shown = pacer(slice_rows=100)
    paced.add(ReplyDelivery(replies(1, 250)))

    paced.clear()

    assert paced.idle
    assert paced.waiting == 0
    assert len(shown) == 1
