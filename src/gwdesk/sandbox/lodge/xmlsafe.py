"""Hardened XML parsing for everything the Lodge service reads from the wire.

DTDs are refused outright (before libxml2 sees them, and again if one slips past),
so entity expansion (billion laughs) and external entities (XXE) cannot happen; the
parser also has entity resolution, DTD loading and network access switched off.

Why a TreeBuilder target rather than the plain parser: libxml2 caps one text node at
10,000,000 bytes unless `huge_tree` is on, yet a 10 MB fax file (the contract's limit)
is 13.4 MB of base64 in one element. With a target, lxml assembles text itself while
every other libxml2 limit (nesting depth, name lengths) stays in force, and elements
are counted as they arrive so an absurd document is dropped early.
"""

from __future__ import annotations

import re
from typing import Any, Final

from lxml import etree

MAX_ELEMENTS: Final = 5000
"""Elements in one request; a full `<Lodge>` document of 100 MMS needs about 800."""

_DTD_RE: Final = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_DECLARED_ENCODING_RE: Final = re.compile(
    rb"\A(?:\xef\xbb\xbf)?\s*<\?xml[^>]*?\sencoding\s*=\s*[\"']([^\"']*)[\"']"
)


class XmlRefused(ValueError):
    """The input is not XML this service accepts; `message` says why, for the caller."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Builder(etree.TreeBuilder):
    """A TreeBuilder that counts elements and refuses a DOCTYPE it is shown."""

    def __init__(self, max_elements: int) -> None:
        super().__init__()
        self.count = 0
        self.max_elements = max_elements
        self.refusal: str | None = None

    def start(self, tag: Any, attrs: Any, nsmap: Any = None) -> Any:
        self.count += 1
        if self.count > self.max_elements:
            self.refusal = f"more than {self.max_elements} XML elements; that is not accepted"
            raise XmlRefused(self.refusal)
        if nsmap:
            # The parser reports the default namespace under "", TreeBuilder wants None.
            nsmap = {prefix or None: uri for prefix, uri in nsmap.items()}
        return super().start(tag, attrs, nsmap)  # type: ignore[call-arg]  # stubs lack nsmap

    def doctype(self, *_args: Any) -> None:
        self.refusal = "a DTD (DOCTYPE); DTDs and entity declarations are not accepted"
        raise XmlRefused(self.refusal)


def _describe(entry: Any) -> str:
    return f"{entry.message.strip()} (line {entry.line}, column {entry.column})"


def check_text(data: bytes, what: str) -> None:
    """Refuse DTDs and anything but UTF-8 before the parser runs."""
    if _DTD_RE.search(data):
        raise XmlRefused(f"{what} contains a DTD or entity declaration; they are not accepted.")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise XmlRefused(
            f"{what} is not UTF-8 text (invalid byte at offset {exc.start}); send UTF-8."
        ) from None
    declared = _DECLARED_ENCODING_RE.match(data)
    if declared and declared.group(1).lower() not in (b"utf-8", b"utf8"):
        name = declared.group(1).decode("ascii", "replace")[:20]
        raise XmlRefused(f"{what} declares encoding {name!r}; only UTF-8 is accepted.")


def parse(data: bytes, what: str, max_elements: int = MAX_ELEMENTS) -> etree._Element:
    """Parse one XML document, or raise XmlRefused with a reason fit to show the caller."""
    check_text(data, what)
    builder = _Builder(max_elements)
    parser = etree.XMLParser(
        target=builder,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        dtd_validation=False,
    )
    root: etree._Element | None
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, XmlRefused, ValueError):
        root = None
    if builder.refusal is not None:
        raise XmlRefused(f"{what} contains {builder.refusal}.")
    errors = [e for e in parser.error_log if e.level >= etree.ErrorLevels.ERROR]
    if errors:
        raise XmlRefused(f"{what} is not well-formed XML: {_describe(errors[0])}.")
    if root is None:
        raise XmlRefused(f"{what} is not well-formed XML.")
    return root


def local_name(element: etree._Element) -> str:
    """The element's name without its namespace ("" for comments and PIs)."""
    if not isinstance(element.tag, str):
        return ""
    return etree.QName(element).localname


def namespace(element: etree._Element) -> str | None:
    return etree.QName(element).namespace


def elements(parent: etree._Element) -> list[etree._Element]:
    """The element children, skipping comments and processing instructions."""
    return [child for child in parent if isinstance(child.tag, str)]


def text_of(element: etree._Element) -> str:
    """An element's own text, joined across comments or PIs inside it."""
    parts = [element.text or ""]
    parts.extend(child.tail or "" for child in element)
    return "".join(parts)
