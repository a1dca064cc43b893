"""The gateway's errors, which live in `gwdesk.domain.errors` (the core raises them too).

Named here as well because the gateway package and the modules that only talk to it
(the console's status and log views, the command line) take them from their source.
"""

from __future__ import annotations

from gwdesk.domain.errors import (
    AmbiguousSendError,
    AuthenticationError,
    GatewayError,
    InvalidRecipientsError,
    NotFoundError,
    ProtocolError,
    RateLimitedError,
    TransientError,
    ValidationError,
)

__all__ = [
    "AmbiguousSendError",
    "AuthenticationError",
    "GatewayError",
    "InvalidRecipientsError",
    "NotFoundError",
    "ProtocolError",
    "RateLimitedError",
    "TransientError",
    "ValidationError",
]
