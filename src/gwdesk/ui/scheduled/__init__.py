"""The Scheduled tab: sends gwdesk holds for later, listed and changed until they go, and
the session's serving of them while the console is open."""
