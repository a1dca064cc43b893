"""The HTTP GET and HTTP POST ports: `{legacy_url}/<Operation>` with plain parameters.

As ASP.NET does: every parameter must be present (empty is fine), a missing or
malformed one is an HTTP 500 whose text body names it, parameter names match without
regard to case, text results come wrapped as `<string xmlns="{namespace}">...</string>`
and XML results are the document itself, both `text/xml`.

`objFile*` are string arrays here: each may be given any number of times (none means
no file), and the values are joined in order before base64 decoding, so a client may
split one long base64 string wherever it likes.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qsl

from aiohttp import web
from lxml import etree

from gwdesk.sandbox.config import LODGE_PATH
from gwdesk.sandbox.http_util import BodyTooLarge, read_limited
from gwdesk.sandbox.lodge import operations
from gwdesk.sandbox.lodge.catalog import CATALOG, MAX_PARAMETERS, Kind, OperationSpec
from gwdesk.sandbox.lodge.params import Params, Value
from gwdesk.sandbox.lodge.results import Result, TextResult, xml_text
from gwdesk.sandbox.state import STATE

FORM_TYPE: Final = "application/x-www-form-urlencoded"
XML_TYPE: Final = "text/xml"


class PortError(Exception):
    """Answer with this status and a plain-text reason (ASP.NET answers 500)."""

    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def _spec(name: str) -> OperationSpec:
    spec = CATALOG.get(name) or next(
        (s for s in CATALOG.values() if s.name.lower() == name.lower()), None
    )
    if spec is None:
        raise PortError(
            f"Request format is unrecognized for URL unexpectedly ending in '/{name[:80]}'. "
            f"Operations: {', '.join(CATALOG)}."
        )
    if not spec.http:
        raise PortError(
            f"{spec.name} is offered over SOAP only; POST a SOAP envelope to {LODGE_PATH}."
        )
    return spec


def _parse(text: str, what: str) -> list[tuple[str, str]]:
    try:
        return parse_qsl(
            text,
            keep_blank_values=True,
            encoding="utf-8",
            errors="strict",
            max_num_fields=MAX_PARAMETERS,
        )
    except UnicodeDecodeError:
        raise PortError(f"The {what} has percent-encoded bytes that are not UTF-8.") from None
    except ValueError:
        raise PortError(
            f"The {what} has too many parameters; at most {MAX_PARAMETERS} are accepted."
        ) from None


async def _pairs(request: web.Request) -> list[tuple[str, str]]:
    if request.method == "GET":
        return _parse(request.raw_path.partition("?")[2], "query string")
    if request.content_type != FORM_TYPE:
        raise PortError(
            f"Content-Type must be {FORM_TYPE} for the HTTP POST port; "
            f"SOAP envelopes go to {LODGE_PATH}."
        )
    charset = request.charset
    if charset and charset.lower() not in ("utf-8", "utf8"):
        raise PortError(f"charset {charset[:40]!r} is not accepted; send UTF-8.")
    try:
        data = await read_limited(request, request.app[STATE].config.lodge_body_limit)
    except BodyTooLarge as exc:
        raise PortError(f"The request body is larger than {exc.limit:,} bytes.", 413) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PortError(f"The request body is not UTF-8 (invalid byte at {exc.start}).") from None
    return _parse(text, "form body")


def _values(spec: OperationSpec, pairs: list[tuple[str, str]]) -> dict[str, Value | None]:
    grouped: dict[str, list[str]] = {}
    for key, value in pairs:
        grouped.setdefault(key.lower(), []).append(value)
    values: dict[str, Value | None] = {}
    for param in spec.params:
        given = grouped.get(param.name.lower(), [])
        if param.kind is Kind.BINARY:
            values[param.name] = "".join(given) if given else None
            continue
        if not given:
            raise PortError(f"Missing parameter: {param.name}.")
        if len(given) > 1:
            raise PortError(
                f"Parameter {param.name} was given {len(given)} times; it takes one value."
            )
        values[param.name] = given[0]
    return values


def result_response(namespace: str, result: Result) -> web.Response:
    if isinstance(result, TextResult):
        # lxml-stubs lack the None key of a default namespace.
        root = etree.Element(f"{{{namespace}}}string", nsmap={None: namespace})  # type: ignore[dict-item]
        root.text = xml_text(result.text)
    else:
        root = result.root
    return web.Response(
        body=etree.tostring(root, xml_declaration=True, encoding="utf-8"),
        content_type=XML_TYPE,
        charset="utf-8",
    )


def _error(message: str, status: int) -> web.Response:
    return web.Response(text=message, status=status, content_type="text/plain", charset="utf-8")


async def handle(request: web.Request) -> web.StreamResponse:
    """GET or POST {legacy_url}/<Operation>."""
    state = request.app[STATE]
    try:
        spec = _spec(request.match_info["operation"])
        values = _values(spec, await _pairs(request))
        result = operations.run(state, spec.name, Params(values))
    except PortError as exc:
        return _error(exc.message, exc.status)
    except Exception:
        request.app.logger.exception("unexpected error in a Lodge HTTP call")
        return _error("The service could not process the request.", 500)
    return result_response(state.config.namespace, result)
