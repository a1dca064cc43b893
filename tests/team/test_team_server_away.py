"""Sending while the team's server is away: refused with why, nothing sent, the desk's
drafts kept; once it is back the same send goes through."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gwdesk.app.profile_data import ProfileData, account_key, open_profile, sending_for
from gwdesk.app.send_values import StoreAwayError
from gwdesk.app.sending import Sending
from gwdesk.app.sms import SmsForm, check_message
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from tests.contract.rest_support import service_for
from tests.postgres_server import PostgresServer

CUSTOMER = "61412345678"


@pytest.fixture
async def desk(
    lone_postgres: PostgresServer, sandbox: SandboxThread, tmp_path: Path
) -> AsyncIterator[tuple[Sending, LocalStore]]:
    service = service_for(sandbox)
    url = lone_postgres.dsn()
    data = ProfileData(tmp_path / "desk.sqlite3", account_key(service.profile), "AU", url, "Alex")
    store = open_profile(data)
    try:
        yield sending_for(service, store, data), store
    finally:
        await service.aclose()
        store.close()


def lodged(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


async def test_a_message_is_refused_with_why_while_the_opt_out_list_cannot_be_read(
    desk: tuple[Sending, LocalStore], lone_postgres: PostgresServer, sandbox: SandboxThread
) -> None:
    sending, _store = desk
    lone_postgres.stop()
    with pytest.raises(StoreAwayError, match="opt-out list cannot be read") as refused:
        await sending.send_message(SmsForm(recipient=CUSTOMER, text="Your order is ready"))
    assert refused.value.message.endswith("Try again once it is back.")
    assert lodged(sandbox) == 0


async def test_a_list_is_refused_before_any_of_it_leaves(
    desk: tuple[Sending, LocalStore], lone_postgres: PostgresServer, sandbox: SandboxThread
) -> None:
    sending, _store = desk
    lone_postgres.stop()
    message = check_message(SmsForm(text="Sale on now"), "AU")
    with pytest.raises(StoreAwayError):
        await sending.send_list(message, [f"614120{n:05d}" for n in range(150)])
    assert lodged(sandbox) == 0


async def test_the_desks_draft_is_kept_while_the_server_is_away(
    desk: tuple[Sending, LocalStore], lone_postgres: PostgresServer
) -> None:
    _sending, store = desk
    lone_postgres.stop()
    store.drafts.save("send", {"text": "Typed while the server was away"})
    assert store.drafts.load("send") == {"text": "Typed while the server was away"}


async def test_the_same_send_goes_through_once_the_server_is_back(
    desk: tuple[Sending, LocalStore], lone_postgres: PostgresServer, sandbox: SandboxThread
) -> None:
    sending, store = desk
    lone_postgres.stop()
    form = SmsForm(recipient=CUSTOMER, text="Your order is ready")
    with pytest.raises(StoreAwayError):
        await sending.send_message(form)
    lone_postgres.start()
    outcome = await sending.send_message(form)
    assert outcome.ok
    assert lodged(sandbox) == 1
    [batch] = store.outbox.batches(open_only=False)
    assert batch.operator == "Alex"
