"""The service description: the WSDL at `{legacy_url}?WSDL` and a short HTML help page.

The WSDL is a template file (`resources/wsdl/lodge.wsdl.tmpl`) read once when the app
is built, filled in per request with the configured namespace and a service address
made from the request's Host header, as ASP.NET does, so a client that reached the
sandbox through another name or port is told to call it back the same way.
"""

from __future__ import annotations

import html
import re
from string import Template
from typing import Final
from xml.sax.saxutils import escape

from aiohttp import web

from gwdesk.resources import resource_path
from gwdesk.sandbox.config import LODGE_PATH
from gwdesk.sandbox.lodge.catalog import CATALOG
from gwdesk.sandbox.state import STATE

TEMPLATE: Final = web.AppKey("gwdesk_lodge_wsdl_template", Template)
_HOST_RE: Final = re.compile(r"(?:[A-Za-z0-9._-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?")


def load_template() -> Template:
    return Template(resource_path("wsdl", "lodge.wsdl.tmpl").read_text(encoding="utf-8"))


def _attribute(value: str) -> str:
    return escape(value, {'"': "&quot;", "'": "&apos;"})


def render(template: Template, namespace: str, address: str) -> str:
    return template.substitute(namespace=_attribute(namespace), address=_attribute(address))


def service_address(request: web.Request) -> str:
    """`{scheme}://{Host}{LODGE_PATH}`; an implausible Host falls back to our own address."""
    host = request.headers.get("Host", "")
    if _HOST_RE.fullmatch(host):
        return f"{request.scheme}://{host}{LODGE_PATH}"
    return request.app[STATE].lodge_url


def help_page() -> str:
    items = []
    for spec in CATALOG.values():
        ports = "SOAP 1.1, SOAP 1.2" + (", HTTP GET, HTTP POST" if spec.http else "")
        params = ", ".join(p.name for p in spec.params)
        result = "XML" if spec.xml_result else "text"
        items.append(
            f"<li><b>{html.escape(spec.name)}</b>({html.escape(params)}) &rarr; {result}; "
            f"{ports}</li>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>Lodge web service</title></head><body>\n"
        "<h1>Lodge</h1>\n<p>The gwdesk sandbox's legacy Lodge service. "
        'See the <a href="?WSDL">service description (WSDL)</a>.</p>\n'
        f"<ul>\n{chr(10).join(items)}\n</ul>\n</body></html>\n"
    )


async def handle(request: web.Request) -> web.StreamResponse:
    """GET {legacy_url}: the WSDL for `?WSDL` (any case), otherwise the help page."""
    if any(key.lower() == "wsdl" for key in request.query):
        text = render(
            request.app[TEMPLATE], request.app[STATE].config.namespace, service_address(request)
        )
        return web.Response(text=text, content_type="text/xml", charset="utf-8")
    return web.Response(text=help_page(), content_type="text/html", charset="utf-8")
