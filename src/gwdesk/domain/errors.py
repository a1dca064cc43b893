"""Errors an operator can act on, whichever layer finds them.

The gateway raises them for what it answered (or failed to answer), and the application
core raises the same ones for what it refuses before any request (a value, naming its
wire field, as the gateway would), so a form points at its input either way. They
live in the domain so the core takes them from here, not from the gateway. Each carries `.message` in plain language, fit to show as is in a dialog or on a
command line's stderr; none ever holds a password or a token. `maybe_processed`
tells the send logic whether the gateway may have done the work even though the
caller saw a failure: such a send must be settled by a status query, never resent
blindly. The store's errors (`StoreError` and its kinds) are here for the same reason:
every layer catches them, whichever engine sits below the store.
"""

from __future__ import annotations

from collections.abc import Sequence


class GatewayError(Exception):
    """Base of every failure the gateway layer reports."""

    kind = "error"

    def __init__(
        self, message: str, *, status: int | None = None, maybe_processed: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        """The HTTP status when an answer came back; None for connection trouble."""
        self.maybe_processed = maybe_processed

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r})"


class AuthenticationError(GatewayError):
    """The gateway refused the credentials or the token (after one fresh try)."""

    kind = "authentication"


class ValidationError(GatewayError):
    """The gateway (or the client, before sending) refused a value; `field` names it."""

    kind = "validation"

    def __init__(self, message: str, *, field: str | None = None, status: int | None = 400) -> None:
        super().__init__(message, status=status)
        self.field = field


class InvalidRecipientsError(ValidationError):
    """Recipients refused before any request; `rejected` lists (index, text, reason)."""

    def __init__(self, rejected: Sequence[tuple[int, str, str]]) -> None:
        shown = "; ".join(f"#{i + 1} {text[:30]!r}: {reason}" for i, text, reason in rejected[:5])
        more = f" (and {len(rejected) - 5} more)" if len(rejected) > 5 else ""
        count = len(rejected)
        noun = "recipient is" if count == 1 else "recipients are"
        super().__init__(
            f"{count} {noun} not usable, so nothing was sent: {shown}{more}.",
            field="Recipients",
            status=None,
        )
        self.rejected = tuple(rejected)


class NotFoundError(GatewayError):
    """No such message, batch or endpoint."""

    kind = "not_found"


class RateLimitedError(GatewayError):
    """The gateway asked the client to slow down; `retry_after` is in seconds when given."""

    kind = "rate_limited"

    def __init__(self, message: str, *, retry_after: float | None, status: int = 429) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class TransientError(GatewayError):
    """Server trouble or connection trouble that may pass; trying again later can work."""

    kind = "transient"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        maybe_processed: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, maybe_processed=maybe_processed)
        self.retry_after = retry_after
        """Seconds the gateway asked to wait (a 503 may say), when it did."""


class ProtocolError(GatewayError):
    """An answer the client cannot read: an HTML page, broken JSON, the wrong shape, too big."""

    kind = "protocol"


class AmbiguousSendError(GatewayError):
    """A send whose outcome could not be learnt: it may or may not have been lodged."""

    kind = "ambiguous"

    def __init__(
        self, message: str, *, external_system_id: str | None, recipients: Sequence[str]
    ) -> None:
        super().__init__(message, maybe_processed=True)
        self.external_system_id = external_system_id
        self.recipients = tuple(recipients)


class InputRefused(ValueError):
    """What the operator typed cannot be kept: `field` names where to point (as the form
    knows it), `message` says what to fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class StoreError(Exception):
    """The local store cannot be used; the message says what to do.

    Every store method raises this family, never the engine's own errors, so the
    console and the command line catch one thing whichever database sits below.
    """


class StoreUnavailable(StoreError):
    """The file cannot be read or written now (locked, full, gone, damaged): every
    other change would fail the same way."""


class StoreBusy(StoreUnavailable):
    """Another program held the file's write lock longer than the store waits."""


class ReadInterrupted(StoreUnavailable):
    """A read was stopped on purpose (a newer one superseded it); nothing is wrong."""
