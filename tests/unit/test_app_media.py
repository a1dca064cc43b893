"""Fax/MMS tab requests, without Qt: what is refused before sending, and where errors point."""

from __future__ import annotations

import pytest

from gwdesk.app.media import Attached, MediaForm, Mode, Target, check_media, target_of
from gwdesk.gateway.errors import ValidationError
from tests.contract.lodge_client_support import pdf, png


@pytest.mark.parametrize(
    ("wire_field", "target"),
    [
        ("PhoneNumber", Target("recipient")),
        ("Message 2 PhoneNumber", Target("recipient")),
        ("FaxNumber", Target("recipient")),
        ("MMSSubject", Target("subject")),
        ("CoverPageText", Target("text")),
        ("URL", Target("url")),
        ("FileName", Target("file", 0)),
        ("FileName3", Target("file", 2)),
        ("MMSContent2Base64", Target("file", 1)),
        ("objFile2", Target("file", 1)),
        ("Message 1 Attachment 3", Target("file", 2)),
        ("Message 1 Attachment", Target("files")),
        ("MMSContentBase64", Target("files")),
        ("objFile", Target("files")),
        ("Username", Target(None)),
        (None, Target(None)),
    ],
)
def test_an_error_points_at_the_input_its_field_names(
    wire_field: str | None, target: Target
) -> None:
    assert target_of(wire_field) == target


def refusal(values: MediaForm) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        check_media(values, "AU")
    return caught.value


def test_an_mms_without_attachments_is_refused_at_the_attachments() -> None:
    error = refusal(MediaForm(Mode.MMS, recipient="0412 345 678"))
    assert error.field == "MMSContentBase64"


def test_a_file_still_being_read_holds_the_send_back() -> None:
    files = (Attached("a.png", png()), Attached("b.png", reading=True))
    error = refusal(MediaForm(Mode.MMS, recipient="0412 345 678", files=files))
    assert (error.field, error.message) == (
        "FileName2",
        "b.png is still being read; send again in a moment.",
    )


def test_a_fax_needs_a_file_or_a_cover_page() -> None:
    error = refusal(MediaForm(Mode.FAX, recipient="(02) 9999 8888"))
    assert error.field == "objFile"
    cover_only = check_media(MediaForm(Mode.FAX, recipient="(02) 9999 8888", text="Hello"), "AU")
    assert (cover_only.recipients, cover_only.files) == (("61299998888",), ())


def test_a_multi_mms_sends_each_number_once() -> None:
    request = check_media(
        MediaForm(
            Mode.MULTI_MMS,
            recipients="0412 345 678; +61 412 345 678\n0412 345 679",
            files=(Attached("a.png", png()),),
        ),
        "AU",
    )
    assert request.recipients == ("61412345678", "61412345679")


def test_a_multi_mms_names_the_unusable_numbers() -> None:
    error = refusal(
        MediaForm(Mode.MULTI_MMS, recipients="0412 345 678\n12", files=(Attached("a.png", png()),))
    )
    assert error.field == "Messages"
    assert "'12'" in error.message


def test_a_multi_mms_holds_at_most_one_documents_worth() -> None:
    numbers = "\n".join(f"0412 345 {n:03d}" for n in range(101))
    error = refusal(
        MediaForm(Mode.MULTI_MMS, recipients=numbers, files=(Attached("a.png", png()),))
    )
    assert "at most 100" in error.message


def test_a_pdf_is_not_an_mms_attachment() -> None:
    error = refusal(
        MediaForm(Mode.MMS, recipient="0412 345 678", files=(Attached("a.pdf", pdf()),))
    )
    assert error.field == "FileName"
    assert ".pdf files cannot be sent in an MMS" in error.message
