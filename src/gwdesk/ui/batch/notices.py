"""Where the Batch tab says what went wrong: at the field at fault, or on its error line.

A refusal the flow or the gateway names by field is shown at that field (the
recipients, or the message's text, From, Send at, replies, tags, Marketing);
anything else on the totals' error line. Before each new attempt every one of them
is cleared.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from gwdesk.app.list_send import GatewayError, ValidationError
from gwdesk.ui.batch.compose import BatchCompose
from gwdesk.ui.batch.recipients import RecipientsPanel
from gwdesk.ui.batch.totals import TotalsPanel
from gwdesk.ui.plain_text import PlainLabel

RECIPIENT_FIELDS = ("Recipients", "Recipient")


class Outcomes(QObject):
    """What a part of the tab that works as a task says it came to, each said where the
    tab says such things: a line beside the totals, an error, a refusal at its field."""

    said = Signal(str, str)
    """(the line, its role)"""
    failed = Signal(str)
    refused = Signal(object)
    """A `ValidationError` naming the field at fault."""


class Notices:
    """The tab's refusals and errors, each where it belongs."""

    def __init__(
        self,
        recipients: RecipientsPanel,
        compose: BatchCompose,
        totals: TotalsPanel,
        template_note: PlainLabel,
    ) -> None:
        self.recipients = recipients
        self.compose = compose
        self.totals = totals
        self.template_note = template_note

    def clear(self) -> None:
        self.totals.clear_error()
        self.template_note.hide()
        self.recipients.clear_error()
        self.compose.clear_errors()

    def error(self, message: str) -> None:
        self.totals.show_error(message)

    def refused(self, exc: GatewayError) -> None:
        """At the field the refusal names, else on the error line."""
        field = exc.field if isinstance(exc, ValidationError) else None
        if field in RECIPIENT_FIELDS:
            self.recipients.show_error(exc.message)
        elif not self.compose.show_error(field, exc.message):
            self.totals.show_error(exc.message)
