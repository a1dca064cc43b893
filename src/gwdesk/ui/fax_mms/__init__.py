"""The Fax / MMS tab and its attachments."""
