"""The client's Lodge catalogue against the WSDL the sandbox serves: the same operations.

The client and the sandbox keep their own tables (no shared code); this is where a
mismatch between the two shows: an operation the service offers that the client
does not know, a parameter list or port set that differs, a text result taken for XML.
"""

from __future__ import annotations

import httpx
import pytest
from lxml import etree

from gwdesk.gateway.lodge.catalog import OPERATIONS, ResultKind
from gwdesk.sandbox.server import SandboxThread

WSDL = "http://schemas.xmlsoap.org/wsdl/"
XSD = "http://www.w3.org/2001/XMLSchema"


@pytest.fixture
def wsdl(sandbox: SandboxThread) -> etree._Element:
    response = httpx.get(f"{sandbox.lodge_url}?WSDL")
    assert response.status_code == 200
    return etree.fromstring(response.content)


def bound(wsdl: etree._Element, binding: str) -> list[str]:
    node = wsdl.find(f"{{{WSDL}}}binding[@name='{binding}']")
    assert node is not None, binding
    return [str(op.get("name")) for op in node.iterfind(f"{{{WSDL}}}operation")]


def schema_element(wsdl: etree._Element, name: str) -> etree._Element:
    node = wsdl.find(f"{{{WSDL}}}types/{{{XSD}}}schema/{{{XSD}}}element[@name='{name}']")
    assert node is not None, name
    return node


@pytest.mark.parametrize("binding", ["LodgeSoap", "LodgeSoap12"])
def test_the_catalogue_names_every_operation_the_soap_bindings_list_in_order(
    wsdl: etree._Element, binding: str
) -> None:
    assert bound(wsdl, binding) == [op.name for op in OPERATIONS]


@pytest.mark.parametrize("binding", ["LodgeHttpGet", "LodgeHttpPost"])
def test_the_catalogue_offers_on_http_exactly_what_the_http_bindings_list(
    wsdl: etree._Element, binding: str
) -> None:
    assert bound(wsdl, binding) == [op.name for op in OPERATIONS if op.http]


def test_each_operation_takes_the_parameters_its_request_element_declares(
    wsdl: etree._Element,
) -> None:
    for op in OPERATIONS:
        declared = schema_element(wsdl, op.name).iterfind(
            f"{{{XSD}}}complexType/{{{XSD}}}sequence/{{{XSD}}}element"
        )
        assert [d.get("name") for d in declared] == list(op.params), op.name


def test_each_operation_expects_the_result_kind_its_response_element_declares(
    wsdl: etree._Element,
) -> None:
    for op in OPERATIONS:
        result = schema_element(wsdl, f"{op.name}Response").find(f".//{{{XSD}}}element")
        assert result is not None, op.name
        assert result.get("name") == f"{op.name}Result"
        is_text = result.get("type") == "s:string"
        assert is_text == (op.result is ResultKind.TEXT), op.name


def test_binary_and_document_parameters_are_typed_as_the_wsdl_types_them(
    wsdl: etree._Element,
) -> None:
    for op in OPERATIONS:
        declared = schema_element(wsdl, op.name).iterfind(
            f"{{{XSD}}}complexType/{{{XSD}}}sequence/{{{XSD}}}element"
        )
        for element in declared:
            name = element.get("name")
            assert (element.get("type") == "s:base64Binary") == (name in op.binary), name
            takes_document = element.find(f".//{{{XSD}}}any") is not None
            assert takes_document == (name == op.document), name
