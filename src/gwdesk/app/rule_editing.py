"""Keeping a profile's keyword rules: the flow the rules editor and `gwdesk rules` share.

The rules are a team setting (`REPLY_RULES`): on a team's server `gwdesk_set` checks
their shape and audits each change under the changer's login; every change here is
checked whole first (`domain.reply_rules`), against the opt-out keywords too. A rule
that forwards gets a signing secret, made here and kept in this machine's keyring only;
`add` returns it once, for the endpoint's owner (another machine that runs the rules,
the office's receiver, is given it with `set_secret`). `test` says what a reply would
set off, without acting.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from gwdesk.domain.errors import InputRefused
from gwdesk.domain.models import Secret
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.profile import Profile
from gwdesk.domain.reply_rules import Do, Draft, Rule, RuleSet, rules_from_json
from gwdesk.domain.settings import OPT_IN_KEYWORDS, OPT_OUT_KEYWORDS, REPLY_RULES
from gwdesk.profiles import KeyringUnavailable, PasswordVault
from gwdesk.store.rule_runs import FAILED as FAILED
from gwdesk.store.rule_runs import WAITING as WAITING
from gwdesk.store.rule_runs import Forward as Forward
from gwdesk.store.rule_runs import RuleRun as RuleRun
from gwdesk.store.rule_runs import RuleRuns
from gwdesk.store.stored_settings import StoredSettings

SECRET_BYTES = 32


class RuleSecrets:
    """A profile's rules' signing secrets in this machine's keyring (`get`, `set`,
    `delete` by rule name); the profile's vault and name are bound by the caller."""

    def __init__(
        self,
        get: Callable[[str], Secret | None],
        put: Callable[[str, Secret], None],
        delete: Callable[[str], None],
    ) -> None:
        self.get = get
        self.put = put
        self.delete = delete

    def key_of(self, rule: str) -> bytes | None:
        """The rule's secret as a signing key (None: none kept here, or no keyring here:
        the forward then fails saying so)."""
        try:
            found = self.get(rule)
        except KeyringUnavailable:
            return None
        return None if found is None else found.reveal().encode()


def rule_secrets(vault: PasswordVault, profile: Profile) -> RuleSecrets:
    """`profile`'s rules' secrets in `vault` (the system keyring, or a test's)."""
    return RuleSecrets(
        lambda rule: vault.get_rule_secret(profile, rule),
        lambda rule, secret: vault.set_rule_secret(profile, rule, secret),
        lambda rule: vault.delete_rule_secret(profile, rule),
    )


@dataclass(frozen=True, slots=True)
class Added:
    rule: Rule
    secret: Secret | None
    """A forwarding rule's new signing secret: shown once, kept in the keyring only."""


@dataclass(frozen=True, slots=True)
class Tested:
    rule: Rule | None
    said: str
    """What a reply of that text would set off (plain text)."""


@dataclass(frozen=True, slots=True)
class RulesFlow:
    settings: StoredSettings
    secrets: RuleSecrets | None = None
    runs: RuleRuns | None = None

    def keywords(self) -> Keywords:
        opt_out: tuple[str, ...] = self.settings.get(OPT_OUT_KEYWORDS)
        opt_in: tuple[str, ...] = self.settings.get(OPT_IN_KEYWORDS)
        return Keywords(opt_out, opt_in)

    def rules(self) -> RuleSet:
        """The profile's rules now (a value no gwdesk would write reads as none)."""
        return rules_from_json(self.settings.get(REPLY_RULES))

    def _save(self, rules: RuleSet) -> None:
        self.settings.set(REPLY_RULES, rules.to_json())

    def add(self, draft: Draft, *, at: int | None = None) -> Added:
        """Check and keep a new rule (at position `at`, 1 first; else last)."""
        rule = draft.rule(self.keywords())
        rules = self.rules().with_rule(rule, self.keywords(), None if at is None else at - 1)
        secret = None
        if rule.action(Do.FORWARD) is not None:
            secret = Secret(secrets.token_urlsafe(SECRET_BYTES))
            self._keep(rule.name, secret)
        self._save(rules)
        return Added(rule, secret)

    def remove(self, name: str) -> Rule:
        rules = self.rules()
        found = rules.one(name)
        self._save(rules.without(name))
        if self.secrets is not None:
            self.secrets.delete(found.name)
        return found

    def move(self, name: str, to: int) -> RuleSet:
        """Put rule `name` at position `to` (1 first)."""
        rules = self.rules()
        found = rules.one(name)
        moved = rules.without(name).with_rule(found, None, to - 1)
        self._save(moved)
        return moved

    def turn(self, name: str, on: bool) -> Rule:
        rules = self.rules()
        found = rules.one(name)
        changed = Rule(found.name, found.match, found.value, found.actions, on)
        position = rules.rules.index(found)
        self._save(rules.without(name).with_rule(changed, None, position))
        return changed

    def set_secret(self, name: str, secret: Secret) -> None:
        """Keep rule `name`'s signing secret on this machine (the receiver's, say)."""
        self.rules().one(name)
        if len(secret.reveal()) < 16:
            raise InputRefused("secret", "A signing secret has at least 16 characters.")
        self._keep(name, secret)

    def _keep(self, name: str, secret: Secret) -> None:
        if self.secrets is None:
            raise InputRefused("forward", "No keyring here to keep a forward's secret in.")
        try:
            self.secrets.put(name, secret)
        except KeyringUnavailable:
            raise InputRefused(
                "forward",
                "No system keyring here to keep the forward's signing secret in: add the "
                "rule at a desk that has one (the receiver may take it from "
                "GWDESK_RULE_SECRET).",
            ) from None

    def test(self, text: str) -> Tested:
        """What a reply of `text` would set off now, acting on nothing."""
        keywords = self.keywords()
        reading = keywords.read(text)
        if reading is not None and reading.intent.value in ("opt-out", "opt-in"):
            return Tested(None, f"{reading.intent.value} keyword {reading.keyword}: no rule runs")
        rule = self.rules().first(text, keywords)
        if rule is None:
            return Tested(None, "no rule matches")
        return Tested(rule, rule.describe())

    def runs_done(self, limit: int = 100) -> list[RuleRun]:
        return [] if self.runs is None else self.runs.recent(limit)

    def forwards(self, *, state: str | None = None, limit: int = 100) -> list[Forward]:
        return [] if self.runs is None else self.runs.forwards(state=state, limit=limit)
