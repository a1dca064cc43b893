"""When a list send asks first, and in which words: the policy and its concerns, Qt-free."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gwdesk.app.list_send import (
    SendFacts,
    ago,
    duplicate_of,
    list_totals,
    question_for,
)
from gwdesk.app.optouts import Screened
from gwdesk.app.personal import Cost
from gwdesk.app.questions import Concern
from gwdesk.importing.recipients import InvalidRow, RecipientList
from gwdesk.store.history import Reached
from gwdesk.store.optouts import How, OptOut

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
COVERED = Cost(200, 200, 10_000)
OPTED_OUT = OptOut("61412000007", True, NOW, How.REPLY, "customer", keyword="STOP")


def numbers(count: int, start: int = 0) -> frozenset[str]:
    return frozenset(f"614120{i:05d}" for i in range(start, start + count))


def asked(facts: SendFacts) -> frozenset[Concern]:
    question = question_for(facts, NOW)
    return question.concerns if question is not None else frozenset()


def test_a_clean_list_of_200_is_asked_about_with_its_figures() -> None:
    question = question_for(SendFacts(200, 200, cost=COVERED, text="Closed on Monday"), NOW)
    assert question is not None
    assert question.concerns == {Concern.LIST}
    assert question.text() == (
        "Message: “Closed on Monday”\n"
        "Recipients: 200\n"
        "SMS parts: 200\n"
        "Cost: 200 credits; 9,800 credits left of 10,000"
    )
    assert (question.recipients, question.parts, question.cost) == (200, 200, COVERED)
    assert question.yes == "Send to 200 recipients"


def test_a_list_of_two_is_asked_about_too() -> None:
    assert asked(SendFacts(2, 2)) == {Concern.LIST}


def test_a_long_message_is_quoted_cut_with_its_length() -> None:
    question = question_for(SendFacts(2, 8, text="word " * 300), NOW)
    assert question is not None
    first = question.text().splitlines()[0]
    assert first.endswith("…” (1,500 characters)")
    assert len(first) < 160


def test_a_message_over_several_lines_is_quoted_on_one() -> None:
    question = question_for(SendFacts(2, 2, text="Closed\non\r\nMonday"), NOW)
    assert question is not None
    assert question.text().splitlines()[0] == "Message: “Closed on Monday”"


def test_credits_that_do_not_cover_the_send_are_asked_about() -> None:
    facts = SendFacts(200, 200, cost=Cost(200, 200, 150))
    question = question_for(facts, NOW)
    assert question is not None
    assert question.concerns == {Concern.LIST, Concern.CREDITS_SHORT}
    assert "needs 200 credits and the account has 150" in question.text()
    assert "Cost: 200 credits; the account has 150, 50 short" in question.text()


def test_credits_the_gateway_does_not_report_are_not_asked_about() -> None:
    question = question_for(SendFacts(200, 200, cost=Cost(200, note="postpaid")), NOW)
    assert question is not None
    assert question.concerns == {Concern.LIST}
    assert "Cost: not known (postpaid)" in question.text()


def test_rows_that_cannot_be_sent_to_are_asked_about_when_others_can() -> None:
    question = question_for(SendFacts(247, 247, invalid=3), NOW)
    assert question is not None
    assert question.concerns == {Concern.LIST, Concern.INVALID_ROWS}
    assert question.asks[1].text.startswith("3 recipients cannot be sent to")
    assert question.yes == "Send to 247 recipients"


def test_a_send_to_nobody_asks_nothing_as_recording_it_refuses() -> None:
    assert asked(SendFacts(0, 0, invalid=3)) == frozenset()


def test_a_list_the_last_run_already_reached_is_asked_about() -> None:
    question = question_for(SendFacts(250, 250, lodged_before=100), NOW)
    assert question is not None
    assert question.concerns == {Concern.LIST, Concern.ALREADY_LODGED}
    assert "already reached 100 recipients" in question.text()


def test_a_duplicate_of_a_recent_send_is_named_with_when_and_how_many() -> None:
    earlier = [Reached(NOW - timedelta(hours=2), "", numbers(198))]
    duplicate = duplicate_of(numbers(200), earlier)
    question = question_for(SendFacts(200, 200, duplicate=duplicate), NOW)
    assert question is not None
    assert question.concerns == {Concern.LIST, Concern.DUPLICATE}
    assert question.asks[1].text == (
        "This text was sent 2 hours ago to 198 of these 200 recipients. Send it to them again?"
    )


def test_every_concern_is_said_in_one_question_the_figures_first() -> None:
    earlier = [Reached(NOW, "", numbers(2000))]
    facts = SendFacts(
        2000,
        2000,
        invalid=1,
        lodged_before=5,
        duplicate=duplicate_of(numbers(2000), earlier),
        cost=Cost(2000, 2000, 10),
    )
    question = question_for(facts, NOW)
    assert question is not None
    assert [a.concern for a in question.asks] == [
        Concern.LIST,
        Concern.INVALID_ROWS,
        Concern.ALREADY_LODGED,
        Concern.DUPLICATE,
        Concern.CREDITS_SHORT,
    ]


# ---- duplicates -----------------------------------------------------------------------------


def test_the_same_list_sent_again_is_a_duplicate_of_all_of_it() -> None:
    found = duplicate_of(numbers(200), [Reached(NOW, "", numbers(200))])
    assert found is not None
    assert (found.reached, found.recipients, found.sends) == (200, 200, 1)
    assert found.ask(NOW + timedelta(seconds=5)).text == (
        "This text was sent just now to all 200 of these recipients. Send it to them again?"
    )


def test_a_list_most_of_whose_recipients_got_the_text_is_a_duplicate() -> None:
    assert duplicate_of(numbers(200), [Reached(NOW, "", numbers(160))]) is not None


def test_a_list_few_of_whose_recipients_got_the_text_is_not_a_duplicate() -> None:
    assert duplicate_of(numbers(200), [Reached(NOW, "", numbers(159))]) is None


def test_sends_that_together_reached_most_of_the_list_are_counted_together() -> None:
    earlier = [
        Reached(NOW - timedelta(hours=3), "", numbers(100)),
        Reached(NOW - timedelta(minutes=20), "", numbers(100, start=100)),
    ]
    found = duplicate_of(numbers(200), earlier)
    assert found is not None
    assert (found.reached, found.sends, found.last) == (200, 2, NOW - timedelta(minutes=20))
    assert "in 2 sends, the last 20 minutes ago" in found.ask(NOW).text


def test_an_earlier_send_to_other_numbers_is_no_duplicate() -> None:
    assert duplicate_of(numbers(10), [Reached(NOW, "", numbers(10, start=50))]) is None


def test_how_long_ago_reads_in_minutes_hours_and_days() -> None:
    assert [ago(timedelta(seconds=s)) for s in (3, 60, 3599, 3600, 7200, 50 * 3600)] == [
        "just now",
        "1 minute ago",
        "59 minutes ago",
        "1 hour ago",
        "2 hours ago",
        "2 days ago",
    ]


# ---- totals ---------------------------------------------------------------------------------


def test_the_totals_leave_out_the_opted_out_and_count_the_rest() -> None:
    listed = RecipientList(
        tuple(sorted(numbers(250))), (InvalidRow(3, "n/a", "not a number"),), 2, 0
    )
    optout = OPTED_OUT
    kept = tuple(n for n in listed.numbers if n != optout.number)
    totals = list_totals(listed, Screened(kept, (optout,)), 2)
    assert dict(totals.figures) == {
        "valid": "250",
        "duplicates": "2",
        "invalid": "1",
        "excluded": "1",
        "parts": "2",
        "total_parts": "498",
        "requests": "3",
    }
    assert totals.excluded == (optout,)
    assert totals.optouts.text.startswith("Opted out: 1 excluded.")
    assert totals.parts == 498
    assert "SMS parts in all: 498" in totals.text()


def test_a_factual_message_keeps_the_opted_out_in_the_totals() -> None:
    listed = RecipientList(tuple(sorted(numbers(20))), (), 0, 0)
    optout = OPTED_OUT
    totals = list_totals(listed, Screened(listed.numbers, (optout,), factual=True), 1)
    assert (totals.figures["excluded"], totals.figures["total_parts"]) == ("0", "20")
    assert totals.excluded == ()
    assert (totals.optouts.tone, totals.opted_out) == ("warning", 1)
    assert "purely factual" in totals.optouts.text


def test_the_totals_wait_while_the_list_is_checked() -> None:
    totals = list_totals(None, None, 1, checking=True)
    assert set(totals.figures.values()) == {"…", "1"}
    assert totals.parts is None  # the cost shown stays


def test_a_message_with_no_space_is_quoted_cut_where_a_label_cannot_wrap() -> None:
    question = question_for(SendFacts(2, 30, text="W" * 2000), NOW)
    assert question is not None
    assert question.text().splitlines()[0] == f"Message: “{'W' * 32}…” (2,000 characters)"
