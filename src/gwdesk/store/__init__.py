"""Local SQLite stores of the console: drafts, sent history (and later outbox, replies, logs)."""
