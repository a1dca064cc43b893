"""The shared store's schema on PostgreSQL, as append-only steps (step N: version N → N+1).

The tables are the shared ones of a profile's SQLite file, column for column (times
as the same ISO text or microseconds, flags as 0/1 integers), so the stores' SQL runs
on both; what PostgreSQL does differently stands here: identity ids, a reply's key
over a hash of its text (an index entry has a size limit, a reply's text has none),
and the triggers that announce every change on commit (`NOTIFY gwdesk, '<table>'`).
What is one workstation's own (drafts, the log cache, the listener's port and secret,
window state) is never here. Step 2 (`pg_rules.py`) makes the server the keeper of the
record: who did what, checked and stamped by the server itself; step 4
(`pg_conversations.py`) adds conversations as work and each login's read marks.
"""

from __future__ import annotations

from typing import Final

from gwdesk.store.pg_conversations import CONVERSATIONS
from gwdesk.store.pg_reply_rules import REPLY_RULES_STEP
from gwdesk.store.pg_rules import HELD_SENDS, SERVER_RULES

_EVERY_WRITE: Final = "INSERT OR UPDATE OR DELETE"


def _announced(name: str, table: str, writes: str = _EVERY_WRITE) -> str:
    """A trigger that tells the listening consoles (`NOTIFY gwdesk`) a statement wrote `table`."""
    return f"""
    CREATE TRIGGER {name}_changed AFTER {writes} ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION gwdesk_changed();"""


_CHANGES_ANNOUNCED: Final = "".join(
    (
        _announced("history", "history"),
        _announced("replies", "replies"),
        _announced("outbox_batches", "outbox_batches"),
        _announced("outbox_entries", "outbox_entries"),
        _announced("optouts", "optout_changes"),
        _announced("settings", "settings"),
        _announced("claims", "claims"),
        # A console's presence is renewed by updates: only its coming and going is news.
        _announced("consoles", "consoles", "INSERT OR DELETE"),
        _announced("templates", "templates"),
        _announced("contacts", "contacts"),
        _announced("contact_numbers", "contact_numbers"),
        _announced("contact_members", "contact_members"),
    )
)

_SHARED_TABLES: Final = """
    CREATE TABLE gwdesk_schema (version INTEGER NOT NULL);
    INSERT INTO gwdesk_schema(version) VALUES (0);

    CREATE TABLE history (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at TEXT NOT NULL,
        channel TEXT NOT NULL,
        recipients TEXT NOT NULL,
        text TEXT NOT NULL,
        ok INTEGER NOT NULL,
        message_id TEXT,
        batch_code TEXT,
        status TEXT,
        external_system_id TEXT,
        detail TEXT NOT NULL DEFAULT '',
        operator TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX history_at ON history(at);

    CREATE TABLE replies (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        from_number TEXT NOT NULL,
        to_number TEXT NOT NULL,
        text TEXT NOT NULL,
        received_at TEXT NOT NULL,
        sent_at TEXT,
        message_id TEXT,
        reply_id TEXT,
        keyword TEXT,
        source TEXT NOT NULL,
        stored_at TEXT NOT NULL,
        received_claimed TEXT
    );
    CREATE UNIQUE INDEX replies_key
        ON replies(received_at, from_number, to_number, md5(text))
        WHERE received_claimed IS NULL;
    CREATE UNIQUE INDEX replies_claim
        ON replies(from_number, to_number, received_claimed, md5(text))
        WHERE received_claimed IS NOT NULL;
    CREATE INDEX replies_from ON replies(from_number, received_at);

    CREATE TABLE outbox_batches (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        send_id TEXT NOT NULL UNIQUE,
        gateway TEXT NOT NULL,
        channel TEXT NOT NULL,
        label TEXT NOT NULL DEFAULT '',
        baseline TEXT NOT NULL DEFAULT '[]',
        excluded TEXT NOT NULL DEFAULT '[]',
        created_us BIGINT NOT NULL,
        updated_us BIGINT NOT NULL,
        closed INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        operator TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX outbox_batches_open ON outbox_batches(gateway, id) WHERE closed = 0;
    CREATE TABLE outbox_entries (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        batch_id BIGINT NOT NULL REFERENCES outbox_batches(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        external_system_id TEXT,
        own_id INTEGER NOT NULL DEFAULT 1,
        recipients TEXT NOT NULL,
        recipient_count INTEGER NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'in_flight', 'lodged', 'failed', 'unknown')),
        attempts INTEGER NOT NULL DEFAULT 0,
        message_id TEXT,
        batch_code TEXT,
        found INTEGER NOT NULL DEFAULT 0,
        reason TEXT NOT NULL DEFAULT '',
        error_kind TEXT,
        retryable INTEGER NOT NULL DEFAULT 0,
        created_us BIGINT NOT NULL,
        updated_us BIGINT NOT NULL,
        sent_us BIGINT,
        UNIQUE (batch_id, seq)
    );
    CREATE UNIQUE INDEX outbox_entries_own_id ON outbox_entries(external_system_id)
        WHERE own_id = 1 AND external_system_id IS NOT NULL;
    CREATE INDEX outbox_entries_external ON outbox_entries(external_system_id);
    CREATE INDEX outbox_entries_state ON outbox_entries(batch_id, state);

    CREATE TABLE optouts (
        account TEXT NOT NULL,
        number TEXT NOT NULL,
        opted_out INTEGER NOT NULL,
        at TEXT NOT NULL,
        how TEXT NOT NULL,
        by_whom TEXT NOT NULL,
        keyword TEXT,
        reply_id BIGINT,
        reason TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (account, number)
    );
    CREATE INDEX optouts_at ON optouts(account, opted_out, at);
    CREATE TABLE optout_changes (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account TEXT NOT NULL,
        number TEXT NOT NULL,
        opted_out INTEGER NOT NULL,
        at TEXT NOT NULL,
        how TEXT NOT NULL,
        by_whom TEXT NOT NULL,
        keyword TEXT,
        reply_id BIGINT,
        reason TEXT NOT NULL DEFAULT '',
        applied INTEGER NOT NULL
    );
    CREATE INDEX optout_changes_number ON optout_changes(account, number, at);

    CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);

    CREATE TABLE audit (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at TEXT NOT NULL,
        operator TEXT NOT NULL,
        console TEXT NOT NULL,
        action TEXT NOT NULL,
        subject TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX audit_at ON audit(at);

    CREATE TABLE consoles (
        id TEXT PRIMARY KEY,
        operator TEXT NOT NULL,
        host TEXT NOT NULL,
        started_at TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        version TEXT NOT NULL
    );
    CREATE TABLE claims (
        subject TEXT NOT NULL,
        console TEXT NOT NULL,
        operator TEXT NOT NULL,
        until_us BIGINT NOT NULL,
        PRIMARY KEY (subject, console)
    );

    CREATE TABLE templates (
        name_key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        text TEXT NOT NULL,
        updated_us BIGINT NOT NULL
    );
    CREATE TABLE contacts (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        notes TEXT NOT NULL DEFAULT '',
        fields TEXT NOT NULL DEFAULT '{}',
        created_us BIGINT NOT NULL,
        updated_us BIGINT NOT NULL
    );
    CREATE INDEX contacts_name ON contacts(name_key, id);
    CREATE TABLE contact_numbers (
        number TEXT PRIMARY KEY,
        contact_id BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        position INTEGER NOT NULL
    );
    CREATE INDEX contact_numbers_contact ON contact_numbers(contact_id, position);
    CREATE TABLE contact_groups (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL,
        name_key TEXT NOT NULL UNIQUE
    );
    CREATE TABLE contact_members (
        group_id BIGINT NOT NULL REFERENCES contact_groups(id) ON DELETE CASCADE,
        contact_id BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        PRIMARY KEY (group_id, contact_id)
    );
    CREATE INDEX contact_members_contact ON contact_members(contact_id);

    CREATE FUNCTION gwdesk_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('gwdesk', TG_TABLE_NAME);
        RETURN NULL;
    END $$;
    """

PG_MIGRATIONS: Final[tuple[str, ...]] = (
    _SHARED_TABLES + _CHANGES_ANNOUNCED,
    SERVER_RULES,
    HELD_SENDS,
    CONVERSATIONS,
    REPLY_RULES_STEP,
)
