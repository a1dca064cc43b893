"""The service description: WSDL at `?WSDL`, its namespace, address, ports and operations."""

from __future__ import annotations

import httpx
import pytest
from lxml import etree

from gwdesk.resources import resource_path
from gwdesk.sandbox.lodge.catalog import CATALOG, Kind
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory

WSDL = "http://schemas.xmlsoap.org/wsdl/"
SOAP_BINDING = "http://schemas.xmlsoap.org/wsdl/soap/"
SOAP12_BINDING = "http://schemas.xmlsoap.org/wsdl/soap12/"
HTTP_BINDING = "http://schemas.xmlsoap.org/wsdl/http/"
XSD = "http://www.w3.org/2001/XMLSchema"


def fetch_wsdl(sandbox: SandboxThread, query: str = "WSDL", **headers: str) -> etree._Element:
    response = httpx.get(f"{sandbox.lodge_url}?{query}", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/xml")
    return etree.fromstring(response.content)


@pytest.mark.parametrize("query", ["WSDL", "wsdl", "Wsdl"])
def test_the_wsdl_is_served_for_any_case_of_the_query(sandbox: SandboxThread, query: str) -> None:
    assert fetch_wsdl(sandbox, query).tag == f"{{{WSDL}}}definitions"


def test_the_wsdl_uses_the_configured_namespace_for_schema_and_actions(
    sandbox_factory: SandboxFactory,
) -> None:
    sandbox = sandbox_factory(namespace="urn:example:lodge")
    root = fetch_wsdl(sandbox)
    assert root.get("targetNamespace") == "urn:example:lodge"
    assert root.find(f"{{{WSDL}}}types/{{{XSD}}}schema").get("targetNamespace") == (
        "urn:example:lodge"
    )
    actions = {
        op.get("soapAction")
        for op in root.iterfind(f".//{{{SOAP_BINDING}}}operation")
        if op.get("soapAction")
    }
    assert actions == {f"urn:example:lodge/{name}" for name in CATALOG}


def test_the_service_address_follows_the_request_host(sandbox: SandboxThread) -> None:
    root = fetch_wsdl(sandbox, Host="gateway.example:8443")
    addresses = {a.get("location") for a in root.iterfind(f".//{{{WSDL}}}port/*")}
    assert addresses == {"http://gateway.example:8443/dotnet/Lodge.asmx"}


def test_an_implausible_host_falls_back_to_the_sandbox_address(sandbox: SandboxThread) -> None:
    root = fetch_wsdl(sandbox, Host='bad"host<')
    addresses = {a.get("location") for a in root.iterfind(f".//{{{WSDL}}}port/*")}
    assert addresses == {sandbox.lodge_url}


def test_service_lodge_has_four_ports(sandbox: SandboxThread) -> None:
    service = fetch_wsdl(sandbox).find(f"{{{WSDL}}}service")
    assert service.get("name") == "Lodge"
    ports = {p.get("name"): p[0].tag for p in service.iterfind(f"{{{WSDL}}}port")}
    assert ports == {
        "LodgeSoap": f"{{{SOAP_BINDING}}}address",
        "LodgeSoap12": f"{{{SOAP12_BINDING}}}address",
        "LodgeHttpGet": f"{{{HTTP_BINDING}}}address",
        "LodgeHttpPost": f"{{{HTTP_BINDING}}}address",
    }


@pytest.mark.parametrize(
    ("binding", "http_only"),
    [("LodgeSoap", False), ("LodgeSoap12", False), ("LodgeHttpGet", True), ("LodgeHttpPost", True)],
)
def test_each_binding_lists_the_operations_its_port_offers(
    sandbox: SandboxThread, binding: str, http_only: bool
) -> None:
    root = fetch_wsdl(sandbox)
    node = next(b for b in root.iterfind(f"{{{WSDL}}}binding") if b.get("name") == binding)
    listed = [op.get("name") for op in node.iterfind(f"{{{WSDL}}}operation")]
    assert listed == [name for name, spec in CATALOG.items() if spec.http or not http_only]


def test_soap_request_elements_declare_each_parameter_with_its_type(
    sandbox: SandboxThread,
) -> None:
    schema = fetch_wsdl(sandbox).find(f"{{{WSDL}}}types/{{{XSD}}}schema")
    for name, spec in CATALOG.items():
        element = schema.find(f"{{{XSD}}}element[@name='{name}']")
        declared = element.findall(f"{{{XSD}}}complexType/{{{XSD}}}sequence/{{{XSD}}}element")
        assert [d.get("name") for d in declared] == [p.name for p in spec.params], name
        for decl, param in zip(declared, spec.params, strict=True):
            if param.kind is Kind.DOCUMENT:
                assert decl.find(f".//{{{XSD}}}any") is not None
            else:
                assert decl.get("type") == f"s:{param.kind.value}"


def test_xml_results_are_mixed_any_content_and_text_results_strings(
    sandbox: SandboxThread,
) -> None:
    schema = fetch_wsdl(sandbox).find(f"{{{WSDL}}}types/{{{XSD}}}schema")
    for name, spec in CATALOG.items():
        result = schema.find(f".//{{{XSD}}}element[@name='{name}Result']")
        if spec.xml_result:
            assert result.find(f"{{{XSD}}}complexType").get("mixed") == "true"
            assert result.find(f".//{{{XSD}}}any") is not None
        else:
            assert result.get("type") == "s:string"


def test_http_bindings_take_objfile_as_a_string_array(sandbox: SandboxThread) -> None:
    root = fetch_wsdl(sandbox)
    message = next(
        m
        for m in root.iterfind(f"{{{WSDL}}}message")
        if m.get("name") == "LodgeFAXMessageXMLHttpGetIn"
    )
    types = {p.get("name"): p.get("type") for p in message}
    assert types["objFile"] == types["objFile3"] == "tns:ArrayOfString"
    assert types["FaxNumber"] == "s:string"


def test_a_plain_get_shows_a_help_page_listing_every_operation(sandbox: SandboxThread) -> None:
    response = httpx.get(sandbox.lodge_url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    for name in CATALOG:
        assert f"<b>{name}</b>" in response.text
    assert 'href="?WSDL"' in response.text


def test_resource_path_finds_the_wsdl_template() -> None:
    path = resource_path("wsdl", "lodge.wsdl.tmpl")
    assert path.is_file()
    assert "${namespace}" in path.read_text(encoding="utf-8")


def test_resource_path_names_the_places_it_looked_for_a_missing_file() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-file"):
        resource_path("wsdl", "no-such-file")
