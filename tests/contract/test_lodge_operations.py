"""All 13 Lodge operations through the facade, on every port, checked in the sandbox's DB."""

from __future__ import annotations

from pathlib import Path

import pytest

from gwdesk.domain.models import LodgeResult, LodgeText
from gwdesk.domain.profile import LodgePort
from gwdesk.gateway.lodge.documents import LodgeFax, LodgeMms, LodgeSms, LodgeWap
from gwdesk.sandbox.server import SandboxThread
from tests.contract.lodge_client_support import (
    FAX,
    FAX_DIGITS,
    MOBILE,
    MOBILE_DIGITS,
    PORTS,
    SOAP_PORTS,
    files,
    gif,
    jpeg,
    lodge_service,
    messages,
    only_message,
    pdf,
    png,
    sha,
    stored_files,
    tiff,
)

OK = "Message sent successfully."


@pytest.fixture(params=PORTS)
def port(request: pytest.FixtureRequest) -> LodgePort:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=SOAP_PORTS)
def soap_port(request: pytest.FixtureRequest) -> LodgePort:
    return request.param  # type: ignore[no-any-return]


async def test_lodge_sms_lodges_a_one_way_sms_with_its_text_as_data(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    text = "Tom & Jerry <b>bold</b> ]]> 'quoted' \"twice\" €"
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_sms(MOBILE, text)
    assert result == LodgeText(operation="LodgeSMSMessage", text=OK)
    row = only_message(sandbox)
    assert (row["type"], row["to_number"], row["message"]) == ("SMS", MOBILE_DIGITS, text)
    assert (row["reply_type"], row["service_id"]) == ("", 2)


async def test_lodge_wap_push_lodges_the_url_and_application_name(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_wap_push(MOBILE, "Menu", "https://example.com/m?a=1&b=2")
    assert result.ok
    row = only_message(sandbox)
    assert (row["type"], row["subject"], row["url"]) == (
        "WAP",
        "Menu",
        "https://example.com/m?a=1&b=2",
    )


async def test_lodge_sms_with_reply_keeps_the_reply_route(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_sms_with_reply(
            MOBILE, "Reply YES", "email", "desk@example.com"
        )
    assert result.ok
    row = only_message(sandbox)
    assert (row["message"], row["reply_type"], row["reply_path"]) == (
        "Reply YES",
        "EMAIL",
        "desk@example.com",
    )


async def test_lodge_sms_with_reply_xml_returns_the_msgid_of_the_message(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    hook = "http://127.0.0.1:9/hook?from=#FROM#&msg=#MSG#"
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_sms_with_reply_xml(MOBILE, "Two-way", "HTTP", hook)
    row = only_message(sandbox)
    assert result == LodgeResult(Result=0, ErrorMsg="", MsgID=row["message_id"])
    assert (row["reply_type"], row["reply_path"]) == ("HTTP", hook)


async def test_get_message_status_xml_reports_a_message_lodged_through_lodge(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        lodged = await service.lodge.lodge_sms_with_reply_xml(MOBILE, "x", "WWW", "site")
        assert lodged.msg_id is not None
        status = await service.lodge.get_message_status_xml(lodged.msg_id)
    assert (status.msg_id, status.phone_number, status.status) == (
        lodged.msg_id,
        MOBILE_DIGITS,
        "ACTIVE",
    )
    assert status.date_lodged is not None
    assert not isinstance(status.date_lodged, str)
    assert status.date_lodged.utcoffset() is not None


async def test_lodge_mms_carries_one_real_png(sandbox: SandboxThread, port: LodgePort) -> None:
    picture = png(4, 4)
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_mms(
            MOBILE, files(("dot.png", picture))[0], subject="Photo", text="Look"
        )
    assert result.ok
    row = only_message(sandbox)
    assert (row["type"], row["subject"], row["message"]) == ("MMS", "Photo", "Look")
    assert stored_files(row) == [("dot.png", "image/png", sha(picture))]


async def test_lodge_multi_mms_carries_three_attachments_in_order(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    sent = (("a.jpg", jpeg()), ("b.gif", gif()), ("c.txt", "Grüße\n".encode()))
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_multi_mms(MOBILE, files(*sent), subject="Three")
    assert result.ok
    assert stored_files(only_message(sandbox)) == [
        ("a.jpg", "image/jpeg", sha(sent[0][1])),
        ("b.gif", "image/gif", sha(sent[1][1])),
        ("c.txt", "text/plain", sha(sent[2][1])),
    ]


async def test_lodge_multi_mms_with_two_files_leaves_the_third_slot_empty(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        await service.lodge.lodge_multi_mms(MOBILE, files(("a.png", png()), ("b.gif", gif())))
    assert [f[0] for f in stored_files(only_message(sandbox))] == ["a.png", "b.gif"]


async def test_an_mms_of_just_under_400_kb_goes_through(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    # On the GET port this proves the switch to POST: the base64 would not fit in a URL.
    big = png() + b"\x00" * (409_600 - len(png()))
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_mms(MOBILE, files(("big.png", big))[0])
    assert result.ok
    assert stored_files(only_message(sandbox)) == [("big.png", "image/png", sha(big))]


async def test_lodge_fax_xml_carries_a_pdf_and_a_tiff(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    document, scan = pdf(), tiff()
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_fax_xml(
            FAX,
            files(("invoice.pdf", document), ("scan.tif", scan)),
            subject="Invoice",
            cover_page="Please find attached",
        )
    row = only_message(sandbox)
    assert result.ok
    assert result.msg_id == row["message_id"]
    assert (row["type"], row["to_number"], row["subject"], row["message"]) == (
        "FAX",
        FAX_DIGITS,
        "Invoice",
        "Please find attached",
    )
    assert stored_files(row) == [
        ("invoice.pdf", "application/pdf", sha(document)),
        ("scan.tif", "image/tiff", sha(scan)),
    ]


async def test_a_fax_may_be_a_cover_page_alone(sandbox: SandboxThread, port: LodgePort) -> None:
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_fax_xml(FAX, cover_page="Call me back")
    assert result.ok
    row = only_message(sandbox)
    assert (row["message"], row["attachments"]) == ("Call me back", [])


async def test_lodge_mms_by_url_keeps_the_url(sandbox: SandboxThread, port: LodgePort) -> None:
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_mms_by_url(
            MOBILE, "https://example.com/clip.mp4", subject="Clip", text="Watch"
        )
    assert result.ok
    row = only_message(sandbox)
    assert (row["type"], row["url"], row["subject"], row["message"]) == (
        "MMS",
        "https://example.com/clip.mp4",
        "Clip",
        "Watch",
    )


def every_kind() -> list[LodgeSms | LodgeWap | LodgeMms | LodgeFax]:
    return [
        LodgeSms(MOBILE, "plain <text> & more"),
        LodgeWap(MOBILE, "App", "https://example.com/w"),
        LodgeMms(MOBILE, files(("x.gif", gif())), subject="Pic", text="see"),
        LodgeFax(FAX, files(("f.pdf", pdf())), subject="Fax", cover_page="cover"),
    ]


async def test_lodge_xml_lodges_every_kind_of_message_with_msgids(
    sandbox: SandboxThread, soap_port: LodgePort
) -> None:
    async with lodge_service(sandbox, soap_port) as service:
        result = await service.lodge.lodge_xml(every_kind())
    rows = messages(sandbox)
    assert result.ok
    assert result.msg_ids == tuple(r["message_id"] for r in rows)
    assert [(r["type"], r["to_number"]) for r in rows] == [
        ("SMS", MOBILE_DIGITS),
        ("WAP", MOBILE_DIGITS),
        ("MMS", MOBILE_DIGITS),
        ("FAX", FAX_DIGITS),
    ]
    assert rows[0]["message"] == "plain <text> & more"
    assert stored_files(rows[2]) == [("x.gif", "image/gif", sha(gif()))]
    assert stored_files(rows[3]) == [("f.pdf", "application/pdf", sha(pdf()))]


async def test_lodge_xml_by_arg_lodges_the_document_sent_as_a_string(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_xml_by_arg(every_kind())
    rows = messages(sandbox)
    assert result.lodged == 4
    assert result.msg_ids == tuple(r["message_id"] for r in rows)
    assert [r["type"] for r in rows] == ["SMS", "WAP", "MMS", "FAX"]


def two_mms() -> list[LodgeMms]:
    return [
        LodgeMms(MOBILE, files(("a.png", png())), subject="One", text="first"),
        LodgeMms("+64 21 123 4567", files(("b.jpg", jpeg()), ("c.txt", b"hi"))),
    ]


async def test_lodge_multi_mms_xml_lodges_each_mms_without_msgids(
    sandbox: SandboxThread, soap_port: LodgePort
) -> None:
    async with lodge_service(sandbox, soap_port) as service:
        result = await service.lodge.lodge_multi_mms_xml(two_mms())
    assert [(r.result, r.msg_id) for r in result.results] == [(0, None), (0, None)]
    rows = messages(sandbox)
    assert [(r["type"], r["to_number"]) for r in rows] == [
        ("MMS", MOBILE_DIGITS),
        ("MMS", "64211234567"),
    ]
    assert [f[0] for f in stored_files(rows[1])] == ["b.jpg", "c.txt"]


async def test_lodge_multi_mms_xml_msgid_returns_each_msgid(
    sandbox: SandboxThread, soap_port: LodgePort
) -> None:
    async with lodge_service(sandbox, soap_port) as service:
        result = await service.lodge.lodge_multi_mms_xml_msgid(two_mms())
    assert result.msg_ids == tuple(r["message_id"] for r in messages(sandbox))
    assert len(result.msg_ids) == 2


@pytest.mark.parametrize("port", ["http_get", "http_post"])
async def test_soap_only_operations_use_soap_11_on_an_http_profile(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        documents = await service.lodge.lodge_xml([LodgeSms(MOBILE, "via SOAP")])
        mms = await service.lodge.lodge_multi_mms_xml_msgid(two_mms()[:1])
    assert documents.ok
    assert mms.ok
    assert len(messages(sandbox)) == 2


async def test_the_console_helpers_pick_the_operation_that_fits(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        lodge = service.lodge
        one_way = await lodge.send_sms(MOBILE, "one way")
        two_way = await lodge.send_sms(MOBILE, "two way", reply_type="WWW", reply_path="site")
        await lodge.send_wap_push(MOBILE, "App", "https://example.com/")
        await lodge.send_mms(MOBILE, files=files(("a.png", png())))
        await lodge.send_mms(MOBILE, files=files(("a.png", png()), ("b.gif", gif())))
        await lodge.send_mms(MOBILE, url="https://example.com/v.mp4")
        fax = await lodge.send_fax(FAX, files(("f.pdf", pdf())))
        document = await lodge.send_document([LodgeSms(MOBILE, "doc")])
        assert isinstance(two_way, LodgeResult)
        assert two_way.msg_id is not None
        status = await lodge.status(two_way.msg_id)
    assert isinstance(one_way, LodgeText)
    assert fax.msg_id is not None
    assert document.ok
    assert status.msg_id == two_way.msg_id
    rows = messages(sandbox)
    assert [r["type"] for r in rows] == ["SMS", "SMS", "WAP", "MMS", "MMS", "MMS", "FAX", "SMS"]
    assert [len(r["attachments"]) for r in rows] == [0, 0, 0, 1, 2, 0, 1, 0]


@pytest.mark.parametrize("port", ["soap12", "http_post"])
async def test_a_fax_of_exactly_10_mb_goes_through(
    sandbox: SandboxThread, port: LodgePort, tmp_path: Path
) -> None:
    big = pdf(padding=10_485_760 - len(pdf()))
    path = tmp_path / "big.pdf"
    path.write_bytes(big)
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_fax_xml(FAX, [path])
    assert result.ok
    assert stored_files(only_message(sandbox)) == [("big.pdf", "application/pdf", sha(big))]
