"""Replies in the console: the hub, the live table, conversations and the listener's controls."""
