"""`<Lodge>` documents built from typed messages: structure, escaping, checks before sending."""

from __future__ import annotations

import base64

import pytest
from lxml import etree

from gwdesk.domain.models import Secret
from gwdesk.gateway.errors import ValidationError
from gwdesk.gateway.lodge.documents import (
    LodgeFax,
    LodgeMms,
    LodgeSms,
    LodgeWap,
    build_document,
    document_text,
    http_url,
    sms_text,
)
from gwdesk.gateway.lodge.files import LodgeFile

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
PDF = b"%PDF-1.4\n"


async def build(*messages: LodgeSms | LodgeWap | LodgeMms | LodgeFax) -> etree._Element:
    return await build_document(list(messages), "demo", Secret("pw"), "AU")


async def test_a_document_has_the_contract_shape_with_one_message_per_item() -> None:
    document = await build(
        LodgeSms("0412 345 678", "hi"),
        LodgeWap("0412345678", "App", "https://example.com/"),
        LodgeMms("0412345678", [LodgeFile("a.png", PNG)], subject="S", text="T"),
        LodgeFax("02 9999 8888", [LodgeFile("f.pdf", PDF)], cover_page="cover"),
    )
    assert [child.tag for child in document] == ["Username", "Pwd", "Messages"]
    assert (document.findtext("Username"), document.findtext("Pwd")) == ("demo", "pw")
    found = document.findall("Messages/Message")
    assert [m.get("Type") for m in found] == ["SMS", "WAP", "MMS", "FAX"]
    assert [m.findtext("PhoneNumber") for m in found] == ["61412345678"] * 3 + ["61299998888"]
    assert (found[1].findtext("Subject"), found[1].findtext("Text")) == (
        "App",
        "https://example.com/",
    )
    attachment = found[2].find("Attachment")
    assert attachment is not None
    assert attachment.get("FileName") == "a.png"
    assert base64.b64decode(attachment.text or "") == PNG
    assert found[3].findtext("Text") == "cover"


async def test_text_that_looks_like_markup_stays_text() -> None:
    hostile = '</Text></Message><Message Type="SMS"><PhoneNumber>61400000000</PhoneNumber>'
    document = await build(LodgeSms("0412345678", hostile + " & <![CDATA[x]]>"))
    reread = etree.fromstring(document_text(document).encode())
    assert len(reread.findall("Messages/Message")) == 1
    assert reread.findtext("Messages/Message/Text") == hostile + " & <![CDATA[x]]>"


async def test_a_file_name_with_quotes_stays_an_attribute_value() -> None:
    document = await build(LodgeMms("0412345678", [LodgeFile("a\" b='c.png", PNG)]))
    reread = etree.fromstring(document_text(document).encode())
    attachment = reread.find("Messages/Message/Attachment")
    assert attachment is not None
    assert attachment.get("FileName") == "a\" b='c.png"


async def test_a_bad_message_is_refused_naming_it_before_anything_is_sent() -> None:
    with pytest.raises(ValidationError) as caught:
        await build(LodgeSms("0412345678", "fine"), LodgeSms("12", "bad number"))
    assert caught.value.field == "Message 2 PhoneNumber"


async def test_an_mms_document_takes_mms_only() -> None:
    with pytest.raises(ValidationError, match="MMS messages only"):
        await build_document(
            [LodgeSms("0412345678", "x")], "demo", Secret("pw"), "AU", only=LodgeMms
        )


async def test_the_attachments_of_each_message_are_limited_on_their_own() -> None:
    four = [LodgeFile(f"{n}.png", PNG) for n in "abcd"]
    with pytest.raises(ValidationError) as caught:
        await build(LodgeMms("0412345678", four))
    assert caught.value.field == "Message 1 Attachment"


async def test_a_document_holds_one_to_a_hundred_messages() -> None:
    with pytest.raises(ValidationError, match="at least one"):
        await build()
    with pytest.raises(ValidationError, match="at most 100"):
        await build(*[LodgeSms("0412345678", "x")] * 101)


def test_an_sms_of_more_than_ten_parts_is_refused() -> None:
    assert sms_text("x" * 1530, "PhoneMessage")
    with pytest.raises(ValidationError, match="11 SMS parts"):
        sms_text("x" * 1531, "PhoneMessage")


@pytest.mark.parametrize("url", ["ftp://example.com/", "example.com", "https://", "http://a b/"])
def test_only_http_addresses_are_urls(url: str) -> None:
    with pytest.raises(ValidationError) as caught:
        http_url(url, "URL")
    assert caught.value.field == "URL"
