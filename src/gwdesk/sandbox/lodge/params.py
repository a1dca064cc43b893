"""An operation's parameters as the ports hand them over, with typed, checked access.

Ports differ in what they can deliver: SOAP decodes `base64Binary` elements itself
(bytes) and passes `docXML` as a parsed element, while the HTTP ports only have strings.
The getters accept every form and raise `FieldError` for a value the operation must
answer with its own failure shape (for instance base64 that arrived as a string).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

from lxml import etree

from gwdesk.sandbox.lodge import xmlsafe
from gwdesk.sandbox.validation import FieldError

Value = str | bytes | etree._Element


def decode_base64(text: str | bytes, field: str) -> bytes:
    """Standard base64; whitespace (MIME line breaks) is ignored, padding is required."""
    raw = text.encode("ascii", "replace") if isinstance(text, str) else text
    compact = b"".join(raw.split())
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise FieldError(field, f"{field} is not valid base64.") from None


class Params:
    """Named parameter values of one call; a missing parameter reads as None."""

    def __init__(self, values: Mapping[str, Value | None]) -> None:
        self._values = dict(values)

    def text(self, name: str) -> str | None:
        value = self._values.get(name)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, bytes):
            raise FieldError(name, f"{name} must be text.")
        return xmlsafe.text_of(value)

    def binary(self, name: str) -> bytes | None:
        value = self._values.get(name)
        if value is None or isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return decode_base64(value, name)
        return decode_base64(xmlsafe.text_of(value), name)

    def document(self, name: str) -> etree._Element | None:
        """The XML document in `name`: an element as sent, or a string parsed safely."""
        value = self._values.get(name)
        if value is None:
            return None
        if isinstance(value, bytes):
            raise FieldError(name, f"{name} must be an XML document.")
        if isinstance(value, str):
            if not value.strip():
                return None
            try:
                return xmlsafe.parse(value.encode("utf-8"), name)
            except xmlsafe.XmlRefused as exc:
                raise FieldError(name, exc.message) from None
        return value
