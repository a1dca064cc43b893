"""The legacy `Lodge` service: SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST at one address.

| module | concern |
| --- | --- |
| `catalog.py` | the 14 operations as data (the spec's 13 and `LodgeSMSMessageWithReply2`) |
| `operations.py` | the operations as plain functions, shared by every port |
| `documents.py` | the `<Lodge>` document operations |
| `drafts.py`, `attachments.py` | messages and files from checked values; contract limits |
| `params.py`, `results.py` | what ports hand to operations and get back |
| `soap.py`, `http_ports.py` | the wire: envelopes and faults; GET/POST parameters |
| `wsdl.py` | the WSDL (from `resources/wsdl/`) and the help page |
| `xmlsafe.py` | hardened XML parsing: no DTDs, no entities, bounded documents |
"""

from __future__ import annotations

from typing import Final

from aiohttp import web

from gwdesk.sandbox.config import LODGE_PATH
from gwdesk.sandbox.http_util import any_case
from gwdesk.sandbox.lodge import http_ports, soap, wsdl

ADDRESS: Final = any_case(LODGE_PATH)
"""LODGE_PATH in any letter case, as IIS serves it (the spec spells it `lodge.asmx`)."""


def register(app: web.Application) -> None:
    """Add the Lodge routes; the WSDL template is read here, once, not per request."""
    app[wsdl.TEMPLATE] = wsdl.load_template()
    app.router.add_get(ADDRESS, wsdl.handle)
    app.router.add_post(ADDRESS, soap.handle)
    # No automatic HEAD: a HEAD must not lodge a message.
    app.router.add_get(ADDRESS + "/{operation}", http_ports.handle, allow_head=False)
    app.router.add_post(ADDRESS + "/{operation}", http_ports.handle)
