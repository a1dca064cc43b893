"""Retry rules: what may be repeated, and how long to wait first."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

import httpx
import pytest

from gwdesk.gateway.errors import (
    AuthenticationError,
    GatewayError,
    NotFoundError,
    ProtocolError,
    RateLimitedError,
    TransientError,
    ValidationError,
)
from gwdesk.gateway.http import RawResponse
from gwdesk.gateway.responses import error_for, retry_after
from gwdesk.gateway.retry import (
    Deadline,
    Retrier,
    RetryPolicy,
    doubling,
    retryable_idempotent,
    retryable_send,
)


class Recorder:
    """A sleep that only records: the waits are what these tests check."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def answer(status: int, body: bytes = b"", **headers: str) -> GatewayError:
    return error_for(RawResponse(status, httpx.Headers(headers), body))


def test_full_jitter_stays_under_the_exponential_cap() -> None:
    retrier = Retrier(RetryPolicy(base_delay=0.5, max_delay=4.0), rng=random.Random(3))
    for attempt in range(1, 10):
        cap = min(4.0, 0.5 * 2 ** (attempt - 1))
        waits = [retrier.backoff(attempt) for _ in range(200)]
        assert all(0 <= w <= cap for w in waits)
        assert max(waits) > cap * 0.8  # jitter spans the range, not a fixed delay


def test_a_503_or_connect_failure_may_be_resent_but_a_lost_answer_may_not() -> None:
    assert retryable_send(answer(503))
    assert retryable_send(answer(429, **{"Retry-After": "1"}))
    assert retryable_send(TransientError("refused"))
    assert not retryable_send(answer(500))
    assert not retryable_send(
        answer(504, b"<html>gateway time-out</html>", **{"content-type": "text/html"})
    )
    assert not retryable_send(TransientError("read timed out", maybe_processed=True))
    assert not retryable_send(answer(400))


def test_idempotent_calls_repeat_passing_failures_only() -> None:
    assert retryable_idempotent(answer(500))
    assert retryable_idempotent(ProtocolError("garbled"))
    assert not retryable_idempotent(AuthenticationError("no"))
    assert not retryable_idempotent(NotFoundError("no"))
    assert not retryable_idempotent(ValidationError("no"))


async def test_idempotent_calls_are_tried_up_to_the_limit_then_raise() -> None:
    sleep = Recorder()
    retrier = Retrier(RetryPolicy(attempts=3), rng=random.Random(1), sleep=sleep)
    calls = 0

    async def failing() -> None:
        nonlocal calls
        calls += 1
        raise TransientError("down")

    with pytest.raises(TransientError):
        await retrier.idempotent(failing, "test")
    assert calls == 3
    assert len(sleep.waits) == 2


async def test_a_call_that_recovers_returns_its_value() -> None:
    outcomes: list[object] = [answer(503), answer(502), "ok"]
    retrier = Retrier(rng=random.Random(1), sleep=Recorder())

    async def flaky() -> object:
        item = outcomes.pop(0)
        if isinstance(item, GatewayError):
            raise item
        return item

    assert await retrier.idempotent(flaky, "test") == "ok"


async def test_retry_after_is_honoured_when_short_and_reported_when_long() -> None:
    sleep = Recorder()
    retrier = Retrier(
        RetryPolicy(base_delay=0.1, max_retry_after=5), rng=random.Random(1), sleep=sleep
    )
    assert 2 <= retrier.delay_for(answer(429, **{"Retry-After": "2"}), 1) <= 2.1  # type: ignore[operator]
    assert retrier.delay_for(answer(429, **{"Retry-After": "60"}), 1) is None


def test_retry_after_reads_seconds_and_http_dates() -> None:
    from datetime import UTC, datetime

    now = datetime(2025, 1, 1, 0, 0, 0, tzinfo=UTC)
    assert retry_after("7") == 7
    assert retry_after("Wed, 01 Jan 2025 00:00:30 GMT", now) == 30
    assert retry_after("soon") is None
    assert retry_after(None) is None


def test_status_codes_map_to_operator_errors() -> None:
    envelope = b'{"Data":null,"Status":"Failed","StatusCode":400,"Errors":[{"Field":"Recipients","Message":"bad number"}]}'
    invalid = answer(400, envelope)
    assert isinstance(invalid, ValidationError)
    assert invalid.field == "Recipients"
    assert invalid.message == "bad number"
    assert isinstance(answer(401), AuthenticationError)
    assert isinstance(answer(404), NotFoundError)
    assert isinstance(answer(413), ValidationError)
    assert isinstance(answer(415), ProtocolError)
    limited = answer(429, **{"Retry-After": "3"})
    assert isinstance(limited, RateLimitedError)
    assert limited.retry_after == 3
    assert isinstance(answer(503), TransientError)
    page = answer(502, b"<html><body>Bad Gateway</body></html>", **{"content-type": "text/html"})
    assert isinstance(page, ProtocolError)
    assert "web page" in page.message


def test_a_503_that_names_a_wait_is_waited_out() -> None:
    retrier = Retrier(RetryPolicy(base_delay=0.1), rng=random.Random(1))
    wait = retrier.delay_for(answer(503, **{"Retry-After": "3"}), 1)
    assert wait is not None
    assert 3 <= wait <= 3.1


# ---- the one loop of tries (`Retrier.run`) ------------------------------------------------


class Clock:
    """A clock that moves only when the loop sleeps: deadlines without real time."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def failing_with(
    *errors: GatewayError, then: object = "ok"
) -> tuple[list[int], Callable[[], Awaitable[object]]]:
    """A call that raises `errors` in turn, then answers `then`; and its call count."""
    calls = [0]
    left = list(errors)

    async def call() -> object:
        calls[0] += 1
        if left:
            raise left.pop(0)
        return then

    return calls, call


async def test_a_loop_makes_no_more_tries_than_its_attempts() -> None:
    clock = Clock()
    retrier = Retrier(rng=random.Random(1), sleep=clock.sleep)
    calls, call = failing_with(*[TransientError("down")] * 10)
    with pytest.raises(TransientError):
        await retrier.run(call, what="test", attempts=5)
    assert calls[0] == 5
    assert len(clock.waits) == 4


async def test_a_failure_the_caller_does_not_allow_is_raised_at_once() -> None:
    clock = Clock()
    retrier = Retrier(rng=random.Random(1), sleep=clock.sleep)
    calls, call = failing_with(TransientError("read timed out", maybe_processed=True))
    with pytest.raises(TransientError):
        await retrier.run(call, what="test", retryable=retryable_send, attempts=4)
    assert calls[0] == 1
    assert clock.waits == []


async def test_the_loop_backs_off_with_jitter_under_the_exponential_cap() -> None:
    clock = Clock()
    policy = RetryPolicy(base_delay=0.5, max_delay=2.0)
    retrier = Retrier(policy, rng=random.Random(7), sleep=clock.sleep)
    _calls, call = failing_with(*[TransientError("down")] * 5)
    assert await retrier.run(call, what="test", attempts=6) == "ok"
    caps = [0.5, 1.0, 2.0, 2.0, 2.0]
    assert len(clock.waits) == len(caps)
    assert all(0 <= wait <= cap for wait, cap in zip(clock.waits, caps, strict=True))
    assert len(set(clock.waits)) == len(caps)  # jittered, not fixed


async def test_the_loop_waits_out_the_retry_after_the_gateway_names() -> None:
    clock = Clock()
    retrier = Retrier(RetryPolicy(base_delay=0.1), rng=random.Random(1), sleep=clock.sleep)
    _calls, call = failing_with(answer(429, **{"Retry-After": "3"}))
    assert await retrier.run(call, what="test", attempts=2) == "ok"
    [wait] = clock.waits
    assert 3 <= wait <= 3.1


async def test_a_retry_after_longer_than_the_policy_allows_ends_the_loop() -> None:
    clock = Clock()
    retrier = Retrier(RetryPolicy(max_retry_after=5), rng=random.Random(1), sleep=clock.sleep)
    calls, call = failing_with(answer(429, **{"Retry-After": "60"}))
    with pytest.raises(RateLimitedError):
        await retrier.run(call, what="test", attempts=4)
    assert calls[0] == 1
    assert clock.waits == []


async def test_no_try_starts_once_the_deadline_has_passed() -> None:
    clock = Clock()
    retrier = Retrier(rng=random.Random(1), sleep=clock.sleep)
    calls, call = failing_with(*[TransientError("down")] * 100)
    deadline = Deadline.after(1.0, clock)
    with pytest.raises(TransientError):
        await retrier.run(call, what="test", deadline=deadline, waits=lambda _n: 0.3)
    assert clock.waits == [0.3, 0.3, 0.3, pytest.approx(0.1)]  # the last wait cut to the deadline
    assert calls[0] == 5
    assert clock.now == pytest.approx(101.0)


async def test_a_retry_after_that_ends_past_the_deadline_ends_the_loop() -> None:
    clock = Clock()
    retrier = Retrier(rng=random.Random(1), sleep=clock.sleep)
    calls, call = failing_with(answer(503, **{"Retry-After": "5"}))
    with pytest.raises(TransientError):
        await retrier.run(call, what="test", deadline=Deadline.after(2.0, clock))
    assert calls[0] == 1
    assert clock.waits == []


async def test_a_failure_that_outlives_the_deadline_is_tried_again_past_it() -> None:
    clock = Clock()
    retrier = Retrier(rng=random.Random(1), sleep=clock.sleep)
    unanswered = [TransientError("no answer")] * 4
    calls, call = failing_with(*unanswered, then="answered")
    answer_ = await retrier.run(
        call,
        what="test",
        deadline=Deadline.after(0.5, clock),
        waits=lambda _n: 0.4,
        outlives_deadline=lambda error: isinstance(error, TransientError),
    )
    assert answer_ == "answered"
    assert calls[0] == 5
    assert clock.waits == [0.4, pytest.approx(0.1), 0.4, 0.4]  # full waits past the deadline


async def test_a_failure_the_caller_names_is_tried_again_without_a_wait() -> None:
    clock = Clock()
    retrier = Retrier(rng=random.Random(1), sleep=clock.sleep)
    proven = ValidationError("proven not acted on")
    calls, call = failing_with(proven, proven)
    assert (
        await retrier.run(
            call,
            what="test",
            retryable=retryable_send,
            attempts=3,
            at_once=lambda error: error is proven,
        )
        == "ok"
    )
    assert calls[0] == 3
    assert clock.waits == []


async def test_a_loop_with_neither_attempts_nor_a_deadline_is_refused() -> None:
    _calls, call = failing_with()
    with pytest.raises(ValueError, match="needs a limit"):
        await Retrier().run(call, what="test")


def test_doubling_waits_double_up_to_their_cap() -> None:
    waits = doubling(0.05, 0.3)
    assert [waits(n) for n in range(1, 6)] == [0.05, 0.1, 0.2, 0.3, 0.3]


async def test_a_send_is_tried_again_only_after_failures_that_prove_it_was_not_acted_on() -> None:
    clock = Clock()
    retrier = Retrier(RetryPolicy(send_attempts=3), rng=random.Random(1), sleep=clock.sleep)
    calls, call = failing_with(answer(503), TransientError("refused"), then="lodged")
    assert await retrier.send(call, "send") == "lodged"
    assert calls[0] == 3
    calls, call = failing_with(answer(500))
    with pytest.raises(GatewayError):
        await retrier.send(call, "send")
    assert calls[0] == 1
