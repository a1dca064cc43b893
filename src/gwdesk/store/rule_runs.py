"""What the keyword rules did: each reply acted on once, the automatic replies counted,
the forwards queued until delivered.

- **Exactly once**: a runner (the receiver, or a console when none serves the profile)
  `claim`s a reply before it acts on it: one row per reply, so of every runner that
  saw it exactly one acts. The claim and the reply's forward are one transaction.
- **Automatic replies are counted in the claim**: whether this reply may be answered
  is decided in the claim's transaction from the replies sent to that number in the
  last 24 hours (by any rule), one claim at a time (a team's server takes a lock for
  it), so two runners cannot both send the last one allowed.
- **Forwards** wait in `rule_forwards` until an endpoint took them: `take_forward`
  leases one to one runner at a time, a failure is retried with back-off and, after
  the last try, kept as failed with its error, to be seen.

On a team's server the claim's runner and time are the server's (`pg_reply_rules.py`),
and a login changes only its own runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database, Session
from gwdesk.store.team import now_us

DAY_US: Final = 24 * 3600 * 1_000_000
RULES_LOCK: Final = 0x6777_7275_6C65  # "gwrule": claims are decided one at a time
WAITING: Final = "waiting"
DELIVERED: Final = "delivered"
FAILED: Final = "failed"
_RUN_COLUMNS: Final = "reply_id, number, rule, runner, at_us, replied, outcome"
_FORWARD_COLUMNS: Final = (
    "id, reply_id, rule, url, body, state, attempts, next_us, last_error, changed_us"
)


@dataclass(frozen=True, slots=True)
class Claim:
    """This runner acts on the reply: whether it may answer it automatically."""

    reply_id: int
    may_reply: bool
    replied_today: int
    """Automatic replies that number had in the last 24 hours, before this one."""
    forward_id: int | None


@dataclass(frozen=True, slots=True)
class Wanted:
    """A reply a rule would act on: what its claim asks for."""

    reply_id: int
    number: str
    rule: str
    reply_per_day: int | None = None
    forward: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class RuleRun:
    reply_id: int
    number: str
    rule: str
    runner: str
    at_us: int
    replied: bool
    outcome: str
    """What was done, or why not (plain text)."""


@dataclass(frozen=True, slots=True)
class Forward:
    id: int
    reply_id: int
    rule: str
    url: str
    body: str
    state: str
    attempts: int
    next_us: int
    last_error: str
    changed_us: int


@store_methods
class RuleRuns:
    """The runs and forwards of a profile's file or a team's server; safe from any thread.
    `runner`: who acts (on a server the login's own name is kept instead)."""

    def __init__(self, database: Database, *, runner: str = "") -> None:
        self.database = database
        self.runner = runner[:200]

    def claim(
        self,
        reply_id: int,
        number: str,
        rule: str,
        *,
        reply_per_day: int | None = None,
        forward: tuple[str, str] | None = None,
        now: int | None = None,
    ) -> Claim | None:
        """Act on reply `reply_id` (from `number`) by `rule`, or None when another runner
        already does. `reply_per_day`: the rule answers, at most so many a day per number;
        `forward`: (url, JSON body) to queue."""
        wanted = Wanted(reply_id, number, rule, reply_per_day, forward)
        return self.claim_all([wanted], now=now)[0]

    def claim_all(self, wanted: Sequence[Wanted], *, now: int | None = None) -> list[Claim | None]:
        """`claim` for each of a group's replies, in one transaction and in order (a
        number's second reply in the group counts the first's automatic reply)."""
        at = now_us() if now is None else now
        claims: list[Claim | None] = []
        with self.database.transaction() as session:
            if self.database.kind == "postgresql":
                session.execute("SELECT pg_advisory_xact_lock(?)", (RULES_LOCK,))
            for one in wanted:
                claims.append(self._claim_in(session, one, at))
        return claims

    def _claim_in(self, session: Session, one: Wanted, at: int) -> Claim | None:
        before = (
            0
            if one.reply_per_day is None
            else self._replied_since(session, one.number, at - DAY_US)
        )
        may_reply = one.reply_per_day is not None and before < one.reply_per_day
        inserted = session.execute(
            "INSERT INTO rule_runs(reply_id, number, rule, runner, at_us, replied, outcome) "
            "VALUES (?, ?, ?, ?, ?, ?, '') ON CONFLICT (reply_id) DO NOTHING "
            "RETURNING reply_id",
            (one.reply_id, one.number, one.rule[:60], self.runner, at, 1 if may_reply else 0),
        ).fetchone()
        if inserted is None:
            return None
        forward_id = None
        if one.forward is not None:
            forward_id = int(
                session.execute(
                    "INSERT INTO rule_forwards(reply_id, rule, url, body, state, attempts, "
                    "next_us, last_error, changed_us) VALUES (?, ?, ?, ?, ?, 0, ?, '', ?) "
                    "RETURNING id",
                    (one.reply_id, one.rule[:60], one.forward[0], one.forward[1], WAITING, at, at),
                ).fetchone()[0]
            )
        return Claim(one.reply_id, may_reply, before, forward_id)

    @staticmethod
    def _replied_since(session: Session, number: str, since_us: int) -> int:
        row = session.execute(
            "SELECT COUNT(*) FROM rule_runs WHERE number = ? AND replied = 1 AND at_us > ?",
            (number, since_us),
        ).fetchone()
        return int(row[0])

    def finish(self, reply_id: int, outcome: str, *, replied: bool | None = None) -> None:
        """Say what the run did (plain text, cut to 500); `replied=False` when the
        automatic reply it was allowed did not go (it then does not count)."""
        self.finish_all([(reply_id, outcome, replied)])

    def finish_all(self, told: Sequence[tuple[int, str, bool | None]]) -> None:
        """`finish` for several runs, in one transaction."""
        with self.database.transaction() as session:
            for reply_id, outcome, replied in told:
                session.execute(
                    "UPDATE rule_runs SET outcome = ?, "
                    "replied = CASE WHEN ? = 1 THEN 0 ELSE replied END WHERE reply_id = ?",
                    (outcome[:500], 1 if replied is False else 0, reply_id),
                )

    def run_of(self, reply_id: int) -> RuleRun | None:
        with self.database.session() as session:
            row = session.execute(
                f"SELECT {_RUN_COLUMNS} FROM rule_runs WHERE reply_id = ?",  # noqa: S608
                (reply_id,),
            ).fetchone()
        return None if row is None else _run(row)

    def recent(self, limit: int = 100) -> list[RuleRun]:
        """The latest runs first."""
        with self.database.session() as session:
            rows = session.execute(
                f"SELECT {_RUN_COLUMNS} FROM rule_runs ORDER BY reply_id DESC LIMIT ?",  # noqa: S608
                (limit,),
            ).fetchall()
        return [_run(row) for row in rows]

    # ---- forwards ----------------------------------------------------------------------

    def forwards(self, *, state: str | None = None, limit: int = 100) -> list[Forward]:
        """The latest forwards first (`state`: only those waiting, delivered or failed)."""
        where, params = ("WHERE state = ? ", (state, limit)) if state else ("", (limit,))
        with self.database.session() as session:
            rows = session.execute(
                f"SELECT {_FORWARD_COLUMNS} FROM rule_forwards {where}"  # noqa: S608
                "ORDER BY id DESC LIMIT ?",
                params,
            ).fetchall()
        return [_forward(row) for row in rows]

    def next_forward_us(self) -> int | None:
        """When the next waiting forward falls due (None: none waits)."""
        with self.database.session() as session:
            row = session.execute(
                "SELECT MIN(next_us) FROM rule_forwards WHERE state = ?", (WAITING,)
            ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def take_forward(self, lease_us: int, now: int | None = None) -> Forward | None:
        """The next due forward, leased to this runner for `lease_us` (no other runner
        takes it meanwhile); its attempt counted. None: nothing is due."""
        at = now_us() if now is None else now
        with self.database.transaction() as session:
            for row in session.execute(
                f"SELECT {_FORWARD_COLUMNS} FROM rule_forwards "  # noqa: S608
                "WHERE state = ? AND next_us <= ? ORDER BY next_us, id LIMIT 5",
                (WAITING, at),
            ).fetchall():
                found = _forward(row)
                taken = session.execute(
                    "UPDATE rule_forwards SET next_us = ?, attempts = attempts + 1 "
                    "WHERE id = ? AND state = ? AND next_us = ?",
                    (at + lease_us, found.id, WAITING, found.next_us),
                ).rowcount
                if taken == 1:
                    return Forward(
                        found.id, found.reply_id, found.rule, found.url, found.body,
                        WAITING, found.attempts + 1, at + lease_us, found.last_error,
                        found.changed_us,
                    )  # fmt: skip
        return None

    def forward_done(
        self, forward_id: int, *, error: str = "", retry_at: int | None = None
    ) -> None:
        """An attempt's end: delivered (no `error`), to be tried again at `retry_at`, or,
        with an error and no retry, failed for good."""
        at = now_us()
        state = DELIVERED if not error else (WAITING if retry_at is not None else FAILED)
        with self.database.transaction() as session:
            session.execute(
                "UPDATE rule_forwards SET state = ?, next_us = ?, last_error = ?, changed_us = ? "
                "WHERE id = ? AND state = ?",
                (state, retry_at if retry_at is not None else at, error[:500], at, forward_id,
                 WAITING),
            )  # fmt: skip


def _run(row: tuple[object, ...]) -> RuleRun:
    reply_id, number, rule, runner, at_us, replied, outcome = row
    return RuleRun(
        int(str(reply_id)), str(number), str(rule), str(runner), int(str(at_us)),
        bool(replied), str(outcome),
    )  # fmt: skip


def _forward(row: tuple[object, ...]) -> Forward:
    values = tuple(row)
    return Forward(
        int(str(values[0])), int(str(values[1])), str(values[2]), str(values[3]),
        str(values[4]), str(values[5]), int(str(values[6])), int(str(values[7])),
        str(values[8]), int(str(values[9])),
    )  # fmt: skip
