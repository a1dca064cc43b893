"""SOAP 1.1 and SOAP 1.2 at the service address: envelopes in, results or faults out.

The content type picks the version (`text/xml` is 1.1, `application/soap+xml` is 1.2)
and the body element picks the operation. A SOAPAction (the 1.1 header, or 1.2's
`action` content-type parameter) is optional, but when given it must name the body's
operation. Anything wrong with the request itself is an HTTP 500 SOAP Fault with code
`Client` (1.1) or `Sender` (1.2), a body over the size limit a 413 with the same fault;
a caller's bad parameter value is the operation's own failure result instead.
"""

from __future__ import annotations

import email.message
from dataclasses import dataclass
from typing import Final

from aiohttp import web
from lxml import etree

from gwdesk.sandbox.config import LODGE_PATH
from gwdesk.sandbox.http_util import BodyTooLarge, read_limited
from gwdesk.sandbox.lodge import operations, xmlsafe
from gwdesk.sandbox.lodge.catalog import CATALOG, MAX_PARAMETERS, Kind, OperationSpec
from gwdesk.sandbox.lodge.params import Params, Value, decode_base64
from gwdesk.sandbox.lodge.results import Result, TextResult, xml_text
from gwdesk.sandbox.lodge.xmlsafe import elements, local_name, namespace, text_of
from gwdesk.sandbox.state import STATE
from gwdesk.sandbox.validation import FieldError

SOAP11_ENV: Final = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12_ENV: Final = "http://www.w3.org/2003/05/soap-envelope"
XSI: Final = "http://www.w3.org/2001/XMLSchema-instance"
XSD: Final = "http://www.w3.org/2001/XMLSchema"
XML_NS: Final = "http://www.w3.org/XML/1998/namespace"
FORM_TYPE: Final = "application/x-www-form-urlencoded"


@dataclass(frozen=True, slots=True)
class SoapVersion:
    label: str
    envelope: str
    content_type: str
    sender: str
    receiver: str


SOAP11: Final = SoapVersion("SOAP 1.1", SOAP11_ENV, "text/xml", "Client", "Server")
SOAP12: Final = SoapVersion("SOAP 1.2", SOAP12_ENV, "application/soap+xml", "Sender", "Receiver")
VERSIONS: Final = {v.content_type: v for v in (SOAP11, SOAP12)}


class SoapFault(Exception):
    """Answer with a SOAP Fault: `code` is "sender", "receiver" or "MustUnderstand"."""

    def __init__(self, message: str, *, code: str = "sender", status: int = 500) -> None:
        super().__init__(message)
        self.message, self.code, self.status = message, code, status


# ---- responses -----------------------------------------------------------------------------


def _envelope(version: SoapVersion) -> tuple[etree._Element, etree._Element]:
    envelope = etree.Element(
        f"{{{version.envelope}}}Envelope",
        nsmap={"soap": version.envelope, "xsi": XSI, "xsd": XSD},
    )
    return envelope, etree.SubElement(envelope, f"{{{version.envelope}}}Body")


def _respond(version: SoapVersion, envelope: etree._Element, status: int) -> web.Response:
    return web.Response(
        body=etree.tostring(envelope, xml_declaration=True, encoding="utf-8"),
        status=status,
        content_type=version.content_type,
        charset="utf-8",
    )


def fault_response(
    version: SoapVersion, message: str, *, code: str = "sender", status: int = 500
) -> web.Response:
    envelope, body = _envelope(version)
    env = version.envelope
    fault = etree.SubElement(body, f"{{{env}}}Fault")
    name = {"sender": version.sender, "receiver": version.receiver}.get(code, code)
    if version is SOAP11:
        etree.SubElement(fault, "faultcode").text = f"soap:{name}"
        etree.SubElement(fault, "faultstring").text = xml_text(message)
    else:
        value = etree.SubElement(etree.SubElement(fault, f"{{{env}}}Code"), f"{{{env}}}Value")
        value.text = f"soap:{name}"
        text = etree.SubElement(etree.SubElement(fault, f"{{{env}}}Reason"), f"{{{env}}}Text")
        text.set(f"{{{XML_NS}}}lang", "en")
        text.text = xml_text(message)
    return _respond(version, envelope, status)


def result_response(
    version: SoapVersion, service_ns: str, spec: OperationSpec, result: Result
) -> web.Response:
    envelope, body = _envelope(version)
    if isinstance(result, TextResult):
        # The default namespace, as ASP.NET writes it; nothing namespace-less sits below.
        # (lxml-stubs lack the None key of a default namespace.)
        default_ns = {None: service_ns}
        response = etree.SubElement(
            body,
            f"{{{service_ns}}}{spec.name}Response",
            nsmap=default_ns,  # type: ignore[arg-type]
        )
        holder = etree.SubElement(response, f"{{{service_ns}}}{spec.name}Result")
        holder.text = xml_text(result.text)
    else:
        # A prefix, so the namespace-less result document below keeps no namespace.
        response = etree.SubElement(
            body, f"{{{service_ns}}}{spec.name}Response", nsmap={"tns": service_ns}
        )
        holder = etree.SubElement(response, f"{{{service_ns}}}{spec.name}Result")
        holder.append(result.root)
    return _respond(version, envelope, 200)


# ---- requests ------------------------------------------------------------------------------


def _content_type_params(header: str) -> dict[str, str]:
    message = email.message.Message()
    message["Content-Type"] = header
    params: dict[str, str] = {}
    for key, value in message.get_params(failobj=[])[1:]:
        params[key.lower()] = str(value).strip()
    return params


def _action(request: web.Request, ct_params: dict[str, str]) -> str:
    raw = ct_params.get("action") or request.headers.get("SOAPAction") or ""
    return raw.strip().strip('"').strip()


def _operation_element(root: etree._Element, version: SoapVersion) -> etree._Element:
    """The one element inside Body; also refuses headers that must be understood."""
    if local_name(root) != "Envelope" or namespace(root) != version.envelope:
        other = SOAP12 if version is SOAP11 else SOAP11
        if local_name(root) == "Envelope" and namespace(root) == other.envelope:
            raise SoapFault(
                f"A {other.label} envelope was sent as {version.content_type}; "
                f"send it as {other.content_type}."
            )
        raise SoapFault(
            f"The request is not a {version.label} envelope: the root element is "
            f"{str(root.tag)[:120]!r}, not {{{version.envelope}}}Envelope."
        )
    parts = elements(root)
    names = [(namespace(p), local_name(p)) for p in parts]
    env = version.envelope
    if names not in ([(env, "Body")], [(env, "Header"), (env, "Body")]):
        raise SoapFault(
            "The envelope must hold an optional Header and then one Body, nothing else."
        )
    if len(parts) == 2:
        for block in elements(parts[0]):
            if block.get(f"{{{env}}}mustUnderstand") in ("1", "true"):
                raise SoapFault(
                    f"Header block {str(block.tag)[:120]!r} must be understood; "
                    "this service understands no header blocks.",
                    code="MustUnderstand",
                )
    body = parts[-1]
    inside = elements(body)
    if len(inside) != 1 or text_of(body).strip():
        raise SoapFault(
            f"The SOAP Body must hold exactly one operation element; it holds {len(inside)}."
        )
    return inside[0]


def _spec(element: etree._Element, service_ns: str) -> OperationSpec:
    name = local_name(element)
    if namespace(element) != service_ns:
        raise SoapFault(
            f"{str(element.tag)[:160]!r} is not an operation of this service; its "
            f"operations are in namespace {service_ns!r}."
        )
    spec = CATALOG.get(name)
    if spec is None:
        raise SoapFault(
            f"Unknown operation {name[:80]!r}; this service offers {', '.join(CATALOG)}."
        )
    return spec


def _check_action(action: str, spec: OperationSpec, service_ns: str) -> None:
    expected = f"{service_ns}/{spec.name}"
    if not action or action == expected:
        return
    named = next((s.name for s in CATALOG.values() if f"{service_ns}/{s.name}" == action), None)
    if named is not None:
        raise SoapFault(f"The SOAPAction names {named} but the body holds {spec.name}.")
    raise SoapFault(
        f"The SOAPAction {action[:200]!r} is not an action of this service; "
        f"the action of {spec.name} is {expected!r}."
    )


def _value(child: etree._Element, kind: Kind, name: str) -> Value | None:
    if child.get(f"{{{XSI}}}nil") in ("true", "1"):
        return None
    inner = elements(child)
    if kind is Kind.DOCUMENT:
        if len(inner) > 1:
            raise SoapFault(f"{name} must hold one XML document, not {len(inner)} elements.")
        return inner[0] if inner else text_of(child)
    if inner:
        raise SoapFault(f"{name} must hold text, not XML elements.")
    if kind is Kind.BINARY:
        try:
            return decode_base64(text_of(child), name)
        except FieldError:
            raise SoapFault(f"{name} is not valid base64Binary.") from None
    return text_of(child)


def _values(
    element: etree._Element, spec: OperationSpec, service_ns: str
) -> dict[str, Value | None]:
    children = elements(element)
    if len(children) > MAX_PARAMETERS:
        raise SoapFault(
            f"{spec.name} was sent {len(children)} parameter elements; "
            f"at most {MAX_PARAMETERS} are accepted."
        )
    values: dict[str, Value | None] = {}
    for child in children:
        name = local_name(child)
        if namespace(child) != service_ns:
            raise SoapFault(
                f"Parameter element {name[:80]!r} must be in the service namespace "
                f"{service_ns!r}, like the operation element."
            )
        param = spec.param(name)
        if param is None:
            continue  # unknown elements are ignored, as ASP.NET does
        if name in values:
            raise SoapFault(f"Parameter {name} is given more than once.")
        values[name] = _value(child, param.kind, name)
    return values


async def _call(
    request: web.Request, version: SoapVersion, ct_params: dict[str, str]
) -> web.Response:
    state = request.app[STATE]
    charset = ct_params.get("charset")
    if charset and charset.lower() not in ("utf-8", "utf8"):
        raise SoapFault(f"charset {charset[:40]!r} is not accepted; send UTF-8.")
    try:
        data = await read_limited(request, state.config.lodge_body_limit)
    except BodyTooLarge as exc:
        raise SoapFault(
            f"The request body is larger than {exc.limit:,} bytes; it was not read.", status=413
        ) from None
    try:
        root = xmlsafe.parse(data, "The SOAP envelope")
    except xmlsafe.XmlRefused as exc:
        raise SoapFault(exc.message) from None
    service_ns = state.config.namespace
    element = _operation_element(root, version)
    spec = _spec(element, service_ns)
    _check_action(_action(request, ct_params), spec, service_ns)
    params = Params(_values(element, spec, service_ns))
    return result_response(version, service_ns, spec, operations.run(state, spec.name, params))


async def handle(request: web.Request) -> web.StreamResponse:
    """POST {legacy_url}: one SOAP 1.1 or 1.2 call."""
    version = VERSIONS.get(request.content_type)
    if version is None:
        given = "The request has no Content-Type"
        if "Content-Type" in request.headers:
            given = f"Content-Type {request.content_type[:80]!r} is not a SOAP content type"
        hint = ""
        if request.content_type == FORM_TYPE:
            hint = f" Forms for the HTTP POST port go to {LODGE_PATH}/<Operation>."
        return fault_response(
            SOAP11,
            f"{given}; use text/xml (SOAP 1.1) or application/soap+xml (SOAP 1.2).{hint}",
        )
    try:
        ct_params = _content_type_params(request.headers.get("Content-Type", ""))
        return await _call(request, version, ct_params)
    except SoapFault as exc:
        return fault_response(version, exc.message, code=exc.code, status=exc.status)
    except Exception:
        request.app.logger.exception("unexpected error in a Lodge SOAP call")
        return fault_response(
            version, "The service could not process the request.", code="receiver"
        )
