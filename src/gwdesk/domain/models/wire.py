"""pydantic models of everything the REST `/v2/` interface sends back.

The real gateway may add fields or status values this client has never seen, so
every model keeps unknown fields (`extra="allow"`) and statuses stay plain strings
with the known values as constants. Times become aware datetimes; a time without
an offset is read in the gateway account's zone when the caller passes it as the
validation context (`{"zone": ZoneInfo(...)}`), else as UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from decimal import Decimal
from typing import Annotated, Any, Final

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    ValidationInfo,
)

from gwdesk.domain.models.secret import Secret

#: Status values the contract names; any other value is shown verbatim.
ACTIVE: Final = "ACTIVE"
DELIVERED: Final = "DELIVERED"
FAILED: Final = "FAILED"
KNOWN_STATUSES: Final = (ACTIVE, DELIVERED, FAILED)
SUCCESS: Final = "Success"


def _zone(info: ValidationInfo) -> tzinfo:
    context = info.context
    if isinstance(context, dict):
        zone = context.get("zone")
        if isinstance(zone, tzinfo):
            return zone
    return UTC


def _aware(value: Any, info: ValidationInfo) -> Any:
    """Parse ISO 8601 text; attach the account's zone to a time that has no offset."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = datetime.fromisoformat(
                text.replace("Z", "+00:00") if text.endswith("Z") else text
            )
        except ValueError:
            return value  # pydantic then reports it as not a datetime
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=_zone(info))
    return value


def _maybe_time(value: Any, info: ValidationInfo) -> Any:
    """A field the spec leaves untyped: a time when it reads as one, else the value as sent."""
    if isinstance(value, str):
        parsed = _aware(value, info)
        return parsed if isinstance(parsed, datetime) else value
    return value


AwareTime = Annotated[datetime, BeforeValidator(_aware)]
MaybeTime = Annotated[datetime | bool | int | str | None, BeforeValidator(_maybe_time)]


class WireModel(BaseModel):
    """Tolerant of additions; immutable once read."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


class Message(WireModel):
    """One message as send results and status queries describe it."""

    phone_number: str = Field(alias="PhoneNumber")
    message_id: str = Field(alias="MessageId")
    status: str = Field(alias="Status")
    external_system_id: str | None = Field(default=None, alias="ExternalSystemId")
    tags: str | None = Field(default=None, alias="Tags")


class StatusList(RootModel[list[Message]]):
    """The status endpoint's answer: a JSON array of messages."""


class SendData(WireModel):
    message: Message | None = Field(default=None, alias="Message")
    batch_code: str | None = Field(default=None, alias="BatchCode")


class SendEnvelope(WireModel):
    """The success envelope of `simple_send` and `send`."""

    data: SendData = Field(alias="Data")
    status: str = Field(alias="Status")
    status_code: int = Field(alias="StatusCode")


class FailureDetail(WireModel):
    field: str | None = Field(default=None, alias="Field")
    message: str = Field(default="", alias="Message")


class FailureEnvelope(WireModel):
    """The contract's failure envelope (`Status` "Failed", `Errors[]`)."""

    data: Any = Field(default=None, alias="Data")
    status: str = Field(default="Failed", alias="Status")
    status_code: int | None = Field(default=None, alias="StatusCode")
    errors: list[FailureDetail] = Field(default_factory=list, alias="Errors")


class LogRecord(WireModel):
    """One item of the log listing, with every field of the spec's table."""

    message_id: str = Field(alias="messageId")
    status: str
    date_sent: AwareTime | None = Field(default=None, alias="dateSent")
    date_lodged: AwareTime = Field(alias="dateLodged")
    delivery_receipt_received: MaybeTime = Field(default=None, alias="deliveryReceiptReceived")
    sender: str | None = None
    costcentre: str | None = None
    from_: str | None = Field(default=None, alias="from")
    to: str | None = None
    subject: str | None = None
    message: str | None = None
    parts: int | None = None
    type: str | None = None
    senderid: int | None = None
    senderserviceid: int | None = None
    replytype: str | None = None
    replypath: str | None = None
    tracking_id: str | None = Field(default=None, alias="trackingId")
    batch_tracking_id: str | None = Field(default=None, alias="batchTrackingId")


class LogListing(WireModel):
    total_records: int = Field(alias="totalRecords")
    messages: list[LogRecord] = Field(default_factory=list)


class Token(WireModel):
    """An OAuth access token; the token itself is a `Secret` so it never prints."""

    access_token: Secret
    token_type: str = "bearer"  # noqa: S105 - the scheme name, not a secret
    expires_in: int
    scope: str | None = None
    issued: str | None = Field(default=None, alias=".issued")
    expires: str | None = Field(default=None, alias=".expires")


class TokenErrorBody(WireModel):
    """RFC 6749 section 5.2."""

    error: str
    error_description: str | None = None


class Balance(WireModel):
    balance: Decimal = Field(alias="Balance")
    currency: str | None = Field(default=None, alias="Currency")
    message_credits: int | None = Field(default=None, alias="MessageCredits")


class AccountInfo(WireModel):
    """`GET /v2/Account/Info` (the real service's): a bare object, not an envelope.

    `MessageCredits` comes only for a prepaid account. `AccountType` is required: an
    answer without it is not this resource's, and must not read as "no credits".
    """

    account_name: str | None = Field(default=None, alias="AccountName")
    account_status: str | None = Field(default=None, alias="AccountStatus")
    account_type: str = Field(alias="AccountType")
    message_credits: int | None = Field(default=None, alias="MessageCredits")


class BalanceEnvelope(WireModel):
    data: Balance = Field(alias="Data")
    status: str = Field(default=SUCCESS, alias="Status")
    status_code: int = Field(default=200, alias="StatusCode")


class Reply(WireModel):
    """A customer's reply as the backfill listing gives it."""

    message_id: str | None = Field(default=None, alias="MessageId")
    from_: str = Field(alias="From")
    to: str = Field(alias="To")
    message_text: str = Field(default="", validation_alias=AliasChoices("MessageText", "Message"))
    date_received: AwareTime = Field(alias="DateReceived")


class RepliesPage(WireModel):
    items: list[Reply] = Field(alias="Items")
    """Required: an answer without it is not a page, and must not read as "no replies"."""
    page_number: int = Field(default=1, alias="PageNumber")
    page_size: int | None = Field(default=None, alias="PageSize")
    total_records: int = Field(default=0, alias="TotalRecords")
    total_pages: int = Field(default=0, alias="TotalPages")
