"""Whatever a Lodge service answers, the parsers return a typed result or a `GatewayError`.

Property-based: random text, random bytes posing as XML, and random result documents
(known and unknown elements, any text in them) never escape as another exception, and
a well-formed success keeps its values.
"""

from __future__ import annotations

from collections.abc import Callable
from xml.sax.saxutils import escape

from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.models import LodgeResult, LodgeResults, LodgeText, MessageStatus
from gwdesk.gateway.errors import GatewayError
from gwdesk.gateway.lodge import catalog as ops
from gwdesk.gateway.lodge import results

XML_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40,
).filter(lambda t: all(c in "\t\n\r" or ord(c) >= 0x20 for c in t))
FIELD_NAMES = st.sampled_from(
    ["Result", "ErrorMsg", "MsgID", "PhoneNumber", "Status", "DateLodged", "DateSent", "Extra"]
)
ROOTS = st.sampled_from(["LodgeResult", "LodgeResults", "MessageStatus", "Other"])
XML_OPERATIONS = st.sampled_from(
    [
        ops.LODGE_SMS_WITH_REPLY_XML,
        ops.GET_MESSAGE_STATUS_XML,
        ops.LODGE_XML,
        ops.LODGE_MULTI_MMS_XML,
    ]
)


def outcome(call: Callable[[], object]) -> object:
    """What a parser returned, or the `GatewayError` it raised; anything else escapes."""
    try:
        return call()
    except GatewayError as exc:
        return exc


def fields_xml(fields: list[tuple[str, str]]) -> str:
    return "".join(f"<{name}>{escape(value)}</{name}>" for name, value in fields)


@st.composite
def documents(draw: st.DrawFn) -> str:
    root = draw(ROOTS)
    if root == "LodgeResults":
        items = draw(st.lists(st.lists(st.tuples(FIELD_NAMES, XML_TEXT), max_size=5), max_size=4))
        inner = "".join(f"<LodgeResult>{fields_xml(i)}</LodgeResult>" for i in items)
        return f"<LodgeResults>{inner}</LodgeResults>"
    fields = draw(st.lists(st.tuples(FIELD_NAMES, XML_TEXT), max_size=8))
    return f"<{root}>{fields_xml(fields)}</{root}>"


@given(st.one_of(st.none(), st.text(max_size=200)))
def test_any_text_answer_is_a_lodge_text_or_a_gateway_error(text: str | None) -> None:
    found = outcome(lambda: results.text_result(text, ops.LODGE_SMS))
    if isinstance(found, GatewayError):
        assert found.message  # a refusal always says what was wrong
    else:
        assert found == LodgeText(operation="LodgeSMSMessage", text="Message sent successfully.")


@given(st.text(max_size=300), XML_OPERATIONS)
def test_any_string_posing_as_a_result_document_is_parsed_or_refused(
    value: str, operation: ops.Operation
) -> None:
    found = outcome(lambda: results.xml_result(results.result_element(value, operation), operation))
    if isinstance(found, GatewayError):
        assert found.message
    else:
        assert isinstance(found, LodgeResult | LodgeResults | MessageStatus)


@given(documents(), XML_OPERATIONS)
def test_any_result_document_is_a_typed_result_or_a_gateway_error(
    document: str, operation: ops.Operation
) -> None:
    found = outcome(
        lambda: results.xml_result(results.result_element(document, operation), operation)
    )
    if isinstance(found, GatewayError):
        assert found.message
    else:
        assert isinstance(found, LodgeResult | LodgeResults | MessageStatus)


@given(st.integers(min_value=0, max_value=2**40), XML_TEXT)
def test_a_successful_result_keeps_its_message_id(msg_id: int, error_msg: str) -> None:
    document = (
        f"<LodgeResult><Result>0</Result><ErrorMsg>{escape(error_msg)}</ErrorMsg>"
        f"<MsgID>{msg_id}</MsgID></LodgeResult>"
    )
    element = results.result_element(document, ops.LODGE_SMS_WITH_REPLY_XML)
    found = results.xml_result(element, ops.LODGE_SMS_WITH_REPLY_XML)
    assert isinstance(found, LodgeResult)
    assert found.ok
    assert found.msg_id == str(msg_id)
