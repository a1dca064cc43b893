"""The Status tab: message status by MessageId, BatchCode or ExternalSystemId."""
