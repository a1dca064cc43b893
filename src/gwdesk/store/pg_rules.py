"""The team's record, kept by the server: schema step 2 (version 1 → 2) of `pg_schema`.

A console is one client among several, and anything another desk can write is hostile
input. So the rules that protect the office's record (who was texted, who said STOP,
who changed what) are the server's, and hold against a plain SQL client logged in as
an operator (`docs/team.md`, "What the server guarantees"):

- **Who**: every operator logs in as a role of their own (`operators` names it), a
  member of the office's group roles (`gwdesk_groups`: operators and receivers), which
  hold the privileges. `gwdesk_operator()` is the name the record gives a session: an
  operator's display name, looked up from `session_user`; only a session that cannot be
  told apart from others (the owner, a superuser, a login shared by several desks
  before they moved to one each) is named by what it claims: the row's own name, else
  what its connection declared (`gwdesk.operator`), the server having no better
  knowledge. Every stamped row also keeps the login role itself, which no client sets.
- **The record is append-only**: the groups may add to the send history and the opt-out
  history, and nothing else of the record. The current opt-out state (`optouts`) is
  derived by the server from each change as it is added (`gwdesk_optout_change`), which
  stamps who (`by_whom`) and when (`now()`), refuses an operator's opting back in
  without a reason, and lets only a receiver record a customer's keyword (naming the
  stored reply it came from). Settings change only through `gwdesk_set`, which checks
  each value (STOP stays an opt-out keyword; the ReplyPath is https, or loopback for
  tests, and only a receiver publishes it).
- **The audit log is the server's**: no group may write it; the triggers append a row
  for every send, opt-out change, setting and template change, stamped with
  `session_user` and `now()`.
- **Every column checked**: times in the one ISO form the stores write, states, `how`,
  numbers, flags and lengths, so a row the consoles would not understand cannot be
  written (the constraints are `NOT VALID`: rows older than this step are not checked,
  and readers skip what they cannot read).
- **Presence**: a console's row and typing notes carry the server's clock and login;
  row-level security lets a login change only its own.

Every function that acts with the owner's rights is `SECURITY DEFINER` with a fixed
`search_path` (`pg_catalog` first, `pg_temp` last), and `EXECUTE` is taken from
`PUBLIC` on all of them; the groups may call only `gwdesk_set`, `gwdesk_operator` and
`gwdesk_may` (and the pure helpers the constraints and policies use: a constraint is
evaluated with the writer's rights). The grants themselves are made by `gwdesk team init`
(`gwdesk.store.pg_roles`), since group roles belong to the cluster, not the schema.
"""

from __future__ import annotations

from typing import Final

from gwdesk.store.team import SETTING_CHANGED

_STEP_2_SETTINGS: Final = (
    "optouts.opt_out_keywords",
    "optouts.opt_in_keywords",
    "sending.marketing_default",
    "sending.opt_out_instruction",
    "team.reply_path",
)
STEP_3_SETTING_NAMES: Final = (*_STEP_2_SETTINGS, "sending.quiet_hours", "sending.quiet_hours_on")
"""The team's settings up to step 3 (step 5 adds one: `pg_reply_rules.SETTING_NAMES`)."""

SETTINGS_LOCK: Final = 0x6777_7365_7474  # "gwsett": the team's settings change one at a time
_DEFINER: Final = "SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp"

_CUSTOMER_HOWS: Final = "'reply (webhook)', 'keyword forward', 'replies backfill'"
"""How a customer's own keyword reaches the record (`store.optouts.How`)."""
_OPT_OUT_HOWS: Final = f"{_CUSTOMER_HOWS}, 'operator', 'import'"
"""Every way an opt-out change may come about, as this step wrote them."""


def _stamped_by_login(table: str, column: str) -> str:
    """`column` of `table` names the login that wrote each row: the server's default, and
    required from this step on (older rows keep NULL: not known, rather than the upgrader's)."""
    return (
        f"ALTER TABLE {table} ADD COLUMN {column} TEXT;\n"
        f"ALTER TABLE {table} ALTER COLUMN {column} SET DEFAULT session_user;\n"
        f"ALTER TABLE {table} ADD CONSTRAINT {table}_{column}_known "
        f"CHECK ({column} IS NOT NULL) NOT VALID;"
    )


_STAMPED_BY_LOGIN: Final = "\n".join(
    _stamped_by_login(table, column)
    for table, column in (
        ("audit", "role"),
        ("history", "role"),
        ("replies", "stored_by"),
        ("optouts", "role"),
        ("optout_changes", "role"),
        ("consoles", "role"),
        ("claims", "role"),
    )
)


def _optout_checks(table: str, state: str) -> str:
    """The checks an opt-out row passes, in the current state and in its history alike."""
    return f"""ALTER TABLE {table}
    ADD CONSTRAINT {table}_number_checked CHECK (number ~ '^[0-9]{{1,32}}$') NOT VALID,
    ADD CONSTRAINT {table}_state_checked CHECK ({state}) NOT VALID,
    ADD CONSTRAINT {table}_at_checked CHECK (gwdesk_is_time(at)) NOT VALID,
    ADD CONSTRAINT {table}_how_checked CHECK (how IN ({_OPT_OUT_HOWS})) NOT VALID,
    ADD CONSTRAINT {table}_lengths_checked CHECK (
        char_length(by_whom) BETWEEN 1 AND 200 AND char_length(reason) <= 500
        AND char_length(coalesce(keyword, '')) <= 100) NOT VALID;"""


SETTING_CHECKS: Final = """\
        WHEN 'optouts.opt_out_keywords' THEN
            jsonb_typeof(parsed) = 'array' AND parsed ? 'STOP'
            AND jsonb_array_length(parsed) <= 50
            AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(parsed) e
                WHERE jsonb_typeof(e) <> 'string' OR char_length(e #>> '{}') NOT BETWEEN 1 AND 40)
        WHEN 'optouts.opt_in_keywords' THEN
            jsonb_typeof(parsed) = 'array' AND jsonb_array_length(parsed) <= 50
            AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(parsed) e
                WHERE jsonb_typeof(e) <> 'string' OR char_length(e #>> '{}') NOT BETWEEN 1 AND 40)
        WHEN 'sending.marketing_default' THEN jsonb_typeof(parsed) = 'boolean'
        WHEN 'sending.opt_out_instruction' THEN
            jsonb_typeof(parsed) = 'string' AND btrim(parsed #>> '{}') <> ''
            AND char_length(parsed #>> '{}') <= 100
        WHEN 'team.reply_path' THEN
            jsonb_typeof(parsed) = 'null'
            OR (jsonb_typeof(parsed) = 'string' AND char_length(parsed #>> '{}') <= 2000
                AND (parsed #>> '{}' ~ '^https://[^/?#@[:space:]]+/[^[:space:]]*$'
                     OR parsed #>> '{}' ~ '^http://(127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}|localhost|\\[::1\\])(:[0-9]{1,5})?/[^[:space:]]*$'))
"""
"""`gwdesk_set`'s check of each team setting's value (`WHEN name THEN condition`)."""
SETTING_HINTS: Final = """\
                WHEN 'optouts.opt_out_keywords' THEN ' (STOP stays an opt-out keyword)'
                WHEN 'team.reply_path' THEN ' (an https address, or loopback for tests)'
"""
"""What a refusal of a setting adds to say what the setting takes."""


def names_listed(names: tuple[str, ...]) -> str:
    return ", ".join(f"'{name}'" for name in names)


def _window_checked(kind: str) -> str:
    """A day kind's sending window as `domain.quiet_hours` writes it: null (no sending),
    or exactly {"start", "end"}, each HH:MM, the start first."""
    window, clock = f"(parsed -> '{kind}')", "'^([01][0-9]|2[0-3]):[0-5][0-9]$'"
    return f"""(jsonb_typeof({window}) = 'null' OR (jsonb_typeof({window}) = 'object'
                AND (SELECT count(*) FROM jsonb_object_keys({window})) = 2
                AND {window} ->> 'start' ~ {clock} AND {window} ->> 'end' ~ {clock}
                AND {window} ->> 'start' < {window} ->> 'end'))"""  # noqa: S608 - constant SQL


HOURS_CHECKS: Final = f"""\
        WHEN 'sending.quiet_hours_on' THEN jsonb_typeof(parsed) = 'boolean'
        WHEN 'sending.quiet_hours' THEN
            jsonb_typeof(parsed) = 'object' AND (SELECT count(*) FROM jsonb_object_keys(parsed)) = 2
            AND parsed ? 'weekdays' AND parsed ? 'weekends'
            AND NOT (jsonb_typeof(parsed -> 'weekdays') = 'null'
                     AND jsonb_typeof(parsed -> 'weekends') = 'null')
            AND {_window_checked("weekdays")}
            AND {_window_checked("weekends")}
"""  # noqa: S608 - constant SQL: the names interpolated are this module's own
HOURS_HINTS: Final = """\
                WHEN 'sending.quiet_hours' THEN ' (weekdays and weekends: null, or a start and an end as HH:MM, the start first; not both null)'
"""


def settings_function(checks: str, hints: str) -> str:
    """`gwdesk_set`, the only way a group changes a team setting, checking each value by
    `checks` (a later step replaces it with more settings' checks)."""
    return f"""CREATE OR REPLACE FUNCTION gwdesk_set(setting text, value text) RETURNS void
    LANGUAGE plpgsql VOLATILE {_DEFINER} AS $$
DECLARE
    parsed jsonb;
    kept text;
    taken boolean;
BEGIN
    IF setting = 'team.reply_path' THEN
        IF NOT gwdesk_may('receivers') THEN
            RAISE EXCEPTION 'only the office''s reply receiver publishes the ReplyPath'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    ELSIF NOT gwdesk_may('operators') THEN
        RAISE EXCEPTION 'only an operator changes the team''s settings'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    BEGIN
        parsed := value::jsonb;
    EXCEPTION WHEN others THEN
        RAISE EXCEPTION 'setting %: the value is not JSON', left(setting, 60)
            USING ERRCODE = 'check_violation';
    END;
    taken := CASE setting
{checks}        ELSE NULL END;
    IF taken IS NOT TRUE THEN
        RAISE EXCEPTION 'setting %: % is not a value it takes%', left(setting, 60), left(value, 200),
            CASE setting
{hints}                ELSE '' END
            USING ERRCODE = 'check_violation';
    END IF;
    -- One change of the team's settings at a time: their audit entries' ids then grow in
    -- the order they commit, so a console reading past the last one it told misses none.
    PERFORM pg_advisory_xact_lock({SETTINGS_LOCK});
    SELECT s.value INTO kept FROM settings s WHERE s.name = setting FOR UPDATE;
    IF FOUND AND kept = value THEN
        RETURN;
    END IF;
    INSERT INTO settings(name, value) VALUES (setting, value)
        ON CONFLICT (name) DO UPDATE SET value = excluded.value;
    PERFORM gwdesk_audit('{SETTING_CHANGED}', setting, left(value, 2000));
END $$;"""  # noqa: S608 - constant SQL: the names interpolated are this module's own


SERVER_RULES: Final = f"""
CREATE TABLE gwdesk_groups (
    kind TEXT PRIMARY KEY CHECK (kind IN ('operators', 'receivers')),
    role TEXT NOT NULL
);
CREATE TABLE operators (
    role TEXT PRIMARY KEY CHECK (role ~ '^[A-Za-z_][A-Za-z0-9_$]{{0,62}}$'),
    display TEXT NOT NULL
        CHECK (char_length(display) BETWEEN 1 AND 200 AND display !~ '[[:cntrl:]]'),
    kind TEXT NOT NULL CHECK (kind IN ('operator', 'receiver', 'shared')),
    added_at TEXT NOT NULL,
    removed_at TEXT
);
CREATE UNIQUE INDEX operators_display ON operators(lower(display))
    WHERE removed_at IS NULL AND kind <> 'shared';
-- The login that wrote each row of the record, set by the server, never by the client.
-- Rows written before this step have none (NULL: not known), rather than the upgrader's.
{_STAMPED_BY_LOGIN}

-- The time every store writes: ISO 8601 in UTC, as Python's isoformat() gives it, with
-- a day the month has (29 February in any year). One regular expression, so the check
-- is inlined into each constraint: a reply flood pays no function call per column.
CREATE FUNCTION gwdesk_is_time(value text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT value ~ '^[0-9]{{4}}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-9]))T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{{1,6}})?\\+00:00$'
$$;
CREATE FUNCTION gwdesk_now() RETURNS text LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')
$$;
CREATE FUNCTION gwdesk_now_us() RETURNS bigint LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
$$;

-- Whether this session belongs to a group ('operators', 'receivers'); the owner always.
CREATE FUNCTION gwdesk_may(kind text) RETURNS boolean LANGUAGE sql STABLE {_DEFINER} AS $$
    SELECT pg_has_role(session_user, current_user, 'MEMBER')
        OR EXISTS (
            SELECT 1 FROM gwdesk_groups g JOIN pg_roles r ON r.rolname = g.role
            WHERE g.kind = $1 AND pg_has_role(session_user, r.oid, 'MEMBER'))
$$;
-- The name the record gives this session (see the module docstring): an operator's own
-- login is named by the server; any other by what it claims (`claimed`, else what its
-- connection declared), which is all the server can know of it.
CREATE FUNCTION gwdesk_named(claimed text) RETURNS text LANGUAGE sql STABLE {_DEFINER} AS $$
    SELECT COALESCE(
        (SELECT o.display FROM operators o
         WHERE o.role = session_user AND o.kind <> 'shared' AND o.removed_at IS NULL),
        NULLIF(left(btrim(regexp_replace(coalesce(claimed, ''), '[[:cntrl:]]', '', 'g')), 200), ''),
        NULLIF(left(btrim(regexp_replace(
            coalesce(current_setting('gwdesk.operator', true), ''), '[[:cntrl:]]', '', 'g')), 200), ''),
        session_user::text)
$$;
CREATE FUNCTION gwdesk_operator() RETURNS text LANGUAGE sql STABLE {_DEFINER} AS $$
    SELECT gwdesk_named(NULL)
$$;
CREATE FUNCTION gwdesk_audit(action text, subject text, detail text, who text DEFAULT NULL)
    RETURNS void LANGUAGE sql VOLATILE {_DEFINER} AS $$
    INSERT INTO audit(at, operator, console, action, subject, detail, role)
    VALUES (gwdesk_now(), gwdesk_named(who),
            left(regexp_replace(coalesce(current_setting('gwdesk.console', true), ''),
                                '[[:cntrl:]]', '', 'g'), 100),
            left(action, 100), left(coalesce(subject, ''), 2000), left(coalesce(detail, ''), 2000),
            session_user)
$$;

-- A send: who made it is the server's to say, and it is audited with it.
CREATE FUNCTION gwdesk_history_added() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    NEW.operator := gwdesk_named(NEW.operator);
    NEW.role := session_user;
    PERFORM gwdesk_audit(CASE WHEN NEW.ok = 1 THEN 'sent' ELSE 'send failed' END,
                         left(NEW.recipients, 2000),
                         left(NEW.channel || ': ' || NEW.text, 2000), NEW.operator);
    RETURN NEW;
END $$;
CREATE TRIGGER history_added BEFORE INSERT ON history
    FOR EACH ROW EXECUTE FUNCTION gwdesk_history_added();

-- An opt-out change: stamped, checked, applied to the current state, audited.
CREATE FUNCTION gwdesk_optout_change() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
DECLARE
    customer boolean := NEW.how IN ({_CUSTOMER_HOWS});
    sender text;
    received text;
    kept record;
BEGIN
    IF customer THEN
        IF NOT gwdesk_may('receivers') THEN
            RAISE EXCEPTION 'only the office''s reply receiver records a customer''s keyword'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        SELECT r.from_number, r.received_at INTO sender, received
            FROM replies r WHERE r.id = NEW.reply_id;
        IF NOT FOUND OR NEW.keyword IS NULL
                OR right(regexp_replace(sender, '[^0-9]', '', 'g'), 8) <> right(NEW.number, 8) THEN
            RAISE EXCEPTION 'a customer''s opt-out change names the stored reply (and keyword) it came from'
                USING ERRCODE = 'check_violation';
        END IF;
        NEW.at := received;
        NEW.by_whom := 'the customer';
    ELSE
        IF NOT gwdesk_may('operators') THEN
            RAISE EXCEPTION 'only an operator changes the opt-out list by hand'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        NEW.reason := left(btrim(regexp_replace(coalesce(NEW.reason, ''), '\\s+', ' ', 'g')), 500);
        IF NEW.opted_out = 0 AND (NEW.how <> 'operator' OR NEW.reason = '') THEN
            RAISE EXCEPTION 'Only the customer''s own START resubscribes without a reason: say why (e.g. ''asked by phone on 3 March'').'
                USING ERRCODE = 'check_violation';
        END IF;
        NEW.at := gwdesk_now();
        NEW.by_whom := gwdesk_named(NEW.by_whom);
        NEW.keyword := NULL;
        NEW.reply_id := NULL;
    END IF;
    NEW.role := session_user;
    SELECT o.opted_out, o.at INTO kept FROM optouts o
        WHERE o.account = NEW.account AND o.number = NEW.number FOR UPDATE;
    NEW.applied := CASE
        WHEN FOUND AND customer AND kept.at > NEW.at THEN 0  -- a late reply: kept, not applied
        WHEN NOT FOUND OR kept.opted_out <> NEW.opted_out THEN 1
        ELSE 0 END;
    IF NEW.applied = 1 THEN
        INSERT INTO optouts(account, number, opted_out, at, how, by_whom, keyword, reply_id,
                            reason, role)
        VALUES (NEW.account, NEW.number, NEW.opted_out, NEW.at, NEW.how, NEW.by_whom,
                NEW.keyword, NEW.reply_id, NEW.reason, NEW.role)
        ON CONFLICT (account, number) DO UPDATE SET
            opted_out = excluded.opted_out, at = excluded.at, how = excluded.how,
            by_whom = excluded.by_whom, keyword = excluded.keyword,
            reply_id = excluded.reply_id, reason = excluded.reason, role = excluded.role;
    END IF;
    PERFORM gwdesk_audit(
        CASE WHEN NEW.opted_out = 1 THEN 'opted out' ELSE 'opted back in' END
            || CASE WHEN NEW.how = 'import' THEN ' (import)' ELSE '' END
            || CASE WHEN NEW.applied = 0 THEN ' (no change)' ELSE '' END,
        NEW.number,
        CASE WHEN customer THEN 'replied ' || NEW.keyword ELSE NEW.reason END,
        CASE WHEN customer THEN NULL ELSE NEW.by_whom END);
    RETURN NEW;
END $$;
CREATE TRIGGER optout_changes_added BEFORE INSERT ON optout_changes
    FOR EACH ROW EXECUTE FUNCTION gwdesk_optout_change();

-- The team's settings, each checked; the only way a group changes one.
{settings_function(SETTING_CHECKS, SETTING_HINTS)}

-- A typing note or a console's presence: the server's clock and login, never the client's.
CREATE FUNCTION gwdesk_console_seen() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    NEW.operator := gwdesk_named(NEW.operator);
    NEW.seen_at := gwdesk_now();
    IF TG_OP = 'INSERT' THEN
        NEW.started_at := gwdesk_now();
        NEW.role := session_user;
    ELSE
        NEW.started_at := OLD.started_at;
        NEW.role := OLD.role;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER consoles_seen BEFORE INSERT OR UPDATE ON consoles
    FOR EACH ROW EXECUTE FUNCTION gwdesk_console_seen();
CREATE FUNCTION gwdesk_claim_held() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    NEW.operator := gwdesk_named(NEW.operator);
    NEW.until_us := least(NEW.until_us, gwdesk_now_us() + 60000000);
    NEW.role := CASE WHEN TG_OP = 'INSERT' THEN session_user::text ELSE OLD.role END;
    RETURN NEW;
END $$;
CREATE TRIGGER claims_held BEFORE INSERT OR UPDATE ON claims
    FOR EACH ROW EXECUTE FUNCTION gwdesk_claim_held();
ALTER TABLE consoles ENABLE ROW LEVEL SECURITY;
CREATE POLICY consoles_read ON consoles FOR SELECT USING (true);
CREATE POLICY consoles_own_added ON consoles FOR INSERT WITH CHECK (role = session_user);
CREATE POLICY consoles_own_changed ON consoles FOR UPDATE USING (role = session_user);
CREATE POLICY consoles_own_removed ON consoles FOR DELETE USING (role = session_user);
ALTER TABLE claims ENABLE ROW LEVEL SECURITY;
CREATE POLICY claims_read ON claims FOR SELECT USING (true);
CREATE POLICY claims_own_added ON claims FOR INSERT WITH CHECK (role = session_user);
CREATE POLICY claims_own_changed ON claims FOR UPDATE USING (role = session_user);
CREATE POLICY claims_own_or_lapsed_removed ON claims FOR DELETE
    USING (role = session_user OR until_us <= gwdesk_now_us());

-- A batch names who recorded it; a reply, once stored, is only ever completed.
CREATE FUNCTION gwdesk_batch_recorded() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    NEW.operator := CASE WHEN TG_OP = 'INSERT' THEN gwdesk_named(NEW.operator)
                         ELSE OLD.operator END;
    RETURN NEW;
END $$;
CREATE TRIGGER outbox_batches_recorded BEFORE INSERT OR UPDATE ON outbox_batches
    FOR EACH ROW EXECUTE FUNCTION gwdesk_batch_recorded();
CREATE FUNCTION gwdesk_reply_completed() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    NEW.sent_at := coalesce(OLD.sent_at, NEW.sent_at);
    NEW.message_id := coalesce(OLD.message_id, NEW.message_id);
    NEW.reply_id := coalesce(OLD.reply_id, NEW.reply_id);
    NEW.keyword := coalesce(OLD.keyword, NEW.keyword);
    RETURN NEW;
END $$;
CREATE TRIGGER replies_completed BEFORE UPDATE ON replies
    FOR EACH ROW EXECUTE FUNCTION gwdesk_reply_completed();

-- Templates are the team's wording: each change audited.
CREATE FUNCTION gwdesk_template_changed() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM gwdesk_audit('template removed', OLD.name, OLD.text);
        RETURN OLD;
    END IF;
    PERFORM gwdesk_audit(CASE WHEN TG_OP = 'INSERT' THEN 'template added'
                              ELSE 'template changed' END, NEW.name, NEW.text);
    RETURN NEW;
END $$;
CREATE TRIGGER templates_audited AFTER INSERT OR UPDATE OR DELETE ON templates
    FOR EACH ROW EXECUTE FUNCTION gwdesk_template_changed();

-- Every column the consoles read, checked on every write from now on.
ALTER TABLE history
    ADD CONSTRAINT history_at_checked CHECK (gwdesk_is_time(at)) NOT VALID,
    ADD CONSTRAINT history_ok_checked CHECK (ok IN (0, 1)) NOT VALID,
    ADD CONSTRAINT history_lengths_checked CHECK (
        char_length(channel) BETWEEN 1 AND 100 AND char_length(operator) <= 200) NOT VALID;
ALTER TABLE replies
    ADD CONSTRAINT replies_times_checked CHECK (
        gwdesk_is_time(received_at) AND gwdesk_is_time(stored_at)
        AND (sent_at IS NULL OR gwdesk_is_time(sent_at))) NOT VALID,
    ADD CONSTRAINT replies_source_checked
        CHECK (source IN ('webhook', 'keyword', 'backfill')) NOT VALID;
{_optout_checks("optouts", "opted_out IN (0, 1)")}
{_optout_checks("optout_changes", "opted_out IN (0, 1) AND applied IN (0, 1)")}
ALTER TABLE settings
    ADD CONSTRAINT settings_name_checked CHECK (name IN ({names_listed(_STEP_2_SETTINGS)})) NOT VALID;
ALTER TABLE audit
    ADD CONSTRAINT audit_at_checked CHECK (gwdesk_is_time(at)) NOT VALID,
    ADD CONSTRAINT audit_lengths_checked CHECK (
        char_length(operator) <= 200 AND char_length(console) <= 100
        AND char_length(action) BETWEEN 1 AND 100) NOT VALID;
ALTER TABLE consoles
    ADD CONSTRAINT consoles_times_checked
        CHECK (gwdesk_is_time(started_at) AND gwdesk_is_time(seen_at)) NOT VALID,
    ADD CONSTRAINT consoles_lengths_checked CHECK (
        char_length(id) BETWEEN 1 AND 100 AND char_length(operator) <= 200
        AND char_length(host) <= 200 AND char_length(version) <= 40) NOT VALID;
ALTER TABLE claims
    ADD CONSTRAINT claims_checked CHECK (
        until_us > 0 AND char_length(subject) BETWEEN 1 AND 200
        AND char_length(console) <= 100 AND char_length(operator) <= 200) NOT VALID;
ALTER TABLE outbox_batches
    ADD CONSTRAINT outbox_batches_checked CHECK (
        closed IN (0, 1) AND char_length(channel) BETWEEN 1 AND 40) NOT VALID;
ALTER TABLE outbox_entries
    ADD CONSTRAINT outbox_entries_checked CHECK (
        attempts >= 0 AND found >= 0 AND retryable IN (0, 1) AND own_id IN (0, 1)
        AND recipient_count >= 0) NOT VALID;
ALTER TABLE templates
    ADD CONSTRAINT templates_checked CHECK (char_length(name) BETWEEN 1 AND 80) NOT VALID;

CREATE TRIGGER operators_changed AFTER INSERT OR UPDATE OR DELETE ON operators
    FOR EACH STATEMENT EXECUTE FUNCTION gwdesk_changed();

-- No one but the owner runs these; the groups are given three of them by `team init`.
-- (The checks' and policies' own helpers stay callable: a constraint runs as the writer.)
REVOKE EXECUTE ON FUNCTION gwdesk_may(text), gwdesk_named(text), gwdesk_operator(),
    gwdesk_audit(text, text, text, text),
    gwdesk_history_added(), gwdesk_optout_change(), gwdesk_set(text, text),
    gwdesk_console_seen(), gwdesk_claim_held(), gwdesk_batch_recorded(),
    gwdesk_reply_completed(), gwdesk_template_changed(), gwdesk_changed() FROM PUBLIC;
"""  # noqa: S608 - constant SQL: the names interpolated are this module's own

# Scheduled sends gwdesk holds (`outbox_holds.py`): a batch waits until `held_until_us`.
# Whoever moves, rewrites or cancels a send still waiting (theirs or a colleague's) is
# audited under their own login; the hold's end (its time came) is not a change of plan.
HELD_SENDS: Final = f"""
ALTER TABLE outbox_batches ADD COLUMN held_until_us BIGINT;
ALTER TABLE outbox_batches ADD COLUMN recurrence TEXT NOT NULL DEFAULT ''
    CONSTRAINT outbox_batches_recurrence_checked CHECK (char_length(recurrence) <= 2000);
CREATE INDEX outbox_batches_held ON outbox_batches(gateway, held_until_us)
    WHERE held_until_us IS NOT NULL AND closed = 0;
CREATE FUNCTION gwdesk_held_changed() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    IF OLD.held_until_us IS NULL OR OLD.closed = 1 THEN
        RETURN NEW;
    ELSIF NEW.closed = 1 THEN
        PERFORM gwdesk_audit('scheduled send cancelled', OLD.label, OLD.send_id);
    ELSIF NEW.held_until_us IS NULL THEN
        RETURN NEW;
    ELSIF NEW.held_until_us <> OLD.held_until_us THEN
        PERFORM gwdesk_audit('scheduled send moved', NEW.label,
            to_char(to_timestamp(OLD.held_until_us / 1e6) AT TIME ZONE 'UTC',
                    'YYYY-MM-DD"T"HH24:MI"Z"') || ' -> ' ||
            to_char(to_timestamp(NEW.held_until_us / 1e6) AT TIME ZONE 'UTC',
                    'YYYY-MM-DD"T"HH24:MI"Z"'));
    ELSIF NEW.label IS DISTINCT FROM OLD.label OR NEW.updated_us <> OLD.updated_us THEN
        PERFORM gwdesk_audit('scheduled send changed', NEW.label, OLD.label);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER outbox_batches_held AFTER UPDATE ON outbox_batches
    FOR EACH ROW EXECUTE FUNCTION gwdesk_held_changed();
REVOKE EXECUTE ON FUNCTION gwdesk_held_changed() FROM PUBLIC;

-- The office's sending hours (quiet hours), team settings like the others.
{settings_function(SETTING_CHECKS + HOURS_CHECKS, SETTING_HINTS + HOURS_HINTS)}
ALTER TABLE settings DROP CONSTRAINT settings_name_checked;
ALTER TABLE settings
    ADD CONSTRAINT settings_name_checked CHECK (name IN ({names_listed(STEP_3_SETTING_NAMES)})) NOT VALID;
"""
