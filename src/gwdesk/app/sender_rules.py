"""What to tell the operator about a sender as it is typed: ACMA's rules, and replies.

`gwdesk.domain.sender_id` reads a sender by ACMA's Sender ID rules; here those notes
meet the message around it. A marketing message from a name is an error (its "Reply
STOP" could reach nobody: `check_message` refuses it with the same words), and a
two-way message from a name gets a warning (the customer cannot answer a name, so
no reply will come). The compose forms show these at the sender field while it is
typed; `gwdesk send --from` prints the warnings. Errors here are what
`gwdesk.app.sms.check_message` refuses, so a form never says less than a send would.
"""

from __future__ import annotations

from dataclasses import dataclass

from gwdesk.app.sms import check_marketing_sender
from gwdesk.domain.errors import ValidationError
from gwdesk.domain.sender_id import SenderKind, check_sender_id

NO_REPLIES = (
    "Replies cannot come back to a sender name: the customer sees it but cannot answer it. "
    "Use a number (or leave From empty) to receive replies."
)


@dataclass(frozen=True, slots=True)
class SenderNotes:
    """Errors (the send will be refused) and warnings (it goes, but see why)."""

    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """Every note, errors first, one a line."""
        return "\n".join((*self.errors, *self.warnings))


def sender_notes(
    sender: str, region: str, *, marketing: bool = False, two_way: bool = False
) -> SenderNotes:
    """The notes on `sender` (empty: the account's own number, nothing to say)."""
    if not sender.strip():
        return SenderNotes()
    found = check_sender_id(sender, region)
    errors, warnings = list(found.errors), list(found.warnings)
    if found.kind is SenderKind.NAME:
        if marketing:
            try:
                check_marketing_sender(sender, region, "Source")
            except ValidationError as exc:
                errors.append(exc.message)
        elif two_way:
            warnings.append(NO_REPLIES)
    return SenderNotes(tuple(errors), tuple(warnings))
