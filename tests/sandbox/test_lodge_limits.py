"""The contract's MMS and fax limits: counts, total sizes and file types."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.sandbox.lodge_support import (
    NS,
    NUMBER,
    SAMPLES,
    attachment_xml,
    b64,
    envelope,
    fields,
    lodge_document,
    message_xml,
    padded,
    params_xml,
    post_soap,
    stored_attachments,
    text_result,
    xml_result,
)

KB = 1024
MB = 1024 * 1024
MMS = {
    "Username": "demo",
    "Pwd": "demo",
    "PhoneNumber": NUMBER,
    "MMSSubject": "",
    "MMSMessageText": "",
}
FAX = {
    "Username": "demo",
    "Pwd": "demo",
    "FaxNumber": "61299998888",
    "FaxSubject": "F",
    "CoverPageText": "",
}


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as http:
        yield http


def multi_mms(client: httpx.Client, sandbox: SandboxThread, files: dict[str, bytes]) -> str:
    params = dict(MMS)
    for slot, (name, data) in zip(("", "2", "3"), files.items(), strict=False):
        params[f"FileName{slot}"] = name
        params[f"MMSContent{slot}Base64"] = b64(data)
    inner = params_xml(params)
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeMultiMMSMessage", inner))
    return text_result(response, "LodgeMultiMMSMessage")


def fax(client: httpx.Client, sandbox: SandboxThread, files: dict[str, bytes]) -> dict[str, str]:
    inner = params_xml(FAX)
    for slot, (name, data) in zip(("", "2", "3"), files.items(), strict=False):
        inner += (
            f"<FileName{slot}>{name}</FileName{slot}><objFile{slot}>{b64(data)}</objFile{slot}>"
        )
    response = post_soap(
        client,
        sandbox.lodge_url,
        envelope("LodgeFAXMessageXML", inner),
        action=f"{NS}/LodgeFAXMessageXML",
    )
    return fields(xml_result(response, "LodgeFAXMessageXML"))


def document_results(
    client: httpx.Client, sandbox: SandboxThread, messages: str
) -> list[dict[str, str]]:
    inner = f"<docXML>{lodge_document(messages)}</docXML>"
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeXML", inner))
    return [fields(r) for r in xml_result(response, "LodgeXML")]


def count(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


def test_a_fourth_attachment_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    files = "".join(attachment_xml(f"p{i}.png", SAMPLES["png"]) for i in range(4))
    results = document_results(client, sandbox, message_xml("MMS", files=files))
    assert results[0]["Result"] == "2"
    assert results[0]["ErrorMsg"] == "Message 1: An MMS takes at most 3 files; 4 were given."
    assert count(sandbox) == 0


def test_three_attachments_are_accepted(client: httpx.Client, sandbox: SandboxThread) -> None:
    files = "".join(attachment_xml(f"p{i}.png", SAMPLES["png"]) for i in range(3))
    results = document_results(client, sandbox, message_xml("MMS", files=files))
    assert results[0]["Result"] == "0"
    assert len(stored_attachments(sandbox.query("SELECT attachments FROM messages")[0][0])) == 3


def test_400_kb_of_mms_in_all_is_accepted(client: httpx.Client, sandbox: SandboxThread) -> None:
    files = {
        "a.jpg": padded("jpg", 200 * KB),
        "b.jpg": padded("jpg", 150 * KB),
        "c.txt": b"x" * (50 * KB),
    }
    assert multi_mms(client, sandbox, files) == "Message sent successfully."


def test_401_kb_of_mms_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    files = {"a.jpg": padded("jpg", 200 * KB), "b.jpg": padded("jpg", 201 * KB)}
    assert multi_mms(client, sandbox, files) == (
        "Error: The files of an MMS come to 410,624 bytes; at most 409,600 (400 KB) are allowed."
    )
    assert count(sandbox) == 0


def test_one_attachment_over_400_kb_is_refused(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    inner = params_xml(
        {**MMS, "FileName": "big.png", "MMSContentBase64": b64(padded("png", 401 * KB))}
    )
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeMMSMessage", inner))
    assert "at most 409,600 (400 KB) are allowed" in text_result(response, "LodgeMMSMessage")


def test_an_exe_attachment_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    text = multi_mms(client, sandbox, {"setup.exe": b"MZ\x90\x00"})
    assert text == (
        "Error: setup.exe: .exe files cannot be sent in an MMS; "
        "use 3gp, amr, gif, jpeg, jpg, mp3, mp4, png, txt."
    )
    assert count(sandbox) == 0


def test_an_exe_renamed_to_png_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    text = multi_mms(client, sandbox, {"photo.png": b"MZ\x90\x00" + b"\x00" * 60})
    assert text == "Error: photo.png does not look like a PNG image."


def test_a_file_without_a_name_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    assert (
        multi_mms(client, sandbox, {"": SAMPLES["png"]})
        == "Error: FileName is required for each file."
    )


def test_an_mms_needs_an_attachment(client: httpx.Client, sandbox: SandboxThread) -> None:
    inner = params_xml({**MMS, "FileName": "", "MMSContentBase64": ""})
    response = post_soap(client, sandbox.lodge_url, envelope("LodgeMMSMessage", inner))
    assert (
        text_result(response, "LodgeMMSMessage") == "Error: An MMS needs at least one attachment."
    )


@pytest.mark.parametrize(
    ("extension", "content_type"),
    [
        ("jpg", "image/jpeg"),
        ("jpeg", "image/jpeg"),
        ("png", "image/png"),
        ("gif", "image/gif"),
        ("txt", "text/plain"),
        ("amr", "audio/amr"),
        ("mp3", "audio/mpeg"),
        ("3gp", "video/3gpp"),
        ("mp4", "video/mp4"),
    ],
)
def test_each_mms_type_is_accepted(
    client: httpx.Client, sandbox: SandboxThread, extension: str, content_type: str
) -> None:
    name = f"file.{extension.upper()}"
    assert multi_mms(client, sandbox, {name: SAMPLES[extension]}) == "Message sent successfully."
    stored = stored_attachments(sandbox.query("SELECT attachments FROM messages")[0][0])
    assert (stored[0]["file_name"], stored[0]["content_type"]) == (name, content_type)


@pytest.mark.parametrize(
    ("extension", "content_type"),
    [
        ("pdf", "application/pdf"),
        ("tif", "image/tiff"),
        ("tiff", "image/tiff"),
        ("txt", "text/plain"),
    ],
)
def test_each_fax_type_is_accepted(
    client: httpx.Client, sandbox: SandboxThread, extension: str, content_type: str
) -> None:
    assert fax(client, sandbox, {f"doc.{extension}": SAMPLES[extension]})["Result"] == "0"
    stored = stored_attachments(sandbox.query("SELECT attachments FROM messages")[0][0])
    assert stored[0]["content_type"] == content_type


def test_a_fax_refuses_a_word_document(client: httpx.Client, sandbox: SandboxThread) -> None:
    result = fax(client, sandbox, {"letter.docx": b"PK\x03\x04"})
    assert result["Result"] == "2"
    assert (
        result["ErrorMsg"]
        == "letter.docx: .docx files cannot be sent in a fax; use pdf, tif, tiff, txt."
    )


def test_a_fax_refuses_an_image_an_mms_would_take(
    client: httpx.Client, sandbox: SandboxThread
) -> None:
    assert fax(client, sandbox, {"photo.png": SAMPLES["png"]})["Result"] == "2"


def test_a_fourth_fax_file_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    files = "".join(attachment_xml(f"p{i}.pdf", SAMPLES["pdf"]) for i in range(4))
    results = document_results(client, sandbox, message_xml("FAX", files=files))
    assert results[0]["ErrorMsg"] == "Message 1: A fax takes at most 3 files; 4 were given."


def test_a_10_mb_fax_in_one_file_is_accepted(client: httpx.Client, sandbox: SandboxThread) -> None:
    result = fax(client, sandbox, {"scan.pdf": padded("pdf", 10 * MB)})
    assert result["Result"] == "0", result
    stored = stored_attachments(sandbox.query("SELECT attachments FROM messages")[0][0])
    assert stored[0]["size"] == 10 * MB


def test_11_mb_of_fax_is_refused(client: httpx.Client, sandbox: SandboxThread) -> None:
    files = {
        "a.pdf": padded("pdf", 4 * MB),
        "b.pdf": padded("pdf", 4 * MB),
        "c.tif": padded("tif", 3 * MB),
    }
    result = fax(client, sandbox, files)
    assert result["Result"] == "2"
    assert result["ErrorMsg"] == (
        "The files of a fax come to 11,534,336 bytes; at most 10,485,760 (10 MB) are allowed."
    )
    assert count(sandbox) == 0
