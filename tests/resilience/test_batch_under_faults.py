"""The Batch tab sends 2,000 recipients through a misbehaving gateway: nothing lost, nothing twice.

The sandbox answers about a third of all requests (token, send, status, balance)
with 503s, 429s, proxies' HTML pages, connections dropped before or after the work,
answers held for 2 s, or JSON cut in half, and its tokens live 2 s. Midway it has an
outage: every send is refused (503, or an HTML 503 page) until one request has
failed for good, so the operator surely meets a failure and presses "Send remaining",
as one would. The window is the real one (offscreen), driven as an operator drives it.

Each test runs the whole scenario (about 20 s) and checks one behaviour of it; a last one
shows that the plain-words check refuses what it must.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import Final

import httpx
import pytest
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState
from gwdesk.ui.batch.results import OUTCOME_COLUMN
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.main_window import MainWindow
from tests.conftest import SandboxFactory
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.plain_text_support import tooltip_shows

RECIPIENTS: Final = 2000
REQUESTS: Final = RECIPIENTS // 100
SEED: Final = 20240920
"""`random.Random(SEED)` gives every fault kind of `MIXED` within the plan's first nine
requests (each request draws twice: its latency, then its roll), and the plan restarts
from SEED after the outage: every run meets each kind. Which request meets which
depends on timing, so runs differ in the details."""
KINDS: Final = ("503", "429", "html", "drop_before", "drop_after", "slow", "malformed")
#: Every endpoint: a little latency (so the lanes really overlap), then about one request
#: in three faulted. `slow` holds an answer 2 s after the work is done (below the client's
#: 30 s read time-out: a slow answer, not a lost one). A token answer is held 1 s only: held
#: as long as the token lives, it would hand over a token already dead, which no client can
#: use (the token endpoint's own rule overrides `*` for `slow` alone).
MIXED: Final = (
    "*:latency=0.05-0.25,503=0.06,429=0.05@1,html=0.05,drop_before=0.04,"
    "drop_after=0.05,slow=0.05@2,malformed=0.06;token:slow=0.05@1"
)
#: The same, but no send gets through: a JSON 503 or a proxy's HTML 503 page each time.
OUTAGE: Final = (
    f"{MIXED};send:503=0.5,html=0.5@503,429=0,drop_before=0,drop_after=0,slow=0,malformed=0"
)
HEARTBEAT_MS: Final = 20
#: The longest the GUI thread may go without running the heartbeat. Generous on purpose
#: (a liveness check, not a benchmark): the machine is 2 shared cores, and painting,
#: SQLite on worker threads and the sandbox's own thread all compete. A GUI that waited
#: on the network even once would stall far longer: a slow send or status answer is held
#: 2 s, a lost answer is looked up by status for 5 s, a refused send backs off for seconds.
MAX_GAP: Final = 1.0
#: Sends the operator may need after the first: the outage's failures, plus the rare
#: request that meets four refusals in a row under the mixed faults.
MAX_SEND_REMAINING: Final = 4

TRACEBACK: Final = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]*\", line \d+")
CLASS_NAME: Final = re.compile(
    r"\b[A-Za-z][A-Za-z0-9]*(?:Error|Exception|Timeout|Interrupt)\b"
    r"|<class |object at 0x|\b(?:httpx|aiohttp|asyncio|sqlite3|pydantic|json|gwdesk)\.\w"
)
RAW_JSON: Final = re.compile(r"[{}]|\"\w+\"\s*:|\[\s*\"")
RAW_HTML: Final = re.compile(r"<\s*/?\s*[A-Za-z!][^>]*>|&[a-z]+;|nginx|DOCTYPE", re.IGNORECASE)
SECRET: Final = re.compile(r"Bearer |access_token|demo:demo|ZGVtbzpkZW1v|[A-Za-z0-9_-]{43,}")
"""Auth headers, the demo account's credentials (plain or Basic-encoded) and token-shaped
strings (the sandbox's tokens are `secrets.token_urlsafe(32)`: 43 characters)."""


def numbers(count: int) -> list[str]:
    return [f"0412 {i // 1000:03d} {i % 1000:03d}" for i in range(count)]


def set_faults(sandbox: SandboxThread, spec: str) -> None:
    response = httpx.put(f"{sandbox.rest_url}/sandbox/faults", json={"spec": spec, "seed": SEED})
    response.raise_for_status()


def injected(sandbox: SandboxThread) -> set[str]:
    """Fault kinds the current plan has injected so far (a new plan starts from none)."""
    response = httpx.get(f"{sandbox.rest_url}/sandbox/faults")
    response.raise_for_status()
    counts: dict[str, int] = response.json()["injected"]
    return {kind for kind, count in counts.items() if count}


def unclear(text: str) -> list[str]:
    """What makes an operator-facing text unfit: the reasons, none when it is fine."""
    checks = (
        ("a traceback", TRACEBACK),
        ("an exception or module name", CLASS_NAME),
        ("raw JSON", RAW_JSON),
        ("raw HTML", RAW_HTML),
        ("a credential or token", SECRET),
    )
    reasons = [what for what, pattern in checks if pattern.search(text)]
    if len(text) > 600:
        reasons.append("a wall of text")
    if any(ord(c) < 32 for c in text):
        reasons.append("control characters")
    return reasons


@dataclass
class Observed:
    """What the operator saw while the batch ran, and what the heartbeat measured."""

    tab: BatchTab
    window: MainWindow
    sandbox: SandboxThread
    numbers: list[str]
    ticks: list[float] = field(default_factory=list)
    lodged_values: list[int] = field(default_factory=list)
    created_values: list[int] = field(default_factory=list)
    texts: set[str] = field(default_factory=set)
    """Every text shown: labels sampled at each heartbeat, each row's outcome as it
    changed, and each status-bar activity line."""
    first_outcome: str = ""
    """The outcome line after the first send, before "Send remaining"."""
    sends: int = 1
    faults: set[str] = field(default_factory=set)
    """Fault kinds the sandbox injected under `MIXED` (before and after the outage)."""

    def longest_gap(self) -> float:
        return max(b - a for a, b in zip(self.ticks, self.ticks[1:], strict=False))


def sample_labels(seen: Observed) -> None:
    tab, status = seen.tab, seen.window.status
    labels = [
        tab.totals.outcome,
        tab.results.lodged_label,
        tab.results.follow_label,
        status.connection_label,
        status.balance_label,
        status.token_label,
    ]
    if tab.totals.error.isVisible():
        labels.append(tab.totals.error)
    for label in labels:
        if label.text():
            seen.texts.add(label.text())
        if label.toolTip():
            seen.texts.add(tooltip_shows(label.toolTip()))  # what the tooltip shows
    if status.currentMessage():
        seen.texts.add(status.currentMessage())


def watch(seen: Observed) -> QTimer:
    """Start the heartbeat and the observers; the heartbeat samples what is shown."""
    tab = seen.tab
    model = tab.results.model
    tab.results.lodged_bar.valueChanged.connect(seen.lodged_values.append)
    tab.results.created_bar.valueChanged.connect(seen.created_values.append)

    def rows_changed(
        top: QModelIndex | QPersistentModelIndex,
        bottom: QModelIndex | QPersistentModelIndex,
        _roles: object = None,
    ) -> None:
        for row in range(top.row(), bottom.row() + 1):
            shown = model.data(model.index(row, OUTCOME_COLUMN))
            if shown:
                seen.texts.add(str(shown))

    model.dataChanged.connect(rows_changed)
    tab.session.activity.connect(lambda what, _ok: seen.texts.add(what))

    def beat() -> None:
        seen.ticks.append(time.monotonic())
        sample_labels(seen)

    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(beat)
    seen.ticks.append(time.monotonic())
    heartbeat.start()
    return heartbeat


async def sent(tab: BatchTab, within: float = 90.0) -> None:
    await wait_until(lambda: tab.run is not None and not tab.sending, within, "send finished")


async def confirm_and_send(tab: BatchTab) -> None:
    """Press Send batch and accept the confirmation a batch this big asks for."""
    tab.totals.send_button.click()
    await wait_until(lambda: tab.confirm_box is not None and tab.confirm_box.isVisible())
    box = tab.confirm_box
    assert box is not None
    [accept] = [b for b in box.buttons() if box.buttonRole(b) is QMessageBox.ButtonRole.AcceptRole]
    accept.click()
    await wait_until(lambda: tab.sending, 5, "sending started")


async def batch_under_faults(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> Observed:
    """The whole scenario, as an operator lives it; what was seen comes back."""
    sandbox = sandbox_factory(faults=MIXED, token_ttl=2, seed=SEED)
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [BatchTab])
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    await ui.connect(sandbox)
    [tab] = window.tabs
    assert isinstance(tab, BatchTab)
    tab.compose.editor.set_text("Your appointment is tomorrow at 9:30. Reply YES to confirm.")
    tab.recipients.paste.setPlainText("\n".join(numbers(RECIPIENTS)))
    tab.recipients.check_paste()
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy, 30)
    assert tab.recipients.result is not None
    seen = Observed(tab, window, sandbox, list(tab.recipients.result.numbers))
    assert len(seen.numbers) == RECIPIENTS

    heartbeat = watch(seen)
    try:
        await confirm_and_send(tab)
        await wait_until(lambda: tab.run is not None, 30, "the batch recorded")
        run = tab.run
        assert run is not None
        await wait_until(lambda: run.count(EntryState.LODGED) >= 1, 60, "a request lodged")
        seen.faults |= await asyncio.to_thread(injected, sandbox)
        await asyncio.to_thread(set_faults, sandbox, OUTAGE)
        await wait_until(lambda: run.count(EntryState.FAILED) >= 1, 60, "a request failed")
        await asyncio.to_thread(set_faults, sandbox, MIXED)
        await sent(tab)
        seen.first_outcome = tab.totals.outcome.text()
        seen.texts.add(seen.first_outcome)
        while run.remaining() and seen.sends <= MAX_SEND_REMAINING:
            tab.totals.remaining_button.click()
            seen.sends += 1
            await wait_until(lambda: tab.sending, 5, "sending the remaining started")
            await sent(tab)
            seen.texts.add(tab.totals.outcome.text())
        await wait_until(
            lambda: (
                run.created == run.recipients and not ui.tasks.running("batch-follow", owner=tab)
            ),
            60,
            "every message created",
        )
        sample_labels(seen)
    finally:
        heartbeat.stop()
        seen.ticks.append(time.monotonic())
    seen.faults |= await asyncio.to_thread(injected, sandbox)
    return seen


async def sandbox_messages(sandbox: SandboxThread, count: int) -> list[tuple[str, str]]:
    """(recipient, ExternalSystemId) of every message, once the gateway created `count`."""

    def total() -> int:
        return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])

    for _ in range(600):  # 30 s: the gateway creates a batch's messages in the background
        if await asyncio.to_thread(total) >= count:
            break
        await asyncio.sleep(0.05)
    rows = await asyncio.to_thread(
        sandbox.query, "SELECT to_number, external_system_id FROM messages"
    )
    return [(str(to), str(external_id)) for to, external_id in rows]


async def test_under_faults_every_recipient_is_lodged_exactly_once_and_the_outbox_agrees(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    seen = await batch_under_faults(ui, sandbox_factory, qtbot)
    run = seen.tab.run
    assert run is not None
    assert seen.faults >= set(KINDS)
    assert [e.state for e in run.entries] == [EntryState.LODGED] * REQUESTS
    assert seen.sends > 1  # the outage made "Send remaining" needed

    rows = await sandbox_messages(seen.sandbox, RECIPIENTS)
    per_recipient: dict[str, int] = {}
    for to, _external_id in rows:
        per_recipient[to] = per_recipient.get(to, 0) + 1
    assert sorted(per_recipient) == sorted(seen.numbers)
    assert {n for n, times in per_recipient.items() if times > 1} == set()
    batches = await asyncio.to_thread(seen.sandbox.query, "SELECT COUNT(*) FROM batches")
    assert batches[0][0] == REQUESTS  # each request lodged as one batch, none twice

    store = ui.session.store
    assert store is not None
    [batch] = await asyncio.to_thread(store.outbox.batches, open_only=False)
    assert batch.closed
    assert (batch.count(EntryState.LODGED), batch.entries) == (REQUESTS, REQUESTS)
    assert batch.recipients_in(EntryState.LODGED) == RECIPIENTS
    entries = await asyncio.to_thread(store.outbox.entries, batch.id)
    recorded = {e.external_system_id: sorted(e.recipients) for e in entries}
    lodged: dict[str, list[str]] = {}
    for to, external_id in rows:
        lodged.setdefault(external_id, []).append(to)
    assert recorded == {k: sorted(v) for k, v in lodged.items()}
    assert run.entries == entries  # the tab shows the outbox's own rows, as they stand


async def test_under_faults_every_failure_reaches_the_operator_in_plain_words(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    seen = await batch_under_faults(ui, sandbox_factory, qtbot)
    failures = {t for t in seen.texts if t.startswith(("failed:", "uncertain:"))}
    assert failures, "the outage left no failed request to show"
    assert "failed" in seen.first_outcome
    assert "Send remaining" in seen.first_outcome
    assert {t: unclear(t) for t in seen.texts if unclear(t)} == {}
    assert ui.reporter.errors == []


async def test_under_faults_the_window_keeps_responding_and_its_progress_only_advances(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot: QtBot
) -> None:
    seen = await batch_under_faults(ui, sandbox_factory, qtbot)
    elapsed = seen.ticks[-1] - seen.ticks[0]
    assert seen.longest_gap() < MAX_GAP, f"the GUI stalled {seen.longest_gap():.2f} s"
    assert len(seen.ticks) > 0.25 * elapsed / (HEARTBEAT_MS / 1000)
    bars = seen.tab.results
    assert seen.lodged_values == sorted(seen.lodged_values)
    assert seen.lodged_values[-1] == bars.lodged_bar.value() == bars.lodged_bar.maximum()
    assert bars.lodged_bar.maximum() == REQUESTS
    assert seen.created_values == sorted(seen.created_values)
    assert bars.created_bar.value() == bars.created_bar.maximum() == RECIPIENTS


@pytest.mark.parametrize(
    "shown",
    [
        "failed: <html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
        'failed: {"Status": "Failure", "StatusCode": 503, "Data": {"Message": "Unavailable"}}',
        'Traceback (most recent call last):\n  File "batch.py", line 3, in send',
        "uncertain: RemoteProtocolError: Server disconnected without sending a response.",
        "failed: httpx.ReadTimeout",
        "Bearer " + "Zx9_" * 11,
    ],
    ids=["HTML page", "JSON envelope", "traceback", "class name", "module path", "token"],
)
def test_the_plain_words_check_refuses_what_no_operator_should_read(shown: str) -> None:
    assert unclear(shown)
