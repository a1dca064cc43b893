"""A list flow over a real profile store and a gateway that only reports its credits.

The flow's decisions (what it asks, who it leaves out, what it records) need the
profile's store (the opt-out list, the outbox, the history) but no request on the
wire: the gateway here answers the account's credits and nothing else, and a
"lodged" request is made so by the outbox's own transitions, as the runner would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from gwdesk.app.list_send import ListSend
from gwdesk.app.optouts import OptOutGuard
from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.send_history import list_history
from gwdesk.app.send_values import RunReport
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsForm, SmsMessage, check_message
from gwdesk.domain.funds import Funds
from gwdesk.domain.models.wire import AccountInfo
from gwdesk.gateway.service import GatewayService
from gwdesk.importing.recipients import InvalidRow, RecipientList
from gwdesk.store.history import HistoryEntry
from gwdesk.store.local import LocalStore
from gwdesk.store.outbox import OutboxEntry

ACCOUNT = "sandbox:demo"
NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


class CreditsOnly:
    """A gateway whose only answer is the account's credits."""

    def __init__(self, credits: int | None = 10_000) -> None:
        self.credits = credits

    async def funds(self) -> Funds:
        return Funds(
            AccountInfo.model_validate(
                {"AccountName": "demo", "AccountStatus": "Active", "AccountType": "Prepaid",
                 "MessageCredits": self.credits}
            )
        )  # fmt: skip


@dataclass
class Desk:
    """One profile's store and its list flow."""

    store: LocalStore
    flow: ListSend
    gateway: CreditsOnly

    @property
    def sending(self) -> Sending:
        return self.flow.sending


def desk(path: Path, credits: int | None = 10_000, *, now: datetime = NOW) -> Desk:
    store = LocalStore(path, ACCOUNT)
    gateway = CreditsOnly(credits)
    runner = OutboxRunner(
        cast(GatewayService, gateway), store.outbox, ACCOUNT, guard=OptOutGuard(store.optouts)
    )
    sending = Sending(runner, store.history, "AU", now=lambda: now)
    return Desk(store, ListSend.of(sending, store), gateway)


def number(i: int) -> str:
    return f"614120{i:05d}"


def numbers(count: int, start: int = 0) -> tuple[str, ...]:
    return tuple(number(i) for i in range(start, start + count))


def listing(
    recipients: Sequence[str], invalid: Sequence[InvalidRow] = (), duplicates: int = 0
) -> RecipientList:
    return RecipientList(tuple(recipients), tuple(invalid), duplicates, 0)


def message(
    desk: Desk, text: str = "The clinic is closed on Monday.", **options: object
) -> SmsMessage:
    form = SmsForm(Channel.REST_SMS, text=text, **options)  # type: ignore[arg-type]
    return check_message(form, "AU", NOW, desk.sending.compliance)


def lodge(desk: Desk, entries: Sequence[OutboxEntry]) -> list[OutboxEntry]:
    """Entries made lodged as the runner makes them (begin, then the answer)."""
    outbox = desk.store.outbox
    done = []
    for entry in entries:
        outbox.begin(entry.id)
        done.append(outbox.lodged(entry.id, batch_code=f"B{entry.id}"))
    return done


async def lodged_list(
    desk: Desk, text: str, recipients: Sequence[str], at: datetime, *, lodged: int | None = None
) -> HistoryEntry:
    """A list of `text` recorded and its first `lodged` requests lodged (all by
    default), as a run leaves them; the history row the run makes at `at`."""
    sent = message(desk, text)
    batch, entries = await desk.sending.record_list(sent, recipients)
    count = len(entries) if lodged is None else lodged
    now = lodge(desk, entries[:count]) + list(entries[count:])
    return list_history(sent, batch, RunReport(batch), now, at)


async def sent_before(
    desk: Desk, text: str, recipients: Sequence[str], at: datetime, *, lodged: int | None = None
) -> None:
    """`lodged_list`, its history row written."""
    desk.store.history.add(await lodged_list(desk, text, recipients, at, lodged=lodged))
