"""The single send's decisions (`app/single_send.py`), Qt-free, over a real profile store.

The gateway is an `httpx.MockTransport` that keeps every send it was asked for and
answers the account's credits as each test sets them, so each decision (the question,
a refusal, what is read again) is seen with the requests it made, or did not.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from gwdesk.app.optouts import OptedOutError
from gwdesk.app.personal import Cost
from gwdesk.app.profile_data import ProfileData, account_key, open_profile, sending_for
from gwdesk.app.questions import Concern
from gwdesk.app.send_values import StoreAwayError
from gwdesk.app.single_send import SingleSend
from gwdesk.app.sms import Channel, SmsForm
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.service import GatewayService
from gwdesk.store.database import StoreUnavailable
from gwdesk.store.local import LocalStore
from gwdesk.store.optouts import OptOutStore
from gwdesk.store.replies import IncomingReply

CUSTOMER = "61412345678"
TWO_PARTS = "x" * 200


@dataclass
class Gateway:
    """The REST gateway's two endpoints a single send uses."""

    credits: int = 10_000
    sends: list[dict[str, Any]] = field(default_factory=list)
    asked_credits: int = 0

    def answer(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v2/Account/Info":
            self.asked_credits += 1
            return httpx.Response(
                200, json={"AccountType": "Prepaid", "MessageCredits": self.credits}
            )
        if request.url.path == "/v2/message/send":
            body = json.loads(request.content)
            self.sends.append(body)
            message = {
                "PhoneNumber": body["Recipients"][0],
                "MessageId": f"m-{len(self.sends)}",
                "Status": "ACTIVE",
                "ExternalSystemId": body["ExternalSystemId"],
            }
            envelope = {"Status": "Success", "StatusCode": 200, "Data": {"Message": message}}
            return httpx.Response(200, json=envelope)
        return httpx.Response(404)


@dataclass
class Desk:
    flow: SingleSend
    store: LocalStore
    gateway: Gateway


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    gateway = Gateway()
    profile = Profile(
        name="unit",
        rest_url="http://127.0.0.1:9",
        lodge_url="http://127.0.0.1:9/dotnet/Lodge.asmx",
        username="ops",
        auth="basic",
    )
    data = ProfileData(tmp_path / "p.sqlite3", account_key(profile), "AU")
    store = open_profile(data)
    transport = httpx.MockTransport(gateway.answer)
    try:
        async with GatewayService(profile, Secret("pw"), transport=transport) as service:
            sending = sending_for(service, store, data)
            yield Desk(SingleSend(sending, store.contacts), store, gateway)
    finally:
        store.close()


def stop(store: LocalStore, number: str = CUSTOMER) -> None:
    store.replies.add([IncomingReply(number, "61400000000", "STOP", datetime.now(UTC))])


def counted(store: OptOutStore, name: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count calls of one of the opt-out store's reads."""
    calls: list[int] = []
    read: Callable[..., Any] = getattr(store, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return read(*args, **kwargs)

    monkeypatch.setattr(store, name, counting)
    return calls


def form(text: str = "Your order is ready", **values: Any) -> SmsForm:
    given: Mapping[str, Any] = {"recipient": CUSTOMER, **values}
    return SmsForm(text=text, **given)


# ---- the question ------------------------------------------------------------------------


async def test_a_send_the_credits_cover_asks_nothing(desk: Desk) -> None:
    prepared = await desk.flow.prepare(desk.flow.check(form(TWO_PARTS)))
    assert prepared.question is None
    assert prepared.cost is not None
    assert prepared.cost.covered


async def test_credits_short_are_asked_about_with_the_cost_in_words(desk: Desk) -> None:
    desk.gateway.credits = 1
    prepared = await desk.flow.prepare(desk.flow.check(form(TWO_PARTS)))
    assert prepared.question is not None
    assert prepared.question.concerns == {Concern.CREDITS_SHORT}
    assert "needs 2 credits and the account has 1" in prepared.question.text()
    assert (prepared.question.title, prepared.question.yes) == ("Send the message?", "Send anyway")


async def test_an_unanswered_question_sends_nothing(desk: Desk) -> None:
    desk.gateway.credits = 1
    prepared = await desk.flow.prepare(desk.flow.check(form(TWO_PARTS)))
    with pytest.raises(ValueError, match="unanswered"):
        await desk.flow.send(prepared)
    assert desk.gateway.sends == []


async def test_credits_short_answered_yes_is_sent(desk: Desk) -> None:
    desk.gateway.credits = 1
    prepared = await desk.flow.prepare(desk.flow.check(form(TWO_PARTS)))
    result = await desk.flow.send(prepared, answered=True)
    assert result.ok
    assert [s["Message"] for s in desk.gateway.sends] == [TWO_PARTS]


async def test_a_fresh_answer_about_the_credits_is_weighed_without_asking_again(
    desk: Desk,
) -> None:
    fresh = Cost(1, 1, 1, "1 credit")
    prepared = await desk.flow.prepare(desk.flow.check(form(TWO_PARTS)), fresh=fresh)
    assert desk.gateway.asked_credits == 0
    assert prepared.question is not None  # 2 parts against the 1 credit it said


async def test_a_wap_push_costs_no_parts_and_asks_nothing(desk: Desk) -> None:
    wap = SmsForm(Channel.WAP_PUSH, recipient=CUSTOMER, wap_url="https://x.example/a")
    prepared = await desk.flow.prepare(desk.flow.check(wap))
    assert (prepared.parts, prepared.cost, prepared.question) == (0, None, None)
    assert desk.gateway.asked_credits == 0


# ---- the opt-out list --------------------------------------------------------------------


async def test_an_opted_out_number_is_refused_at_the_recipient_with_nothing_recorded(
    desk: Desk,
) -> None:
    stop(desk.store)
    prepared = await desk.flow.prepare(desk.flow.check(form()))
    with pytest.raises(OptedOutError) as refused:
        await desk.flow.send(prepared, answered=True)
    assert refused.value.field == "Recipient"
    assert desk.store.outbox.batches(open_only=False) == []
    assert desk.gateway.sends == []


async def test_a_factual_message_goes_to_an_opted_out_number_and_says_so(desk: Desk) -> None:
    stop(desk.store)
    prepared = await desk.flow.prepare(desk.flow.check(form(factual=True)))
    result = await desk.flow.send(prepared, answered=True)
    assert result.ok
    assert "purely factual" in result.refresh.history[0].detail


async def test_one_send_reads_the_opt_out_list_once(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    optouts = desk.store.optouts
    some, whole = (
        counted(optouts, "opted_out", monkeypatch),
        counted(optouts, "opted_out_numbers", monkeypatch),
    )
    prepared = await desk.flow.prepare(desk.flow.check(form()))
    result = await desk.flow.send(prepared, answered=True)
    assert result.ok
    assert (len(some), len(whole)) == (1, 0)


async def test_the_store_away_sends_nothing_and_keeps_the_text(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    def away(*_args: object) -> object:
        raise StoreUnavailable("the team's server cannot be reached")

    monkeypatch.setattr(desk.store.optouts, "opted_out", away)
    prepared = await desk.flow.prepare(desk.flow.check(form("Keep me")))
    with pytest.raises(StoreAwayError, match="opt-out list cannot be read"):
        await desk.flow.send(prepared, answered=True)
    assert desk.gateway.sends == []
    assert desk.store.outbox.batches(open_only=False) == []
    assert prepared.form.text == "Keep me"


# ---- templates ---------------------------------------------------------------------------


async def test_a_placeholder_is_filled_from_the_contact_holding_the_number(desk: Desk) -> None:
    desk.store.contacts.add(ContactCard("Zoë", (CUSTOMER,), (("Clinic", "Glebe"),)))
    prepared = await desk.flow.prepare(desk.flow.check(form("Hi {name}, {clinic} is open.")))
    await desk.flow.send(prepared, answered=True)
    assert [s["Message"] for s in desk.gateway.sends] == ["Hi Zoë, Glebe is open."]


async def test_a_placeholder_with_no_value_is_refused_at_the_message(desk: Desk) -> None:
    desk.store.contacts.add(ContactCard("Zoë", (CUSTOMER,)))
    checked = desk.flow.check(form("Your check-up at {clinic} is due."))
    with pytest.raises(ValidationError, match=r"No value for \{clinic\}") as refused:
        await desk.flow.prepare(checked)
    assert refused.value.field == "Message"
    assert desk.gateway.sends == []


async def test_a_text_that_is_no_template_is_refused_at_the_message(desk: Desk) -> None:
    with pytest.raises(ValidationError, match="Not a usable template") as refused:
        desk.flow.check(form("Hi {name, see you"))
    assert refused.value.field == "Message"


async def test_double_braces_go_as_one(desk: Desk) -> None:
    assert desk.flow.check(form("Code {{A1}}")).form.text == "Code {A1}"


async def test_a_command_lines_message_goes_as_written(desk: Desk) -> None:
    checked = desk.flow.check(form("Code {{A1}} for {name}"), placeholders=False)
    assert (checked.form.text, checked.template) == ("Code {{A1}} for {name}", None)


# ---- the form and the result -------------------------------------------------------------


async def test_a_form_is_refused_at_its_field(desk: Desk) -> None:
    with pytest.raises(ValidationError) as refused:
        desk.flow.check(form(recipient="12"))
    assert refused.value.field == "Recipient"


async def test_the_result_says_what_to_read_again(desk: Desk) -> None:
    prepared = await desk.flow.prepare(desk.flow.check(form()))
    result = await desk.flow.send(prepared, answered=True)
    assert (result.ok, result.to) == (True, "+61 412 345 678")
    assert [row.recipients for row in result.refresh.history] == [CUSTOMER]
    assert (result.refresh.names, result.refresh.balance) == ((CUSTOMER,), True)
