"""Keyword rules on a team's server: schema step 5 (version 4 → 5) of `pg_schema`.

The rules themselves are a team setting (`replies.rules`), changed only through
`gwdesk_set`, which checks their shape and audits every change. What they did is kept
by the server's rules, not the runner's word (`store/rule_runs.py` is the client's side):

- `rule_runs`: one row per reply acted on (its key makes "exactly once" the server's).
  The runner's name, login and time are stamped by the server; afterwards a login
  may only say what its own run did (`outcome`) or that its automatic reply did not
  go; nobody deletes a run, so no desk can reset a customer's daily limit;
- `rule_forwards`: the forward queue; any runner may attempt a waiting forward (the
  receiver takes over a console's), but what is forwarded, where, and for which reply
  never changes once queued;
- `conversation_tags`: written only by `gwdesk_conversation_tag`, audited;
- `gwdesk_conversation` is now callable by the receiver too (its rules assign and set
  states), audited under the receiver's own name like an operator's change.
"""

from __future__ import annotations

from typing import Final

from gwdesk.store.pg_conversations import conversation_function
from gwdesk.store.pg_rules import (
    HOURS_CHECKS,
    HOURS_HINTS,
    SETTING_CHECKS,
    SETTING_HINTS,
    STEP_3_SETTING_NAMES,
    names_listed,
    settings_function,
)

_DEFINER: Final = "SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp"
RULES_SETTING: Final = "replies.rules"
SETTING_NAMES: Final = (*STEP_3_SETTING_NAMES, RULES_SETTING)
"""The team's settings from this step on: the only rows the server's `settings` table holds."""

_TEXT_FIELD = "jsonb_typeof(r -> '{key}') = 'string' AND char_length(r ->> '{key}') <= {limit}"
_RULES_CHECKS: Final = f"""\
        WHEN '{RULES_SETTING}' THEN
            jsonb_typeof(parsed) = 'array' AND jsonb_array_length(parsed) <= 50
            AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(parsed) r WHERE NOT (
                jsonb_typeof(r) = 'object'
                AND {_TEXT_FIELD.format(key="name", limit=60)}
                AND r ->> 'name' !~ '[[:cntrl:]]' AND btrim(r ->> 'name') <> ''
                AND r ->> 'match' IN ('whole', 'first word', 'pattern')
                AND {_TEXT_FIELD.format(key="value", limit=200)}
                AND jsonb_typeof(r -> 'actions') = 'array'
                AND jsonb_array_length(r -> 'actions') BETWEEN 1 AND 5
                AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(r -> 'actions') a WHERE NOT (
                    jsonb_typeof(a) = 'object'
                    AND a ->> 'do' IN ('reply', 'assign', 'state', 'tag', 'forward')
                    AND jsonb_typeof(a -> 'value') = 'string'
                    AND char_length(a ->> 'value') BETWEEN 1 AND 612))))
"""  # noqa: S608 - constant SQL
_RULES_HINTS: Final = f"""\
                WHEN '{RULES_SETTING}' THEN ' (at most 50 rules, each named, matching and doing 1 to 5 things)'
"""

REPLY_RULES_STEP: Final = f"""
CREATE TABLE rule_runs (
    reply_id BIGINT PRIMARY KEY,
    number TEXT NOT NULL CHECK (char_length(number) <= 64),
    rule TEXT NOT NULL CHECK (char_length(rule) <= 60),
    runner TEXT NOT NULL CHECK (char_length(runner) <= 200),
    role TEXT NOT NULL DEFAULT session_user,
    at_us BIGINT NOT NULL,
    replied INTEGER NOT NULL DEFAULT 0 CHECK (replied IN (0, 1)),
    outcome TEXT NOT NULL DEFAULT '' CHECK (char_length(outcome) <= 500)
);
CREATE INDEX rule_runs_replied ON rule_runs(number, at_us) WHERE replied = 1;
CREATE TABLE rule_forwards (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reply_id BIGINT NOT NULL UNIQUE,
    rule TEXT NOT NULL CHECK (char_length(rule) <= 60),
    url TEXT NOT NULL CHECK (char_length(url) <= 500),
    body TEXT NOT NULL CHECK (char_length(body) <= 20000),
    state TEXT NOT NULL CHECK (state IN ('waiting', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 1000),
    next_us BIGINT NOT NULL,
    last_error TEXT NOT NULL DEFAULT '' CHECK (char_length(last_error) <= 500),
    changed_us BIGINT NOT NULL,
    role TEXT NOT NULL DEFAULT session_user
);
CREATE INDEX rule_forwards_waiting ON rule_forwards(next_us) WHERE state = 'waiting';
CREATE TABLE conversation_tags (
    number TEXT NOT NULL CHECK (number ~ '^[0-9]{{1,32}}$'),
    tag TEXT NOT NULL CHECK (char_length(tag) BETWEEN 1 AND 40 AND tag !~ '[[:cntrl:]]'),
    added_by TEXT NOT NULL,
    added_at TEXT NOT NULL CHECK (gwdesk_is_time(added_at)),
    PRIMARY KEY (number, tag)
);

-- A run is stamped by the server; afterwards only what it did may be said, by its login.
CREATE FUNCTION gwdesk_rule_run() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.runner := gwdesk_named(NEW.runner);
        NEW.role := session_user;
        NEW.at_us := gwdesk_now_us();
    ELSE
        IF NEW.replied > OLD.replied THEN
            RAISE EXCEPTION 'a run''s automatic reply is counted when it is claimed'
                USING ERRCODE = 'check_violation';
        END IF;
        NEW.reply_id := OLD.reply_id;
        NEW.number := OLD.number;
        NEW.rule := OLD.rule;
        NEW.runner := OLD.runner;
        NEW.role := OLD.role;
        NEW.at_us := OLD.at_us;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER rule_runs_stamped BEFORE INSERT OR UPDATE ON rule_runs
    FOR EACH ROW EXECUTE FUNCTION gwdesk_rule_run();
ALTER TABLE rule_runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY rule_runs_read ON rule_runs FOR SELECT USING (true);
CREATE POLICY rule_runs_own_added ON rule_runs FOR INSERT WITH CHECK (role = session_user);
CREATE POLICY rule_runs_own_told ON rule_runs FOR UPDATE USING (role = session_user);

-- A forward, once queued, goes to the same place with the same body; attempts are anyone's.
CREATE FUNCTION gwdesk_rule_forward() RETURNS trigger LANGUAGE plpgsql {_DEFINER} AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.role := session_user;
        NEW.state := 'waiting';
        NEW.attempts := 0;
        NEW.changed_us := gwdesk_now_us();
    ELSE
        IF OLD.state <> 'waiting' THEN
            RAISE EXCEPTION 'a forward delivered or failed stays so'
                USING ERRCODE = 'check_violation';
        END IF;
        NEW.reply_id := OLD.reply_id;
        NEW.rule := OLD.rule;
        NEW.url := OLD.url;
        NEW.body := OLD.body;
        NEW.role := OLD.role;
        NEW.attempts := greatest(NEW.attempts, OLD.attempts);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER rule_forwards_kept BEFORE INSERT OR UPDATE ON rule_forwards
    FOR EACH ROW EXECUTE FUNCTION gwdesk_rule_forward();
ALTER TABLE rule_forwards ENABLE ROW LEVEL SECURITY;
CREATE POLICY rule_forwards_read ON rule_forwards FOR SELECT USING (true);
CREATE POLICY rule_forwards_own_added ON rule_forwards FOR INSERT WITH CHECK (role = session_user);
CREATE POLICY rule_forwards_attempted ON rule_forwards FOR UPDATE USING (true);

-- A conversation's tag: added by an operator or a rule, checked and audited.
CREATE FUNCTION gwdesk_conversation_tag(conv text, new_tag text)
    RETURNS void LANGUAGE plpgsql VOLATILE {_DEFINER} AS $$
DECLARE
    cleaned text := left(btrim(regexp_replace(coalesce(new_tag, ''), '[[:cntrl:]]', '', 'g')), 40);
BEGIN
    IF NOT (gwdesk_may('operators') OR gwdesk_may('receivers')) THEN
        RAISE EXCEPTION 'only an operator or the reply receiver tags a conversation'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF conv IS NULL OR conv !~ '^[0-9]{{1,32}}$' OR cleaned = '' THEN
        RAISE EXCEPTION 'a tag is a word or two on a customer''s number (digits only)'
            USING ERRCODE = 'check_violation';
    END IF;
    INSERT INTO conversation_tags(number, tag, added_by, added_at)
        VALUES (conv, cleaned, gwdesk_named(NULL), gwdesk_now())
        ON CONFLICT (number, tag) DO NOTHING;
    IF FOUND THEN
        PERFORM gwdesk_audit('conversation tagged', conv, cleaned);
    END IF;
END $$;

-- The receiver's rules assign and set states: audited under its own name.
{
    conversation_function(
        "(gwdesk_may('operators') OR gwdesk_may('receivers'))",
        "only an operator or the reply receiver changes a conversation",
        "OR REPLACE ",
    )
}

CREATE TRIGGER conversation_tags_changed AFTER INSERT OR UPDATE OR DELETE ON conversation_tags
    FOR EACH STATEMENT EXECUTE FUNCTION gwdesk_changed();
CREATE TRIGGER rule_forwards_changed AFTER INSERT OR UPDATE OR DELETE ON rule_forwards
    FOR EACH STATEMENT EXECUTE FUNCTION gwdesk_changed();

-- The keyword rules are a team setting like the others.
{
    settings_function(
        SETTING_CHECKS + HOURS_CHECKS + _RULES_CHECKS,
        SETTING_HINTS + HOURS_HINTS + _RULES_HINTS,
    )
}
ALTER TABLE settings DROP CONSTRAINT settings_name_checked;
ALTER TABLE settings
    ADD CONSTRAINT settings_name_checked CHECK (name IN ({names_listed(SETTING_NAMES)}))
    NOT VALID;

REVOKE EXECUTE ON FUNCTION gwdesk_rule_run(), gwdesk_rule_forward(),
    gwdesk_conversation_tag(text, text) FROM PUBLIC;
"""  # noqa: S608 - constant SQL
"""Step 5: keyword rules' runs, forwards and tags (see the module docstring)."""
