"""MMS and fax attachment rules (contract limits), shared by every operation that takes files.

The type is judged by the file name's extension, then confirmed by the file's first
bytes where a format has a cheap signature, so a renamed `.exe` is refused as well.
Each accepted file is recorded as metadata only (name, type, size, SHA-256): the
sandbox proves the bytes arrived without storing them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from gwdesk.sandbox.engine import Attachment
from gwdesk.sandbox.validation import FieldError

KB: Final = 1024
MAX_FILE_NAME: Final = 255


def _starts(*prefixes: bytes) -> Callable[[bytes], bool]:
    return lambda data: data.startswith(prefixes)


def _mpeg_audio(data: bytes) -> bool:
    return data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF and data[1] >= 0xE0)


def _iso_media(data: bytes) -> bool:
    return data[4:8] == b"ftyp"


def _anything(_data: bytes) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class FileType:
    content_type: str
    looks_right: Callable[[bytes], bool]
    label: str


_JPEG = FileType("image/jpeg", _starts(b"\xff\xd8\xff"), "JPEG image")
_TIFF = FileType("image/tiff", _starts(b"II*\x00", b"MM\x00*"), "TIFF image")
_TEXT = FileType("text/plain", _anything, "text file")


@dataclass(frozen=True, slots=True)
class Limits:
    kind: str
    max_files: int
    max_bytes: int
    types: Mapping[str, FileType]
    size_label: str

    @property
    def extensions(self) -> str:
        return ", ".join(sorted(self.types))


MMS: Final = Limits(
    "an MMS",
    max_files=3,
    max_bytes=400 * KB,
    types=MappingProxyType(
        {
            "jpg": _JPEG,
            "jpeg": _JPEG,
            "png": FileType("image/png", _starts(b"\x89PNG\r\n\x1a\n"), "PNG image"),
            "gif": FileType("image/gif", _starts(b"GIF87a", b"GIF89a"), "GIF image"),
            "txt": _TEXT,
            "amr": FileType("audio/amr", _starts(b"#!AMR"), "AMR audio file"),
            "mp3": FileType("audio/mpeg", _mpeg_audio, "MP3 audio file"),
            "3gp": FileType("video/3gpp", _iso_media, "3GP video"),
            "mp4": FileType("video/mp4", _iso_media, "MP4 video"),
        }
    ),
    size_label="400 KB",
)
FAX: Final = Limits(
    "a fax",
    max_files=3,
    max_bytes=10 * KB * KB,
    types=MappingProxyType(
        {
            "pdf": FileType("application/pdf", _starts(b"%PDF-"), "PDF document"),
            "tif": _TIFF,
            "tiff": _TIFF,
            "txt": _TEXT,
        }
    ),
    size_label="10 MB",
)


def _file_name(name: str | None, field: str) -> str:
    if name is None or not name.strip():
        raise FieldError(field, f"{field} is required for each file.")
    name = name.strip()
    if len(name) > MAX_FILE_NAME:
        raise FieldError(field, f"{field} is longer than {MAX_FILE_NAME} characters.")
    if any(ch in name for ch in "/\\") or any(ord(ch) < 32 or ch == "\x7f" for ch in name):
        raise FieldError(field, f"{field} must be a plain file name: {name[:40]!r}.")
    return name


def attachment(name: str | None, data: bytes, limits: Limits, field: str) -> Attachment:
    """Check one file against `limits` and describe it; FieldError names `field` if refused."""
    file_name = _file_name(name, field)
    extension = file_name.rpartition(".")[2].lower() if "." in file_name else ""
    file_type = limits.types.get(extension)
    if file_type is None:
        shown = f".{extension} files" if extension else "files without an extension"
        raise FieldError(
            field,
            f"{file_name}: {shown} cannot be sent in {limits.kind}; use {limits.extensions}.",
        )
    if not data:
        raise FieldError(field, f"{file_name} is empty.")
    if not file_type.looks_right(data):
        raise FieldError(field, f"{file_name} does not look like a {file_type.label}.")
    return Attachment(
        file_name=file_name,
        content_type=file_type.content_type,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


def check_count(count: int, limits: Limits, field: str) -> None:
    """Refuse too many files before any is decoded."""
    if count > limits.max_files:
        raise FieldError(
            field,
            f"{limits.kind[0].upper()}{limits.kind[1:]} takes at most {limits.max_files} "
            f"files; {count} were given.",
        )


def check_total(files: list[Attachment], limits: Limits, field: str) -> None:
    check_count(len(files), limits, field)
    total = sum(f.size for f in files)
    if total > limits.max_bytes:
        raise FieldError(
            field,
            f"The files of {limits.kind} come to {total:,} bytes; at most "
            f"{limits.max_bytes:,} ({limits.size_label}) are allowed.",
        )
