"""Keyword rules as the domain checks and matches them (pure: no store, no gateway)."""

from __future__ import annotations

import json

import pytest

from gwdesk.domain.errors import InputRefused
from gwdesk.domain.optout_words import DEFAULT_OPT_IN, DEFAULT_OPT_OUT, Keywords
from gwdesk.domain.reply_rules import (
    MATCHED_TEXT,
    Draft,
    Match,
    RuleSet,
    glob_match,
    rules_from_json,
)

KEYWORDS = Keywords(DEFAULT_OPT_OUT, DEFAULT_OPT_IN)


def hours(**changes: object) -> Draft:
    fields: dict[str, object] = {
        "name": "hours",
        "match": "whole",
        "value": "HOURS",
        "reply": "We are open 9 to 5, Monday to Friday.",
    }
    fields.update(changes)
    return Draft(**fields)  # type: ignore[arg-type]


def test_a_whole_rule_matches_the_reply_that_is_only_its_word_in_any_case() -> None:
    rule = hours().rule(KEYWORDS)
    assert rule.matches("hours?")
    assert rule.matches(" Hours ")
    assert not rule.matches("hours please")


def test_a_first_word_rule_matches_a_reply_that_starts_with_its_word() -> None:
    rule = hours(match="first word").rule(KEYWORDS)
    assert rule.matches("Hours please")
    assert not rule.matches("your hours")


def test_a_pattern_rule_matches_wildcards_over_the_whole_reply() -> None:
    rule = hours(match="pattern", value="*refund*").rule(KEYWORDS)
    assert rule.matches("Can I get a REFUND today")
    assert not rule.matches("refun d")


def test_the_first_matching_rule_acts_and_later_ones_are_not_looked_at() -> None:
    rules = (
        RuleSet()
        .with_rule(hours().rule(KEYWORDS))
        .with_rule(
            hours(name="any", match="pattern", value="*", reply="", tag="other").rule(KEYWORDS)
        )
    )
    assert rules.first("HOURS", KEYWORDS).name == "hours"  # type: ignore[union-attr]
    assert rules.first("hello", KEYWORDS).name == "any"  # type: ignore[union-attr]


def test_an_opt_out_reply_runs_no_rule_even_one_that_matches_everything() -> None:
    rules = RuleSet().with_rule(hours(match="pattern", value="*", reply="", tag="t").rule(KEYWORDS))
    assert rules.first("Stop!", KEYWORDS) is None
    assert rules.first("START", KEYWORDS) is None


def test_a_rule_cannot_take_an_opt_out_keyword() -> None:
    with pytest.raises(InputRefused) as refused:
        hours(value="stop").rule(KEYWORDS)
    assert refused.value.field == "value"
    assert "STOP handling comes first" in refused.value.message


def test_an_automatic_reply_that_would_match_its_own_rule_is_refused_with_why() -> None:
    with pytest.raises(InputRefused) as refused:
        hours(match="first word", reply="Hours: 9 to 5").rule(KEYWORDS)
    assert refused.value.field == "reply"
    assert "loop" in refused.value.message


def test_a_catch_all_rule_cannot_reply_automatically_since_its_reply_would_match_it() -> None:
    with pytest.raises(InputRefused) as refused:
        hours(match="pattern", value="*", reply="Thanks, we got it").rule(KEYWORDS)
    assert refused.value.field == "reply"


def test_a_pattern_with_too_many_wildcards_is_refused() -> None:
    with pytest.raises(InputRefused, match="wildcards"):
        hours(match="pattern", value="*a" * 11).rule(KEYWORDS)


def test_a_pattern_that_would_backtrack_exponentially_in_a_regex_engine_is_matched_in_bounded_steps() -> (
    None
):
    # (a*)*b-style: every star retried against a long run of a's. The greedy matcher
    # retries only the last star, so this ends (and says no) after at most len(p)*len(t).
    pattern = "*a*a*a*a*a*a*a*a*a*b"
    assert not glob_match(pattern, "a" * MATCHED_TEXT)
    assert glob_match(pattern, "a" * 500 + "b")


def test_regex_syntax_in_a_pattern_is_matched_literally() -> None:
    rule = hours(match="pattern", value="(a+)+$", reply="ok").rule(KEYWORDS)
    assert rule.matches("(A+)+$")
    assert not rule.matches("aaaa")


def test_a_forward_goes_to_https_or_to_this_machine_only() -> None:
    assert hours(reply="", forward="https://crm.example.org/in").rule(KEYWORDS)
    assert hours(reply="", forward="http://127.0.0.1:9000/in").rule(KEYWORDS)
    with pytest.raises(InputRefused, match="https"):
        hours(reply="", forward="http://crm.example.org/in").rule(KEYWORDS)


def test_a_forward_address_with_a_password_in_it_is_refused() -> None:
    with pytest.raises(InputRefused, match="password"):
        hours(reply="", forward="https://user:pw@crm.example.org/in").rule(KEYWORDS)


@pytest.mark.parametrize("name", ["\x1b[31mred", "tab\there", "new\nline"])
def test_a_rule_name_with_control_characters_is_refused(name: str) -> None:
    with pytest.raises(InputRefused) as refused:
        hours(name=name).rule(KEYWORDS)
    assert refused.value.field == "name"


def test_markup_in_a_rule_stays_the_text_it_was_typed_as() -> None:
    rule = hours(name="<b>VIP</b>", reply="<i>soon</i>").rule(KEYWORDS)
    assert rule.describe().startswith("<b>VIP</b>: ")
    assert "'<i>soon</i>'" in rule.describe()


def test_a_state_a_rule_cannot_set_is_refused() -> None:
    with pytest.raises(InputRefused) as refused:
        hours(reply="", state="snoozed").rule(KEYWORDS)
    assert refused.value.field == "state"


def test_two_rules_cannot_share_a_name_in_any_case() -> None:
    rules = RuleSet().with_rule(hours().rule(KEYWORDS))
    with pytest.raises(InputRefused, match="already"):
        rules.with_rule(hours(name="HOURS", value="open").rule(KEYWORDS))


def test_rules_read_back_as_they_were_kept() -> None:
    rules = RuleSet().with_rule(hours(assign="Sam", tag="info", per_day=3).rule(KEYWORDS))
    assert rules_from_json(json.dumps(rules.to_json())) == rules


@pytest.mark.parametrize(
    "kept",
    [
        {"name": "x"},
        [{"name": "x", "match": "regex", "value": "a", "actions": []}],
        [{"name": "x", "match": "whole", "value": "a", "actions": [{"do": "reply", "value": 5}]}],
        [
            {
                "name": "a\x00",
                "match": "whole",
                "value": "a",
                "actions": [{"do": "tag", "value": "t"}],
            }
        ],
        [{"name": "x", "match": "whole", "value": "a", "actions": [{"do": "tag", "value": "t"}]}]
        * 2,
    ],
)
def test_a_hostile_kept_value_is_refused_whole(kept: object) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        rules_from_json(kept)


def test_a_rule_matches_by_the_kinds_it_names() -> None:
    with pytest.raises(InputRefused) as refused:
        hours(match="regex").rule(KEYWORDS)
    assert refused.value.field == "match"
    assert Match.PATTERN.value in refused.value.message
