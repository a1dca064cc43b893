"""Lodge answers into typed results, and failures into errors an operator can act on.

Text results: `Message sent successfully.` is success; `Error: <reason>` is a
failure whose reason is shown; any other text is a failure too (as the public
clients of the real service treat it), shown verbatim. XML results carry a
`Result` code: 0 success, 1 credentials, 2 an invalid value, 3 an unknown MsgID;
any other code is a failure explained by `ErrorMsg`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, TypeVar

import pydantic
from lxml import etree

from gwdesk.domain.models import (
    SUCCESS_TEXT,
    LodgeResult,
    LodgeResults,
    LodgeText,
    MessageStatus,
)
from gwdesk.domain.models.lodge import RESULT_AUTH, RESULT_INVALID, RESULT_NOT_FOUND
from gwdesk.gateway.errors import (
    AuthenticationError,
    GatewayError,
    NotFoundError,
    ProtocolError,
    ValidationError,
)
from gwdesk.gateway.lodge.catalog import Operation, ResultKind
from gwdesk.gateway.lodge.xml import child_texts, children, local_name, parse

M = TypeVar("M", bound=pydantic.BaseModel)
MAX_SHOWN: Final = 300
_AUTH_HINTS: Final = ("username or password", "user name or password", "credentials")
#: Element names of `<Lodge>` documents, which the gateway's reasons may start with.
_DOCUMENT_FIELDS: Final = ("PhoneNumber", "Text", "Subject", "Attachment", "Type", "Messages")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _unreadable(operation: Operation, reason: str) -> ProtocolError:
    return ProtocolError(
        f"The answer of {operation.name} could not be read: {reason}.",
        status=200,
        maybe_processed=operation.sends,
    )


def _field(reason: str, operation: Operation) -> str | None:
    """The request field a reason names, when it starts with one (`PhoneNumber must ...`)."""
    text = reason
    if text.startswith("Message ") and ":" in text:
        text = text.partition(":")[2].strip()
    first = text.split(" ", 1)[0].rstrip(".,:;") if text else ""
    known = (*operation.params, *_DOCUMENT_FIELDS)
    return first if first in known else None


def failure(code: int | None, reason: str, operation: Operation) -> GatewayError:
    """The error for a refusal: by `Result` code, or by the reason's words for text results."""
    reason = _clip(reason) or "no reason given"
    if code == RESULT_AUTH or (
        code is None and any(hint in reason.lower() for hint in _AUTH_HINTS)
    ):
        return AuthenticationError(
            f"The Lodge service did not accept the credentials: {reason}", status=None
        )
    if code == RESULT_NOT_FOUND:
        return NotFoundError(f"The Lodge service does not know that message: {reason}")
    if code is None or code == RESULT_INVALID:
        return ValidationError(
            f"The Lodge service refused {operation.name}: {reason}",
            field=_field(reason, operation),
            status=None,
        )
    return GatewayError(f"The Lodge service refused {operation.name} (Result {code}): {reason}")


def text_result(text: str | None, operation: Operation) -> LodgeText:
    """The success sentence as a `LodgeText`; anything else raises."""
    shown = (text or "").strip()
    if shown == SUCCESS_TEXT:
        return LodgeText(operation=operation.name, text=shown)
    if shown[:6].lower() == "error:":
        raise failure(None, shown[6:].strip(), operation)
    raise GatewayError(
        f"The Lodge service did not confirm {operation.name}: it answered "
        f"{_clip(shown)!r} instead of {SUCCESS_TEXT!r}."
    )


def _model(model: type[M], values: dict[str, object], operation: Operation) -> M:
    try:
        return model.model_validate(values)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        raise _unreadable(operation, f"{where}: {first['msg']}") from None


def _expect(element: etree._Element, names: Iterable[str], operation: Operation) -> str:
    name = local_name(element)
    if name not in names:
        raise _unreadable(operation, f"it is <{name[:60]}>, not <{'> or <'.join(names)}>")
    return name


def read_result(element: etree._Element, operation: Operation) -> LodgeResult:
    _expect(element, ("LodgeResult",), operation)
    return _model(LodgeResult, dict(child_texts(element)), operation)


def result(element: etree._Element, operation: Operation) -> LodgeResult:
    """A successful `LodgeResult`; a failure raises the error its code stands for."""
    found = read_result(element, operation)
    if not found.ok:
        raise failure(found.result, found.error_msg, operation)
    return found


def results(element: etree._Element, operation: Operation) -> LodgeResults:
    """Per-message results; a failure of the whole document (credentials, ...) raises.

    The gateway answers a document that failed as a whole with a single result whose
    reason does not start with `Message 1:` (per-message reasons do).
    """
    name = _expect(element, ("LodgeResults", "LodgeResult"), operation)
    items = [element] if name == "LodgeResult" else children(element)
    read = tuple(read_result(item, operation) for item in items)
    if not read:
        raise _unreadable(operation, "it holds no <LodgeResult>")
    if len(read) == 1 and not read[0].ok:
        only = read[0]
        if only.result == RESULT_AUTH or not only.error_msg.startswith("Message 1:"):
            raise failure(only.result, only.error_msg, operation)
    return LodgeResults(operation=operation.name, results=read)


def status(element: etree._Element, operation: Operation) -> MessageStatus:
    _expect(element, ("MessageStatus",), operation)
    found = _model(MessageStatus, dict(child_texts(element)), operation)
    if found.result != 0:
        raise failure(found.result, found.error_msg, operation)
    return found


def xml_result(
    element: etree._Element, operation: Operation
) -> LodgeResult | LodgeResults | MessageStatus:
    if operation.result is ResultKind.RESULT:
        return result(element, operation)
    if operation.result is ResultKind.RESULTS:
        return results(element, operation)
    if operation.result is ResultKind.STATUS:
        return status(element, operation)
    raise _unreadable(operation, "a text operation answered with XML")


def result_element(value: object, operation: Operation) -> etree._Element:
    """The result document, whichever form the port delivered it in."""
    if isinstance(value, etree._Element):
        return value
    if isinstance(value, str):
        return parse(
            value.encode("utf-8"),
            f"The answer of {operation.name}",
            maybe_processed=operation.sends,
        )
    inner: Any = getattr(value, "_value_1", None)
    if inner is not None:
        return result_element(inner, operation)
    if isinstance(value, list):
        elements = [v for v in value if isinstance(v, etree._Element)]
        if len(elements) == 1:
            return elements[0]
        if all(isinstance(v, str) for v in value):
            return result_element("".join(value), operation)
    raise ProtocolError(
        f"The answer of {operation.name} holds no XML result.",
        status=200,
        maybe_processed=operation.sends,
    )
