"""The reply listener over real HTTP, called the way the gateway's webhooks call it."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from gwdesk.replies import PortInUseError, ReplyBatch
from tests.contract.listener_support import CUSTOMER, OURS, Running, running_listener

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[Running]:
    with running_listener(tmp_path / "profile.sqlite3") as running:
        yield running


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def test_a_get_webhook_is_answered_ok_and_stored(listening: Running, http: httpx.Client) -> None:
    response = http.get(listening.url(MSG="Yes & thanks"))
    assert (response.status_code, response.text) == (200, "OK")
    assert response.headers["Content-Type"].startswith("text/plain")
    [stored] = listening.store.latest()
    assert (stored.from_number, stored.to_number, stored.text) == (CUSTOMER, OURS, "Yes & thanks")
    assert stored.received_at == datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)
    assert stored.sent_at == datetime(2024, 1, 5, 3, 4, 5, tzinfo=UTC)


def test_ok_comes_only_after_the_reply_is_committed(
    listening: Running, http: httpx.Client, tmp_path: Path
) -> None:
    for i in range(5):
        assert http.get(listening.url(MSG=f"reply {i}")).text == "OK"
        # Another connection sees it at once: committed, not merely queued.
        other = sqlite3.connect(tmp_path / "profile.sqlite3")
        assert other.execute("SELECT COUNT(*) FROM replies").fetchone() == (i + 1,)
        other.close()


def test_a_form_post_webhook_is_stored(listening: Running, http: httpx.Client) -> None:
    address, _, body = listening.url(MSG="Posted reply").partition("?")
    response = http.post(address, content=body, headers=FORM)
    assert (response.status_code, response.text) == (200, "OK")
    assert [r.text for r in listening.store.latest()] == ["Posted reply"]


def test_a_keyword_forward_is_stored_with_its_ids(listening: Running, http: httpx.Client) -> None:
    body = {
        "ReplyId": "R-7",
        "From": CUSTOMER,
        "To": OURS,
        "Message": "JOIN the club",
        "Keyword": "JOIN",
        "SentAt": "2024-01-05T14:04:05+11:00",
        "ReceivedAt": "2024-01-05T14:04:07+11:00",
        "OriginalMessageId": None,
    }
    response = http.post(listening.template.base_url, json=body)
    assert (response.status_code, response.text) == (200, "OK")
    [stored] = listening.store.latest()
    assert (stored.reply_id, stored.keyword, stored.source) == ("R-7", "JOIN", "keyword")
    assert stored.received_at == datetime(2024, 1, 5, 3, 4, 7, tzinfo=UTC)


def test_a_retried_reply_gets_ok_again_and_is_stored_once(
    listening: Running, http: httpx.Client
) -> None:
    url = listening.url()
    assert [http.get(url).text for _ in range(3)] == ["OK", "OK", "OK"]
    assert listening.store.count() == 1


def test_the_same_reply_by_webhook_and_keyword_forward_is_stored_once(
    listening: Running, http: httpx.Client
) -> None:
    http.get(listening.url(MSG="STOP please"))
    forward = {
        "ReplyId": "R-1",
        "From": CUSTOMER,
        "To": OURS,
        "Message": "STOP please",
        "Keyword": "STOP",
        "ReceivedAt": "2024-01-05T14:04:07+11:00",
        "OriginalMessageId": "M-1",
    }
    assert http.post(listening.template.base_url, json=forward).text == "OK"
    [stored] = listening.store.latest()
    assert (stored.source, stored.reply_id, stored.message_id) == ("webhook", "R-1", "M-1")


@pytest.mark.parametrize(
    "path", ["/replies/WRONG-secret-0123456789abcdef", "/replies/", "/replies", "/", "/favicon.ico"]
)
def test_a_wrong_or_missing_secret_looks_like_any_unknown_path(
    listening: Running, http: httpx.Client, path: str
) -> None:
    query = listening.url().partition("?")[2]
    root = listening.info.address
    refused = http.get(f"{root}{path}?{query}")
    posted = http.post(f"{root}{path}", content=query, headers=FORM)
    nowhere = http.get(f"{root}/no/such/thing")
    for response in (refused, posted):
        assert (response.status_code, response.text) == (nowhere.status_code, nowhere.text)
        assert response.status_code == 404
    assert listening.store.count() == 0


def test_the_secret_must_match_exactly(listening: Running, http: httpx.Client) -> None:
    url = listening.url()
    secret = listening.template.secret
    for wrong in (
        url.replace(secret, secret[:-1]),
        url.replace(secret, secret + "x"),
        url.replace(secret, secret.upper()),
    ):
        assert http.get(wrong).status_code == 404
    assert listening.store.count() == 0


def test_a_missing_field_gets_a_400_that_names_it(listening: Running, http: httpx.Client) -> None:
    url = listening.url().replace("&msg=Yes%20please", "")
    response = http.get(url)
    assert (response.status_code, response.text.strip()) == (
        400,
        "missing parameter 'msg' (#MSG#)",
    )


def test_an_unparsable_time_gets_a_400_that_says_so(listening: Running, http: httpx.Client) -> None:
    response = http.get(listening.url(RCVDDTS="2024-01-05T14:04:07"))
    assert response.status_code == 400
    assert "parameter 'rcvd' (#RCVDDTS#): not a dd-MMM-yyyy HH:mm:ss time" in response.text


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
def test_other_methods_get_a_405_naming_the_allowed_ones(
    listening: Running, http: httpx.Client, method: str
) -> None:
    response = http.request(method, listening.url())
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, POST"


def test_a_post_without_a_content_type_gets_a_415(listening: Running, http: httpx.Client) -> None:
    response = http.post(listening.template.base_url, content=b"from=1")
    assert response.status_code == 415


def test_a_failed_store_answers_503_and_the_retry_is_stored_once(
    tmp_path: Path, http: httpx.Client
) -> None:
    path = tmp_path / "profile.sqlite3"
    with running_listener(path, busy_timeout=0.05) as listening:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another writer holds the file
        failed = http.get(listening.url())
        blocker.execute("ROLLBACK")
        blocker.close()
        retried = http.get(listening.url())
        assert failed.status_code == 503
        assert failed.text == "The reply was not stored (the store is busy); try again.\n"
        assert str(tmp_path) not in failed.text  # where the store is, is nobody's business
        assert failed.headers["Retry-After"] == "1"
        assert (retried.status_code, retried.text) == (200, "OK")
        assert listening.store.count() == 1


def test_replies_reach_subscribers_in_batches(listening: Running, http: httpx.Client) -> None:
    batches: list[ReplyBatch] = []
    listening.listener.subscribe(batches.append)
    http.get(listening.url(MSG="first"))
    http.get(listening.url(MSG="first"))  # a retry: nothing new to show
    http.get(listening.url(MSG="second"))
    assert [[r.text for r in b.new] for b in batches] == [["first"], ["second"]]


def test_a_taken_port_is_reported_with_a_free_one_offered(tmp_path: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        with (
            pytest.raises(PortInUseError) as caught,
            running_listener(tmp_path / "p.sqlite3", port=taken),
        ):
            pass
    error = caught.value
    assert error.port == taken
    assert error.suggestion is not None
    assert error.suggestion != taken
    assert f"Port {taken} on 127.0.0.1 is already in use; port {error.suggestion} is free." == str(
        error
    )
    with running_listener(tmp_path / "p.sqlite3", port=error.suggestion) as running:
        assert running.info.port == error.suggestion


def test_loopback_is_the_default_and_needs_no_warning(listening: Running) -> None:
    assert listening.info.host == "127.0.0.1"
    assert listening.info.warning is None


def test_binding_beyond_loopback_comes_with_a_warning(tmp_path: Path) -> None:
    everywhere = "0.0.0.0"  # noqa: S104 - the point of the test
    with running_listener(
        tmp_path / "p.sqlite3", host=everywhere, public_host="desk.example"
    ) as running:
        assert running.info.warning is not None
        assert "reachable from other machines" in running.info.warning
        assert running.template.base_url.startswith(f"http://desk.example:{running.info.port}/")


def test_behind_a_reverse_proxy_the_replypath_gives_the_public_address(tmp_path: Path) -> None:
    with running_listener(
        tmp_path / "p.sqlite3", public_url="https://replies.office.example"
    ) as running:
        assert running.template.base_url.startswith("https://replies.office.example/replies/")
        assert running.template.render().count("#") == 10  # the five placeholders still there
        local = running.template.base_url.replace(
            "https://replies.office.example", f"http://127.0.0.1:{running.info.port}"
        )
        with httpx.Client() as http:  # what the proxy forwards, the listener answers
            assert http.get(f"{local}?{running.url().split('?', 1)[1]}").text == "OK"


def test_the_secret_and_port_stay_the_same_across_restarts(tmp_path: Path) -> None:
    with running_listener(tmp_path / "p.sqlite3", port=0) as first:
        free = first.info.port
    with running_listener(tmp_path / "p.sqlite3", port=free) as second:
        template = second.template.render()
    with running_listener(tmp_path / "p.sqlite3", port=None) as third:
        assert third.template.render() == template
        with httpx.Client() as http:
            assert http.get(third.url()).text == "OK"


def test_stopping_closes_the_port(tmp_path: Path) -> None:
    with running_listener(tmp_path / "p.sqlite3") as running:
        address = running.info.address
    with pytest.raises(httpx.ConnectError), httpx.Client() as http:
        http.get(address)


def test_a_json_body_that_is_a_webhook_form_is_refused(
    listening: Running, http: httpx.Client
) -> None:
    body = listening.url().partition("?")[2]
    response = http.post(
        listening.template.base_url, content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert "not JSON" in response.text
