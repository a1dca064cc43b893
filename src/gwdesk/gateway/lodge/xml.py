"""Reading the Lodge service's XML safely, and keeping what we send XML-clean.

An answer is untrusted: it may be a proxy's HTML page, a truncated document, or a
hostile one (a DTD with entity expansion, "billion laughs"). No Lodge answer ever
needs a DTD, so any `<!DOCTYPE` or `<!ENTITY` is refused before parsing; the parser
itself resolves no entities, loads nothing from the network and keeps libxml2's
size limits (no `huge_tree`). Answers are bounded in size before they get here.
"""

from __future__ import annotations

import re
from typing import Final

from lxml import etree

from gwdesk.gateway.errors import ProtocolError, ValidationError

#: A Lodge answer is a sentence or a few dozen elements; a WSDL is tens of KB.
MAX_ANSWER_BYTES: Final = 1024 * 1024
MAX_WSDL_BYTES: Final = 8 * 1024 * 1024
_DECLARATION_RE: Final = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_HTML_RE: Final = re.compile(rb"^\s*(?:<\?xml[^>]*>\s*)?<(?:!doctype\s+html|html\b)", re.IGNORECASE)
_XML_INVALID_RE: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def looks_like_html(body: bytes, content_type: str = "") -> bool:
    return "html" in content_type or bool(_HTML_RE.match(body[:512]))


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def parse(
    body: bytes, what: str, *, status: int | None = 200, maybe_processed: bool = True
) -> etree._Element:
    """The root element of `body`, or a `ProtocolError` that says what came instead.

    `maybe_processed` is passed on to the error: an unreadable answer to a send
    leaves open whether the gateway lodged it.
    """

    def refuse(reason: str) -> ProtocolError:
        return ProtocolError(
            f"{what} could not be read: {reason}.", status=status, maybe_processed=maybe_processed
        )

    if not body.strip():
        raise refuse("it is empty")
    if looks_like_html(body):
        raise refuse("it is a web page, not XML (probably a proxy or server error page)")
    if _DECLARATION_RE.search(body):
        raise refuse("it declares a DTD or entities, which the service never sends")
    try:
        root = etree.fromstring(body, parser=_parser())
    except etree.XMLSyntaxError as exc:
        raise refuse(f"it is not well-formed XML ({str(exc)[:120]})") from None
    except (ValueError, LookupError) as exc:  # e.g. an unknown encoding declaration
        raise refuse(f"it is not readable XML ({str(exc)[:120]})") from None
    return root


def local_name(element: etree._Element) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


def namespace_of(element: etree._Element) -> str | None:
    tag = element.tag
    if isinstance(tag, str) and tag.startswith("{"):
        return tag[1:].partition("}")[0]
    return None


def children(element: etree._Element) -> list[etree._Element]:
    """Child elements only (no comments or processing instructions)."""
    return [child for child in element if isinstance(child.tag, str)]


def text_of(element: etree._Element) -> str:
    """All text inside `element`, its descendants' included."""
    return "".join(t if isinstance(t, str) else t.decode() for t in element.itertext())


def child_texts(element: etree._Element) -> dict[str, str]:
    """{local name: text} of the child elements; a repeated name keeps its first value."""
    found: dict[str, str] = {}
    for child in children(element):
        found.setdefault(local_name(child), text_of(child))
    return found


def clean_text(value: str, field: str) -> str:
    """`value` if XML 1.0 can carry it; control characters are refused, naming `field`."""
    bad = _XML_INVALID_RE.search(value)
    if bad is not None:
        code = ord(bad.group())
        raise ValidationError(
            f"{field} contains the character U+{code:04X}, which cannot be sent.",
            field=field,
            status=None,
        )
    return value
