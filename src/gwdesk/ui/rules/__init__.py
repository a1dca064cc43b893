"""The keyword rules editor: the rules in order, a new rule's form, a forward's secret
shown once, and what the rules did (`gwdesk.app.rule_editing.RulesFlow` does the work)."""
