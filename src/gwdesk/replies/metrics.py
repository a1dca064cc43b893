"""The receiver's figures in Prometheus's text format (`prometheus-client`), for `--metrics`.

Counted where they happen at no extra cost: the inbox's writer already keeps what it
stored (`InboxStats`), the endpoint what it refused by reason (`ListenerCounts`); a
collector reads both when the page is asked for. Only the store's time per group
commit is observed as it happens (one histogram observation per commit, not per
reply). Its own registry, never the library's global one: two receivers in one
process (a test's) keep their own figures.

Nothing here names the ReplyPath or its secret, the store's address or a customer:
labels come from fixed sets (a refusal's reason, an outcome).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from gwdesk.replies.endpoint import ListenerCounts
from gwdesk.replies.inbox import ReplyInbox

COMMIT_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Seconds: a file's commit is a millisecond or two, a server's a few, a stalled one more."""
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST


class _InboxCollector(Collector):
    """The inbox's and the endpoint's counts, read when the page is asked for."""

    def __init__(self, inbox: ReplyInbox, counts: ListenerCounts) -> None:
        self.inbox = inbox
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        stats = self.inbox.stats
        yield CounterMetricFamily(
            "gwdesk_replies_stored", "Replies stored (each once, however often sent).", stats.stored
        )
        yield CounterMetricFamily(
            "gwdesk_replies_duplicate",
            "Replies sent again that were stored already.",
            stats.duplicates,
        )
        yield CounterMetricFamily(
            "gwdesk_reply_commits", "Group commits of replies to the store.", stats.commits
        )
        refused = CounterMetricFamily(
            "gwdesk_reply_calls_refused", "Reply calls answered with an error, by reason.",
            labels=["reason"],
        )  # fmt: skip
        for reason, count in sorted(self.counts.refused.items()):
            refused.add_metric([reason], count)
        yield refused


class ReceiverMetrics:
    """The receiver's registry: the inbox's and endpoint's counts, commit times, back-fills
    and scheduled sends. `page()` is the text a scrape gets."""

    def __init__(self, inbox: ReplyInbox, counts: ListenerCounts) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_InboxCollector(inbox, counts))
        self.commit_seconds = Histogram(
            "gwdesk_reply_commit_seconds",
            "Seconds the store took to commit one group of replies.",
            buckets=COMMIT_BUCKETS,
            registry=self.registry,
        )
        self.backfills = Counter(
            "gwdesk_backfills", "Back-fills from the gateway, by outcome.", ["outcome"],
            registry=self.registry,
        )  # fmt: skip
        self.backfill_fetched = Counter(
            "gwdesk_backfill_replies_fetched", "Replies the back-fills found at the gateway.",
            registry=self.registry,
        )  # fmt: skip
        self.backfill_added = Counter(
            "gwdesk_backfill_replies_added", "Replies the back-fills stored (missing before).",
            registry=self.registry,
        )  # fmt: skip
        self.scheduled_sends = Counter(
            "gwdesk_scheduled_sends", "Scheduled sends the receiver sent, by outcome.", ["outcome"],
            registry=self.registry,
        )  # fmt: skip
        self.rule_runs = Counter(
            "gwdesk_rule_runs", "Replies the keyword rules acted on, by whether they answered.",
            ["answered"], registry=self.registry,
        )  # fmt: skip
        for answered in ("yes", "no"):
            self.rule_runs.labels(answered)
        for outcome in ("ok", "failed"):  # every series there from the start, at 0
            self.backfills.labels(outcome)
            self.scheduled_sends.labels(outcome)
        inbox.commit_timer = self.commit_seconds.observe

    def backfilled(self, fetched: int, added: int) -> None:
        self.backfills.labels("ok").inc()
        self.backfill_fetched.inc(fetched)
        self.backfill_added.inc(added)

    def backfill_failed(self) -> None:
        self.backfills.labels("failed").inc()

    def scheduled_sent(self, ok: bool) -> None:
        self.scheduled_sends.labels("ok" if ok else "failed").inc()

    def rule_ran(self, answered: bool) -> None:
        self.rule_runs.labels("yes" if answered else "no").inc()

    def page(self) -> bytes:
        return generate_latest(self.registry)
