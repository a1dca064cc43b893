"""The same number typed any way finds the same rows in every store that searches numbers:
contacts, the opt-out list and replies, on both engines (and the log cache, one desk's)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gwdesk.domain.contacts import ContactCard
from gwdesk.logs.query import LogFilter, LogQuery, iter_view
from gwdesk.logs.rows import SELECT_COLUMNS
from gwdesk.store.contacts import ContactStore
from gwdesk.store.optouts import OptOutStore
from gwdesk.store.reader import Reading, StoreReader
from gwdesk.store.replies import IncomingReply, ReplyStore
from gwdesk.store.reply_queries import ReplySearch, listing
from gwdesk.store.shared import SharedData
from tests.unit.logcache_support import cache, record, write

WANTED = ("61412555001", "61412555002")
OTHERS = ("61412655003", "61499412555")
FORMS = ["0412 555", "61412555", "+61 412 555", "0061412555"]


@pytest.mark.parametrize("typed", FORMS)
def test_contacts_are_found_by_any_form_of_their_number(shared: SharedData, typed: str) -> None:
    contacts = ContactStore(shared, region="AU")
    for n, number in enumerate(WANTED + OTHERS):
        contacts.add(ContactCard(f"Customer {n}", (number,)))
    found = {c.number for c in contacts.listing(typed)}
    contacts.close()
    assert found == set(WANTED)


@pytest.mark.parametrize("typed", FORMS)
def test_opt_outs_are_found_by_any_form_of_their_number(shared: SharedData, typed: str) -> None:
    optouts = OptOutStore(shared, "ops@gw", operator="Sam", region="AU")
    optouts.import_numbers(WANTED + OTHERS, reason="complaints")
    found = {o.number for o in optouts.listing(typed)}
    optouts.close()
    assert found == set(WANTED)


def test_a_piece_of_a_number_is_found_anywhere_in_it(shared: SharedData) -> None:
    optouts = OptOutStore(shared, "ops@gw", operator="Sam", region="AU")
    optouts.import_numbers(WANTED + OTHERS, reason="complaints")
    found = {o.number for o in optouts.listing("412 555")}
    optouts.close()
    assert found == {*WANTED, "61499412555"}


@pytest.mark.parametrize("typed", FORMS)
def test_replies_are_found_by_any_form_of_the_senders_number(
    shared: SharedData, tmp_path: Path, typed: str
) -> None:
    replies = ReplyStore(shared, local=tmp_path / "profile.sqlite3")
    senders = ("0412555001", "+61412555002", *OTHERS)  # as gateways write them
    replies.add(
        [
            IncomingReply(sender, "61400000000", f"hello {n}", datetime(2026, 3, 3, n, tzinfo=UTC))
            for n, sender in enumerate(senders)
        ]
    )
    reader = StoreReader(tmp_path / "profile.sqlite3", shared)
    try:
        rows = reader.run(lambda reading: listing(reading, ReplySearch(typed, region="AU")))
    finally:
        reader.close()
        replies.close()
    assert rows.total == 2


@pytest.mark.parametrize("typed", FORMS)
def test_log_records_are_found_by_any_form_of_the_recipient(tmp_path: Path, typed: str) -> None:
    path = tmp_path / "logs.sqlite3"
    with cache(path) as (_store, writer):
        write(writer, [record(n, to=number) for n, number in enumerate(WANTED + OTHERS)])
    column = list(SELECT_COLUMNS).index("to_number")

    def found(flt: LogFilter) -> set[str]:
        rows = [row for chunk in iter_view(Reading(conn), LogQuery(flt)) for row in chunk]
        return {row[column] for row in rows}

    conn = sqlite3.connect(path)
    try:
        assert found(LogFilter(recipient=typed)) == set(WANTED)
        assert found(LogFilter(text=typed)) == set(WANTED)
    finally:
        conn.close()
