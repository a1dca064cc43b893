"""The Send tab: one message to one recipient."""
