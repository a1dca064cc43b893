"""Conversations as work on a team's server: schema step 4 (version 3 → 4) of `pg_schema`.

The server keeps these rules itself (`store/conversations.py` is the client's side):

- the groups may only read `conversations`; every change of a state or an assignment
  goes through `gwdesk_conversation`, which checks it, stamps `changed_by` with the
  name the server gives the login (`gwdesk_named`) and `changed_at` with its own clock,
  and writes the audit entry in the same transaction: no client forges who, or changes
  a state without an audit row;
- a new reply re-opens a conversation that is not open, by a trigger on `replies` in
  the reply's own transaction (one statement per group of replies: the flood pays one
  join, not a call per reply), audited as the customer's;
- `conversation_reads` holds each login's read marks; row-level security keeps a login
  to its own rows (the reader is the login itself, never a name it claims).
"""

from __future__ import annotations

from typing import Final

_DEFINER: Final = "SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp"


def conversation_function(
    allowed: str = "gwdesk_may('operators')",
    refusal: str = "only an operator changes a conversation",
    replace: str = "",
) -> str:
    """`gwdesk_conversation`, which `allowed` groups may call (step 4: the operators; a
    later step adds the receiver, for its keyword rules, as `CREATE OR REPLACE`)."""
    return f"""CREATE {replace}FUNCTION gwdesk_conversation(
    conv text, new_state text, until text, assignee text, reassign boolean
) RETURNS void LANGUAGE plpgsql VOLATILE {_DEFINER} AS $$
DECLARE
    who text := gwdesk_named(NULL);
    kept record;
    named text;
BEGIN
    IF NOT {allowed} THEN
        RAISE EXCEPTION '{refusal}'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF conv IS NULL OR conv !~ '^[0-9]{{1,32}}$' THEN
        RAISE EXCEPTION 'a conversation is a customer''s number (digits only)'
            USING ERRCODE = 'check_violation';
    END IF;
    IF reassign THEN
        named := NULLIF(left(btrim(regexp_replace(coalesce(assignee, ''), '[[:cntrl:]]', '', 'g')), 200), '');
        IF assignee IS NOT NULL AND named IS NULL THEN
            RAISE EXCEPTION 'name the operator to assign the conversation to'
                USING ERRCODE = 'check_violation';
        END IF;
        -- An office with its own logins assigns to one of its current operators, by the
        -- name the record gives them.
        IF named IS NOT NULL AND EXISTS (SELECT 1 FROM operators o
                WHERE o.kind = 'operator' AND o.removed_at IS NULL) THEN
            SELECT o.display INTO named FROM operators o
                WHERE lower(o.display) = lower(named) AND o.kind <> 'receiver'
                  AND o.removed_at IS NULL LIMIT 1;
            IF named IS NULL THEN
                RAISE EXCEPTION 'no current operator is called %', left(assignee, 60)
                    USING ERRCODE = 'check_violation';
            END IF;
        END IF;
    ELSE
        IF new_state IS NULL OR new_state NOT IN ('open', 'waiting', 'done', 'snoozed') THEN
            RAISE EXCEPTION 'not a conversation''s state: %', left(coalesce(new_state, ''), 40)
                USING ERRCODE = 'check_violation';
        END IF;
        IF (new_state = 'snoozed') <> (until IS NOT NULL)
                OR (until IS NOT NULL AND (NOT gwdesk_is_time(until) OR until <= gwdesk_now())) THEN
            RAISE EXCEPTION 'a conversation is snoozed until a time to come, and only snoozed'
                USING ERRCODE = 'check_violation';
        END IF;
    END IF;
    INSERT INTO conversations(number, state, changed_at, changed_by)
        VALUES (conv, 'open', gwdesk_now(), who) ON CONFLICT (number) DO NOTHING;
    SELECT c.state, c.snoozed_until, c.assigned_to INTO kept
        FROM conversations c WHERE c.number = conv FOR UPDATE;
    IF reassign THEN
        IF kept.assigned_to IS NOT DISTINCT FROM named THEN
            RETURN;
        END IF;
        UPDATE conversations SET assigned_to = named, changed_at = gwdesk_now(),
            changed_by = who, role = session_user WHERE number = conv;
        PERFORM gwdesk_audit(
            CASE WHEN named IS NULL THEN 'conversation unassigned' ELSE 'conversation assigned' END,
            conv, coalesce(named, kept.assigned_to, ''));
    ELSE
        IF kept.state = new_state AND kept.snoozed_until IS NOT DISTINCT FROM until THEN
            RETURN;
        END IF;
        UPDATE conversations SET state = new_state, snoozed_until = until,
            changed_at = gwdesk_now(), changed_by = who, role = session_user
            WHERE number = conv;
        PERFORM gwdesk_audit(
            CASE WHEN new_state = 'open' THEN 'conversation reopened'
                 ELSE 'conversation ' || new_state END,
            conv, coalesce(until, 'was ' || kept.state));
    END IF;
END $$;"""  # noqa: S608 - constant SQL


CONVERSATIONS: Final = f"""
CREATE TABLE conversations (
    number TEXT PRIMARY KEY CHECK (number ~ '^[0-9]{{1,32}}$'),
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'waiting', 'done', 'snoozed')),
    snoozed_until TEXT CHECK (snoozed_until IS NULL OR gwdesk_is_time(snoozed_until)),
    assigned_to TEXT CHECK (assigned_to IS NULL OR (
        char_length(assigned_to) BETWEEN 1 AND 200 AND assigned_to !~ '[[:cntrl:]]')),
    changed_at TEXT NOT NULL CHECK (gwdesk_is_time(changed_at)),
    changed_by TEXT NOT NULL DEFAULT '' CHECK (char_length(changed_by) <= 200),
    role TEXT NOT NULL DEFAULT session_user,
    CHECK ((state = 'snoozed') = (snoozed_until IS NOT NULL))
);
CREATE TABLE conversation_reads (
    reader TEXT NOT NULL DEFAULT session_user,
    number TEXT NOT NULL CHECK (number = '' OR number ~ '^[0-9]{{1,32}}$'),
    up_to BIGINT NOT NULL CHECK (up_to >= 0),
    PRIMARY KEY (reader, number)
);
ALTER TABLE conversation_reads ENABLE ROW LEVEL SECURITY;
CREATE POLICY conversation_reads_own ON conversation_reads
    USING (reader = session_user) WITH CHECK (reader = session_user);

-- The one way a group changes a conversation: checked, stamped, audited.
{conversation_function()}

-- A customer's new reply re-opens their conversation, in the reply's transaction.
CREATE FUNCTION gwdesk_replies_reopen() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
DECLARE
    reopened record;
BEGIN
    FOR reopened IN
        WITH was AS (
            SELECT c.number, c.state FROM conversations c
            WHERE c.state <> 'open'
              AND c.number IN (SELECT DISTINCT ltrim(a.from_number, '+') FROM added a)
            FOR UPDATE)
        UPDATE conversations c SET state = 'open', snoozed_until = NULL,
            changed_at = gwdesk_now(), changed_by = 'the customer', role = session_user
        FROM was WHERE c.number = was.number
        RETURNING c.number, was.state
    LOOP
        PERFORM gwdesk_audit('conversation reopened', reopened.number,
                             'a new reply (was ' || reopened.state || ')');
    END LOOP;
    RETURN NULL;
END $$;
CREATE TRIGGER replies_reopen AFTER INSERT ON replies REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION gwdesk_replies_reopen();

CREATE TRIGGER conversations_changed AFTER INSERT OR UPDATE OR DELETE ON conversations
    FOR EACH STATEMENT EXECUTE FUNCTION gwdesk_changed();
CREATE TRIGGER conversation_reads_changed AFTER INSERT OR UPDATE OR DELETE
    ON conversation_reads FOR EACH STATEMENT EXECUTE FUNCTION gwdesk_changed();

REVOKE EXECUTE ON FUNCTION gwdesk_conversation(text, text, text, text, boolean),
    gwdesk_replies_reopen() FROM PUBLIC;
"""  # noqa: S608 - constant SQL
"""Step 4: conversations and read marks (see the module docstring)."""
