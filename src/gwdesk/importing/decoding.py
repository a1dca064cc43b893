"""Bytes of a recipient file to text, whatever tool wrote it.

Spreadsheets and CRMs write CSV as UTF-8 (with or without a BOM), UTF-16 (Excel's
"Unicode text", with a BOM) or the Windows code page (cp1252 on western desktops).
The rule is: a BOM decides; otherwise strict UTF-8 (which almost never decodes
text that is not UTF-8); otherwise cp1252. Files that are not text at all
(workbooks, PDFs, images, random bytes) are refused with a reason instead of
being read as garbage rows.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: Bigger files are refused before reading: ~1.5 million rows of number and name.
MAX_FILE_BYTES: Final = 50 * 1024 * 1024
_SAMPLE: Final = 64 * 1024
_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 LE with BOM"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE with BOM"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8 with BOM"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 LE with BOM"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE with BOM"),
)
_SIGNATURES: Final = (
    (b"PK\x03\x04", "a zip archive (an Excel .xlsx or OpenDocument workbook?)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old-style Excel (.xls) or Word file"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
)
_SAVE_AS_CSV: Final = "Open it in its program and save it as CSV, then import that."
#: Control characters text files do not contain (tab, newlines and form feed aside).
_CONTROL: Final = frozenset(range(32)) - {9, 10, 12, 13}


class ImportFailed(Exception):
    """A file or text that cannot be read as a recipient list; `message` is for the operator."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ImportCancelled(Exception):
    """The operator cancelled the import."""


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str
    """How the bytes were read, in words ("UTF-8 with BOM", "Windows-1252"...)."""
    nuls_removed: int = 0


def read_file_bytes(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, refusing what is not a plain, readable, reasonably sized file."""
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ImportFailed(f"{path.name} is not a file.")
        if size > limit:
            raise ImportFailed(
                f"{path.name} is {size / 1_048_576:.0f} MB; gwdesk imports recipient files "
                f"up to {limit / 1_048_576:.0f} MB. Split it into smaller files."
            )
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ImportFailed(f"{path.name} cannot be read: {exc.strerror or exc}.") from None
    if len(data) > limit:  # it grew while we looked
        raise ImportFailed(f"{path.name} is bigger than {limit / 1_048_576:.0f} MB.")
    return data


def _utf16_without_bom(sample: bytes) -> str | None:
    """UTF-16 written without a BOM shows as a NUL in every other byte of ASCII text."""
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    even_nuls, odd_nuls = even.count(0), odd.count(0)
    if odd_nuls > 0.4 * len(odd) and even_nuls < 0.05 * len(even):
        return "utf-16-le"
    if even_nuls > 0.4 * len(even) and odd_nuls < 0.05 * len(odd):
        return "utf-16-be"
    return None


def _refuse_binary(data: bytes) -> None:
    for signature, what in _SIGNATURES:
        if data.startswith(signature):
            raise ImportFailed(f"This is {what}, not a CSV or text file. {_SAVE_AS_CSV}")
    sample = data[:_SAMPLE]
    controls = sum(1 for byte in sample if byte in _CONTROL)
    if controls > max(8, len(sample) // 100):
        raise ImportFailed(
            f"This does not look like a text file: {controls:,} of its first "
            f"{len(sample):,} bytes are control or NUL bytes. {_SAVE_AS_CSV}"
        )


def _strict(data: bytes, codec: str, label: str, skipped: int = 0) -> Decoded:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        position = skipped + exc.start + 1
        raise ImportFailed(
            f"The file reads as {label} but byte {position:,} is not valid there; "
            "it may be damaged, or saved in a mix of encodings."
        ) from None
    return _finish(text, label)


def _finish(text: str, label: str) -> Decoded:
    nuls = text.count("\x00")
    if nuls:
        text = text.replace("\x00", "")
    if not text.strip():
        raise ImportFailed("The file is empty: there is no recipient in it.")
    return Decoded(text, label, nuls)


def decode(data: bytes) -> Decoded:
    """Text of a recipient file: BOM first, then strict UTF-8, then cp1252."""
    if not data.strip():
        raise ImportFailed("The file is empty: there is no recipient in it.")
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            return _strict(data[len(bom) :], codec, label, len(bom))
    guessed = _utf16_without_bom(data[:_SAMPLE])
    if guessed is not None:
        return _strict(data, guessed, "UTF-16 LE" if guessed.endswith("le") else "UTF-16 BE")
    _refuse_binary(data)
    try:
        return _finish(data.decode("utf-8"), "UTF-8")
    except UnicodeDecodeError:
        pass
    # cp1252 leaves five bytes undefined; they become U+FFFD rather than failing the file.
    return _finish(data.decode("cp1252", errors="replace"), "Windows-1252")
