"""The Batch tab: one message to a list, in requests of 100."""
