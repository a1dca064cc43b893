"""Who may do what on a team's server: the office's two group roles and each person's login.

Every operator logs in as a role of their own, and so does the office's reply receiver;
none of them holds a right of its own. The rights belong to two group roles, named
after the database (`<database>_operators`, `<database>_receivers`), which the owner
of the database makes and grants (`gwdesk team init`), then makes each login a member
of (`gwdesk team add-operator`, `remove-operator`). What the groups may do is written
once here (`RIGHTS`): read every shared table, append to the send history and the
opt-out history, change the outbox, templates, contacts and their own presence, and
nothing of the record beyond that (the server's triggers and functions write the rest,
`pg_rules.py`). No group holds `pg_signal_backend`, so no login can end another's
session.

A login shared by several desks (how offices ran before) keeps working after the
upgrade as a member of both groups (`--grant ROLE`), named by what each desk declares,
until the office gives each operator a login of their own (docs/team.md).

These are the owner's operations: the owner needs `CREATEROLE` to make the group roles
and the logins.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Final

import psycopg
from psycopg import sql as pgsql

from gwdesk.store.database import StoreError
from gwdesk.store.postgres import PostgresDatabase, migrate
from gwdesk.store.team import now_iso

ROLE_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")
"""A login gwdesk makes: lower case, so it needs no quoting in pg_hba.conf or psql."""
MAX_DISPLAY: Final = 200

RECORD: Final = (
    "history", "replies", "optouts", "optout_changes", "settings", "audit", "operators",
    "gwdesk_schema", "gwdesk_groups", "conversations", "conversation_tags",
)  # fmt: skip
"""The office's record: the groups only read it, but for what `RIGHTS` lets them append."""
WORK: Final = (
    "outbox_batches", "outbox_entries", "consoles", "claims", "templates", "contacts",
    "contact_numbers", "contact_groups", "contact_members", "conversation_reads",
)  # fmt: skip
"""What the consoles work on (each login's read marks: its own rows only, by row-level
security): read and written as they go."""
RULE_RUNS: Final = ("rule_runs", "rule_forwards")
"""What keyword rules did (`store/rule_runs.py`): runners add and tell their own, never
delete (the server's rules keep the rest)."""
TABLES: Final = RECORD + WORK + RULE_RUNS
RUN: Final = ("SELECT", "INSERT", "UPDATE")
ALL_RIGHTS: Final = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE")
CHANGE: Final = ("SELECT", "INSERT", "UPDATE", "DELETE")

OPERATORS: Final = "operators"
RECEIVERS: Final = "receivers"
RIGHTS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    OPERATORS: {
        **{table: ("SELECT",) for table in RECORD},
        "history": ("SELECT", "INSERT"),
        "optout_changes": ("SELECT", "INSERT"),
        **{table: CHANGE for table in WORK},
        **{table: RUN for table in RULE_RUNS},
    },
    RECEIVERS: {
        **{table: ("SELECT",) for table in TABLES},
        "optout_changes": ("SELECT", "INSERT"),
        "consoles": CHANGE,
        "claims": CHANGE,
        **{table: RUN for table in RULE_RUNS},
    },
}
"""Each group's rights on each table (the receivers' on `replies` are by column, below)."""
REPLY_COLUMNS: Final = (
    "from_number", "to_number", "text", "received_at", "sent_at", "message_id", "reply_id",
    "keyword", "source", "stored_at", "received_claimed",
)  # fmt: skip
"""What a receiver writes of a reply (`stored_by` is the server's: the login that did)."""
REPLY_COMPLETIONS: Final = ("sent_at", "message_id", "reply_id", "keyword")
"""What a receiver may fill in on a stored reply (the server keeps what was there)."""
CALLABLE: Final = (
    "gwdesk_set(text, text)", "gwdesk_operator()", "gwdesk_may(text)",
    "gwdesk_conversation(text, text, text, text, boolean)",
    "gwdesk_conversation_tag(text, text)",
)  # fmt: skip
"""The server's functions the groups may call."""


@dataclass(frozen=True, slots=True)
class Groups:
    """The office's two group roles on this database."""

    operators: str
    receivers: str

    def of(self, kind: str) -> str:
        return self.operators if kind == OPERATORS else self.receivers


def group_names(database: str) -> Groups:
    """`<database>_operators` and `<database>_receivers`; a role name has at most 63 bytes,
    so a long database name is cut and told apart by a hash of it."""
    base = database
    if len(database.encode()) > 50:
        digest = hashlib.sha256(database.encode()).hexdigest()[:8]
        base = f"{database.encode()[:41].decode(errors='ignore')}_{digest}"
    return Groups(f"{base}_operators", f"{base}_receivers")


@dataclass(frozen=True, slots=True)
class Prepared:
    """What `prepare_team` did."""

    version: int
    """The schema's version now."""
    groups: Groups
    taken_back: tuple[str, ...]
    """Logins that held rights of their own on the tables (an older gwdesk's grant)."""
    shared: str | None
    """The login kept as a shared one (`--grant`), if any."""


def _ident(*names: str) -> tuple[pgsql.Identifier, ...]:
    return tuple(pgsql.Identifier(name) for name in names)


def _conn(session: Any) -> psycopg.Connection[Any]:
    conn: psycopg.Connection[Any] = session.conn
    return conn


def _one(conn: psycopg.Connection[Any], query: str, params: tuple[object, ...] = ()) -> Any:
    """The first column of the first row (None when there is no row)."""
    row = conn.execute(query, params).fetchone()
    return None if row is None else row[0]


def _role_exists(conn: psycopg.Connection[Any], role: str) -> bool:
    return _one(conn, "SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)) is not None


def _owner_step(what: str) -> StoreError:
    return StoreError(
        f"{what}: the database's owner needs the CREATEROLE attribute to make the office's "
        "group roles and the operators' logins (ALTER ROLE <owner> CREATEROLE, as the "
        "server's superuser; docs/team.md)"
    )


def _execute(conn: psycopg.Connection[Any], statement: pgsql.Composed, what: str) -> None:
    try:
        conn.execute(statement)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise _owner_step(f"{what} ({' '.join(str(exc).split())})") from None


def prepare_team(database: PostgresDatabase, *, shared: str | None = None) -> Prepared:
    """Bring the schema up to date, make the group roles (if missing) and give them exactly
    `RIGHTS`; take back any right a login holds of its own; with `shared`, keep that login
    working as one shared by several desks (a member of both groups). In one transaction:
    an owner who may not make roles leaves the schema as it was, not half upgraded."""
    with database.transaction() as session:
        conn = _conn(session)
        version = migrate(conn)
        name = str(_one(conn, "SELECT current_database()"))
        groups = group_names(name)
        for kind in (OPERATORS, RECEIVERS):
            role = groups.of(kind)
            if not _role_exists(conn, role):
                _execute(conn, pgsql.SQL("CREATE ROLE {} NOLOGIN").format(*_ident(role)), role)
            conn.execute(
                "INSERT INTO gwdesk_groups(kind, role) VALUES (%s, %s) "
                "ON CONFLICT (kind) DO UPDATE SET role = excluded.role",
                (kind, role),
            )
        taken_back = _take_back(conn, groups, shared)
        _grant(conn, name, groups)
        if shared is not None:
            _keep_shared(conn, groups, shared)
    return Prepared(version, groups, taken_back, shared)


def _take_back(
    conn: psycopg.Connection[Any], groups: Groups, shared: str | None
) -> tuple[str, ...]:
    """Every right on the tables held by anyone but the owner and the groups, taken back."""
    rows = conn.execute(
        "SELECT DISTINCT r.rolname FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a "
        "JOIN pg_roles r ON r.oid = a.grantee "
        "WHERE c.oid = ANY(%s::regclass[]) AND r.rolname NOT IN (%s, %s) "
        "AND NOT pg_has_role(r.oid, current_user, 'USAGE')",
        (list(TABLES), groups.operators, groups.receivers),
    ).fetchall()
    holders = sorted({str(row[0]) for row in rows} | ({shared} if shared else set()))
    for role in holders:
        if _role_exists(conn, role):
            _revoke_everything(conn, role)
    return tuple(r for r in holders if r != shared)


def _revoke_everything(conn: psycopg.Connection[Any], role: str) -> None:
    """Every right `role` holds of its own on this database, its schema, tables and
    functions, taken back (what it may do then comes from its groups alone)."""
    database = str(_one(conn, "SELECT current_database()"))
    who = _ident(role)
    conn.execute(pgsql.SQL("REVOKE ALL ON DATABASE {} FROM {}").format(*_ident(database), *who))
    conn.execute(pgsql.SQL("REVOKE ALL ON SCHEMA public FROM {}").format(*who))
    conn.execute(pgsql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(*who))
    conn.execute(pgsql.SQL("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM {}").format(*who))


def _grant(conn: psycopg.Connection[Any], database: str, groups: Groups) -> None:
    both = pgsql.SQL(", ").join(_ident(groups.operators, groups.receivers))
    conn.execute(pgsql.SQL("REVOKE CONNECT, TEMPORARY ON DATABASE {} FROM PUBLIC").format(
        *_ident(database)))  # fmt: skip
    conn.execute(pgsql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(*_ident(database), both))
    conn.execute(pgsql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(both))
    try:
        with conn.transaction():  # the owner of `public` may be another role: keep going
            conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    except psycopg.errors.InsufficientPrivilege:
        pass
    for table in TABLES:
        conn.execute(pgsql.SQL("REVOKE ALL ON {} FROM PUBLIC, {}").format(*_ident(table), both))
        for kind in (OPERATORS, RECEIVERS):
            rights = pgsql.SQL(", ").join(pgsql.SQL(r) for r in RIGHTS[kind][table])
            conn.execute(
                pgsql.SQL("GRANT {} ON {} TO {}").format(rights, *_ident(table, groups.of(kind)))
            )
    columns = pgsql.SQL(", ").join(_ident(*REPLY_COLUMNS))
    completions = pgsql.SQL(", ").join(_ident(*REPLY_COMPLETIONS))
    conn.execute(
        pgsql.SQL("GRANT INSERT ({}), UPDATE ({}) ON replies TO {}").format(
            columns, completions, *_ident(groups.receivers)
        )
    )
    for function in CALLABLE:
        conn.execute(pgsql.SQL(f"GRANT EXECUTE ON FUNCTION {function} TO {{}}").format(both))


def _keep_shared(conn: psycopg.Connection[Any], groups: Groups, role: str) -> None:
    if not _role_exists(conn, role):
        raise StoreError(f"There is no role {role!r} on the server to keep as a shared login.")
    for group in (groups.operators, groups.receivers):
        _execute(conn, pgsql.SQL("GRANT {} TO {}").format(*_ident(group, role)), role)
    conn.execute(
        "INSERT INTO operators(role, display, kind, added_at) VALUES (%s, %s, 'shared', %s) "
        "ON CONFLICT (role) DO UPDATE SET kind = 'shared', removed_at = NULL",
        (role, role, now_iso()),
    )


# ---- one login per operator --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Operator:
    role: str
    display: str
    kind: str
    """`operator`, `receiver`, or `shared` (a login several desks use)."""
    added_at: str
    removed_at: str | None = None


def check_role_name(role: str) -> str:
    """A login's name as gwdesk makes them; ValueError saying why not."""
    if not ROLE_NAME.fullmatch(role):
        raise ValueError(
            f"{role[:70]!r} is not a login name gwdesk makes: lower-case letters, digits and "
            "_, starting with a letter or _, at most 63"
        )
    if role.startswith("pg_"):
        raise ValueError("names starting pg_ are PostgreSQL's own")
    return role


def _groups_of(conn: psycopg.Connection[Any]) -> Groups:
    rows = dict(conn.execute("SELECT kind, role FROM gwdesk_groups").fetchall())
    if set(rows) != {OPERATORS, RECEIVERS}:
        raise StoreError("The team's groups are not made yet: run gwdesk team init first.")
    return Groups(rows[OPERATORS], rows[RECEIVERS])


def add_operator(
    database: PostgresDatabase,
    role: str,
    display: str,
    *,
    receiver: bool = False,
    password: str | None = None,
) -> Operator:
    """Make `role` a login of its own (or take an existing one) for one operator, or for
    the office's receiver, in the right group only; its display name is how the record
    names everything it does. The password is sent as a SCRAM verifier, never in clear."""
    check_role_name(role)
    display = " ".join(display.split())[:MAX_DISPLAY] or role
    kind = "receiver" if receiver else "operator"
    with database.transaction() as session:
        conn = _conn(session)
        groups = _groups_of(conn)
        if role in (groups.operators, groups.receivers) or _owns(conn, role):
            raise StoreError(f"{role!r} is the team's own role, not an operator's login.")
        verb = "ALTER" if _role_exists(conn, role) else "CREATE"
        statement = pgsql.SQL(f"{verb} ROLE {{}} LOGIN").format(*_ident(role))
        if password:
            verifier = conn.pgconn.encrypt_password(
                password.encode(), role.encode(), b"scram-sha-256"
            ).decode()
            statement = pgsql.SQL("{} PASSWORD {}").format(statement, pgsql.Literal(verifier))
        _execute(conn, statement, f"the login {role}")
        joined, left = (groups.receivers, groups.operators) if receiver else (
            groups.operators, groups.receivers)  # fmt: skip
        _execute(conn, pgsql.SQL("GRANT {} TO {}").format(*_ident(joined, role)), role)
        _execute(conn, pgsql.SQL("REVOKE {} FROM {}").format(*_ident(left, role)), role)
        try:
            with conn.transaction():
                conn.execute(
                    "INSERT INTO operators(role, display, kind, added_at) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (role) DO UPDATE SET display = excluded.display, "
                    "kind = excluded.kind, added_at = excluded.added_at, removed_at = NULL",
                    (role, display, kind, now_iso()),
                )
        except psycopg.errors.UniqueViolation:
            raise StoreError(
                f"Another operator is already called {display!r}: give {role} another name."
            ) from None
        conn.execute(
            "SELECT gwdesk_audit(%s, %s, %s)",
            (f"{kind} added", role, f"{display} ({verb.lower()}d the login)"),
        )
        return Operator(role, display, kind, now_iso())


def remove_operator(database: PostgresDatabase, role: str) -> str:
    """Take an operator's (or the receiver's) login out of the team: out of the groups,
    marked removed (the record keeps their name), and dropped, or made unable to log in
    when the server keeps something of theirs. What was done, in words."""
    check_role_name(role)
    with database.transaction() as session:
        conn = _conn(session)
        groups = _groups_of(conn)
        found = conn.execute(
            "UPDATE operators SET removed_at = %s WHERE role = %s AND removed_at IS NULL "
            "RETURNING display",
            (now_iso(), role),
        ).fetchone()
        if found is None:
            raise StoreError(f"{role!r} is not one of the team's operators.")
        for group in (groups.operators, groups.receivers):
            _execute(conn, pgsql.SQL("REVOKE {} FROM {}").format(*_ident(group, role)), role)
        _revoke_everything(conn, role)
        conn.execute("SELECT gwdesk_audit('operator removed', %s, %s)", (role, found[0]))
        try:
            with conn.transaction():
                conn.execute(pgsql.SQL("DROP ROLE {}").format(*_ident(role)))
            return f"{role} ({found[0]}) removed: the login is dropped"
        except psycopg.errors.DependentObjectsStillExist:
            _execute(conn, pgsql.SQL("ALTER ROLE {} NOLOGIN").format(*_ident(role)), role)
            return f"{role} ({found[0]}) removed: the login can no longer log in"


def _owns(conn: psycopg.Connection[Any], role: str) -> bool:
    return bool(
        _one(
            conn,
            "SELECT r.rolsuper OR pg_has_role(r.oid, current_user, 'USAGE') FROM pg_roles r "
            "WHERE r.rolname = %s",
            (role,),
        )
    )


def operators(database: PostgresDatabase) -> list[Operator]:
    """The team's logins, those removed too, the earliest first."""
    with database.session() as session:
        rows = session.execute(
            "SELECT role, display, kind, added_at, removed_at FROM operators ORDER BY added_at, role"
        ).fetchall()
    return [Operator(str(r[0]), str(r[1]), str(r[2]), str(r[3]), r[4]) for r in rows]


# ---- checking ------------------------------------------------------------------------------------


def privilege_problems(database: PostgresDatabase) -> list[str]:
    """What the groups cannot do that they need (`history: operators INSERT missing`), or
    what any login in them may do that none should (`audit: alex UPDATE too much`); []
    when every right is as `RIGHTS` says."""
    problems: list[str] = []
    with database.session() as session:
        conn = _conn(session)
        groups = _groups_of(conn)
        members = [
            str(row[0])
            for row in conn.execute(
                "SELECT DISTINCT r.rolname FROM pg_roles r WHERE NOT r.rolsuper "
                "AND NOT pg_has_role(r.oid, current_user, 'USAGE') "
                "AND (pg_has_role(r.oid, %s, 'MEMBER') OR pg_has_role(r.oid, %s, 'MEMBER'))",
                (groups.operators, groups.receivers),
            ).fetchall()
        ]
        for kind in (OPERATORS, RECEIVERS):
            group = groups.of(kind)
            for table in TABLES:
                for right in RIGHTS[kind][table]:
                    if not _may(conn, group, table, right):
                        problems.append(f"{table}: {kind} {right} missing")
        for right, columns in (("INSERT", REPLY_COLUMNS), ("UPDATE", REPLY_COMPLETIONS)):
            for column in columns:
                if not _one(
                    conn,
                    "SELECT has_column_privilege(%s, 'replies', %s, %s)",
                    (groups.receivers, column, right),
                ):
                    problems.append(f"replies.{column}: {RECEIVERS} {right} missing")
        allowed = {
            table: set(RIGHTS[OPERATORS][table]) | set(RIGHTS[RECEIVERS][table]) for table in TABLES
        }
        for role in [groups.operators, groups.receivers, *members]:
            for table in TABLES:
                for right in ALL_RIGHTS:
                    if right not in allowed[table] and _may(conn, role, table, right):
                        problems.append(f"{table}: {role} {right} too much")
            if _signals(conn, role):
                problems.append(f"{role}: may end other sessions (pg_signal_backend) too much")
    return problems


def _may(conn: psycopg.Connection[Any], role: str, table: str, right: str) -> bool:
    return bool(_one(conn, "SELECT has_table_privilege(%s, %s, %s)", (role, table, right)))


def _signals(conn: psycopg.Connection[Any], role: str) -> bool:
    return bool(
        _one(
            conn,
            "SELECT pg_has_role(%s, 'pg_signal_backend', 'USAGE') "
            "OR (SELECT rolsuper FROM pg_roles WHERE rolname = %s)",
            (role, role),
        )
    )
