"""pydantic models of what the legacy `Lodge` service answers.

Text operations answer a sentence (`Message sent successfully.` or `Error: ...`);
XML operations answer `LodgeResult`, `LodgeResults` (one `LodgeResult` per message
of a `<Lodge>` document) or `MessageStatus`. The gateway layer reads the XML into
plain dicts of child texts and validates them here, so unknown child elements are
kept (`extra="allow"`) and a date the client cannot read stays the text it was.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final

from pydantic import BeforeValidator, Field, ValidationInfo

from gwdesk.domain.models.wire import WireModel, _aware

#: The text a Lodge text operation answers when it lodged the message.
SUCCESS_TEXT: Final = "Message sent successfully."
RESULT_OK: Final = 0
RESULT_AUTH: Final = 1
RESULT_INVALID: Final = 2
RESULT_NOT_FOUND: Final = 3


def _empty_is_none(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _legacy_time(value: Any, info: ValidationInfo) -> Any:
    """A time when it reads as ISO 8601; empty is None; anything else stays text."""
    value = _empty_is_none(value)
    if isinstance(value, str):
        parsed = _aware(value, info)
        return parsed if isinstance(parsed, datetime) else value.strip()
    return value


OptionalText = Annotated[str | None, BeforeValidator(_empty_is_none)]
LegacyTime = Annotated[datetime | str | None, BeforeValidator(_legacy_time)]


class LodgeText(WireModel):
    """The answer of a text operation; it is only returned when it says the message went."""

    operation: str
    text: str

    @property
    def ok(self) -> bool:
        return self.text.strip() == SUCCESS_TEXT


class LodgeResult(WireModel):
    """`<LodgeResult>`: `Result` 0 is success, more is a failure `ErrorMsg` explains."""

    result: int = Field(alias="Result")
    error_msg: str = Field(default="", alias="ErrorMsg")
    msg_id: OptionalText = Field(default=None, alias="MsgID")

    @property
    def ok(self) -> bool:
        return self.result == RESULT_OK


class LodgeResults(WireModel):
    """The outcome of a `<Lodge>` document: one result per message, in document order.

    Each message succeeds or fails on its own, so a document can be lodged in part.
    """

    operation: str
    results: tuple[LodgeResult, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def lodged(self) -> int:
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> tuple[tuple[int, LodgeResult], ...]:
        """(1-based message number, result) of each message that was not lodged."""
        return tuple((i, r) for i, r in enumerate(self.results, 1) if not r.ok)

    @property
    def msg_ids(self) -> tuple[str, ...]:
        return tuple(r.msg_id for r in self.results if r.ok and r.msg_id)


class MessageStatus(WireModel):
    """`GetMessageStatusXML`: the status of one message lodged through Lodge."""

    result: int = Field(alias="Result")
    error_msg: str = Field(default="", alias="ErrorMsg")
    msg_id: OptionalText = Field(default=None, alias="MsgID")
    phone_number: OptionalText = Field(default=None, alias="PhoneNumber")
    status: OptionalText = Field(default=None, alias="Status")
    """`ACTIVE`, `DELIVERED`, `FAILED` or any other value, shown verbatim."""
    date_lodged: LegacyTime = Field(default=None, alias="DateLodged")
    date_sent: LegacyTime = Field(default=None, alias="DateSent")
