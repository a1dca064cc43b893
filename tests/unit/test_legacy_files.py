"""MMS and fax files: typed by name and first bytes, counted and sized before anything is sent."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from gwdesk.gateway.errors import ValidationError
from gwdesk.gateway.lodge.files import (
    FAX_FIELDS,
    FAX_RULES,
    MMS_FIELDS,
    MMS_RULES,
    LodgeFile,
    check_file,
    read_files,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
SIGNATURES = {
    "photo.JPG": (b"\xff\xd8\xff\xe0" + b"\x00" * 12, "image/jpeg"),
    "a.jpeg": (b"\xff\xd8\xff\xdb" + b"\x00" * 12, "image/jpeg"),
    "a.png": (PNG, "image/png"),
    "a.gif": (b"GIF87a" + b"\x00" * 10, "image/gif"),
    "a.txt": ("naïve text\n".encode(), "text/plain"),
    "a.amr": (b"#!AMR\n" + b"\x00" * 10, "audio/amr"),
    "a.mp3": (b"\xff\xfb\x90\x00" + b"\x00" * 10, "audio/mpeg"),
    "b.mp3": (b"ID3\x04" + b"\x00" * 10, "audio/mpeg"),
    "a.3gp": (b"\x00\x00\x00\x18ftyp3gp4" + b"\x00" * 4, "video/3gpp"),
    "a.mp4": (b"\x00\x00\x00\x18ftypisom" + b"\x00" * 4, "video/mp4"),
}


@pytest.mark.parametrize(
    ("name", "data", "content_type"), [(n, d, t) for n, (d, t) in SIGNATURES.items()]
)
def test_each_mms_type_is_known_by_its_name_and_confirmed_by_its_bytes(
    name: str, data: bytes, content_type: str
) -> None:
    checked = check_file(name, data, MMS_RULES, "FileName")
    assert (checked.file_name, checked.content_type) == (name, content_type)
    assert base64.b64decode(checked.base64()) == data


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("a.png", b"GIF89a" + b"\x00" * 10, "does not look like a PNG image"),
        ("a.txt", b"binary\x00stuff", "does not look like a text file"),
        ("a.exe", b"MZ\x90\x00", ".exe files cannot be sent in an MMS"),
        ("README", b"text", "files without an extension cannot be sent"),
        ("a.pdf", b"%PDF-1.4", ".pdf files cannot be sent in an MMS"),
        ("empty.png", b"", "empty.png is empty"),
        ("../up.png", PNG, "must be a plain file name"),
        ("tab\t.png", PNG, "holds U+0009, a control character; rename the file"),
    ],
)
def test_a_file_the_gateway_would_refuse_is_refused_with_the_reason(
    name: str, data: bytes, reason: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        check_file(name, data, MMS_RULES, "FileName2")
    assert reason in caught.value.message
    assert caught.value.field == "FileName2"


def test_a_right_to_left_override_in_a_name_is_refused_naming_the_character() -> None:
    with pytest.raises(ValidationError) as caught:
        check_file("invoice\u202efdp.txt", b"Amount due: $12", FAX_RULES, "FileName2")
    assert caught.value.message == (
        "The file name 'invoice⟨U+202E⟩fdp.txt' holds U+202E RIGHT-TO-LEFT OVERRIDE, which "
        "makes it display differently from what it is; rename the file."
    )
    assert caught.value.field == "FileName2"


@pytest.mark.parametrize(
    ("char", "named"),
    [
        ("\u202a", "U+202A LEFT-TO-RIGHT EMBEDDING, which makes it display differently"),
        ("\u202d", "U+202D LEFT-TO-RIGHT OVERRIDE, which makes it display differently"),
        ("\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE, which makes it display differently"),
        ("\u2069", "U+2069 POP DIRECTIONAL ISOLATE, which makes it display differently"),
        ("\u200e", "U+200E LEFT-TO-RIGHT MARK, which makes it display differently"),
        ("\u200f", "U+200F RIGHT-TO-LEFT MARK, which makes it display differently"),
        ("\u061c", "U+061C ARABIC LETTER MARK, which makes it display differently"),
        ("\u200b", "U+200B ZERO WIDTH SPACE, an invisible character"),
        ("\u200c", "U+200C ZERO WIDTH NON-JOINER, an invisible character"),
        ("\u200d", "U+200D ZERO WIDTH JOINER, an invisible character"),
        ("\u2060", "U+2060 WORD JOINER, an invisible character"),
        ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE, an invisible character"),
        ("\u00ad", "U+00AD SOFT HYPHEN, an invisible character"),
        ("\U000e0041", "U+E0041 TAG LATIN CAPITAL LETTER A, an invisible character"),
        ("\x1b", "U+001B, a control character"),
        ("\x85", "U+0085, a control character"),
        ("\x7f", "U+007F, a control character"),
        ("\u2028", "U+2028 LINE SEPARATOR, a line break"),
    ],
)
def test_a_name_hiding_a_character_is_refused_naming_it(char: str, named: str) -> None:
    with pytest.raises(ValidationError) as caught:
        check_file(f"photo{char}.png", PNG, MMS_RULES, "FileName")
    assert named in caught.value.message
    assert char not in caught.value.message, "the reason must not carry the trick itself"


def test_names_in_other_scripts_are_kept_as_they_are() -> None:
    for name in ("фото.png", "صورة.png", "写真.png", "naïve café.png"):
        assert check_file(name, PNG, MMS_RULES, "FileName").file_name == name


async def test_a_disguised_name_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    path = tmp_path / "report\u200b.pdf"
    path.write_bytes(b"%PDF-1.4\n")
    with pytest.raises(ValidationError, match="U\\+200B ZERO WIDTH SPACE"):
        await read_files([path], FAX_RULES, FAX_FIELDS)


def test_a_fax_takes_pdf_tiff_and_text_but_no_pictures() -> None:
    assert check_file("a.pdf", b"%PDF-1.7\n", FAX_RULES, "FileName").content_type == (
        "application/pdf"
    )
    assert check_file("a.tif", b"MM\x00*\x00", FAX_RULES, "FileName").content_type == "image/tiff"
    with pytest.raises(ValidationError, match="use pdf, tif, tiff, txt"):
        check_file("a.png", PNG, FAX_RULES, "FileName")


async def test_three_files_is_the_most_an_mms_takes() -> None:
    three = [LodgeFile(f"{n}.png", PNG) for n in "abc"]
    assert len(await read_files(three, MMS_RULES, MMS_FIELDS)) == 3
    with pytest.raises(ValidationError) as caught:
        await read_files([*three, LodgeFile("d.png", PNG)], MMS_RULES, MMS_FIELDS)
    assert caught.value.field == "MMSContentBase64"


async def test_the_mms_limit_is_409600_bytes_in_all() -> None:
    exactly = [LodgeFile("a.png", PNG + b"\x00" * (204_800 - len(PNG)))] * 2
    assert sum(f.size for f in await read_files(exactly, MMS_RULES, MMS_FIELDS)) == 409_600
    one_more = [*exactly[:1], LodgeFile("b.png", PNG + b"\x00" * (204_801 - len(PNG)))]
    with pytest.raises(ValidationError, match="409,601 bytes"):
        await read_files(one_more, MMS_RULES, MMS_FIELDS)


async def test_files_are_read_from_paths_and_named_after_them(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(b"%PDF-1.4\n" + b"x" * 300_000)
    [checked] = await read_files([path], FAX_RULES, FAX_FIELDS)
    assert (checked.file_name, checked.size) == ("scan.pdf", 300_009)


async def test_a_path_too_big_is_refused_by_its_size_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    with path.open("wb") as stream:
        stream.truncate(10_485_761)  # sparse: never read
    with pytest.raises(ValidationError) as caught:
        await read_files([path], FAX_RULES, FAX_FIELDS)
    assert caught.value.field == "objFile"
    assert "10,485,760 (10 MB)" in caught.value.message


async def test_a_missing_file_is_named_with_its_slot(tmp_path: Path) -> None:
    present = tmp_path / "a.png"
    present.write_bytes(PNG)
    with pytest.raises(ValidationError) as caught:
        await read_files([present, tmp_path / "gone.png"], MMS_RULES, MMS_FIELDS)
    assert caught.value.field == "FileName2"
    assert "gone.png" in caught.value.message


async def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="is not a file"):
        await read_files([tmp_path], MMS_RULES, MMS_FIELDS)


def test_a_files_repr_never_dumps_its_bytes() -> None:
    assert repr(LodgeFile("a.png", PNG * 1000)) == "LodgeFile('a.png', 32000 bytes)"
