"""The outbox in the console: the check at each start and the Outbox window."""
