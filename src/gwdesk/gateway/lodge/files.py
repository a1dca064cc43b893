"""MMS and fax files: read, checked against the contract's limits, typed and base64-encoded.

Everything here happens before any request, so a file the gateway would refuse is
reported with the field it belongs to and nothing is sent. A file's type comes from
its extension and is confirmed by its first bytes (a renamed program is refused, as
the gateway refuses it). Files given as paths are measured first and read off the
event loop, so a 10 MB fax does not freeze the console; the console may also pass
files it already holds in memory (`LodgeFile`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from gwdesk.domain.files import extension_of
from gwdesk.domain.hidden_chars import describe_hidden, first_hidden, visible
from gwdesk.gateway.errors import ValidationError
from gwdesk.gateway.lodge.xml import clean_text

KB: Final = 1024
MAX_FILE_NAME: Final = 255
#: Files at least this big are read and encoded on a worker thread.
THREAD_THRESHOLD: Final = 256 * KB


@dataclass(frozen=True, slots=True)
class LodgeFile:
    """A file to attach, already in memory (the console's drag and drop, a test)."""

    file_name: str
    content: bytes

    def __repr__(self) -> str:
        return f"LodgeFile({self.file_name!r}, {len(self.content)} bytes)"


FileSource = Path | LodgeFile
"""A file by path (read when sending) or in memory."""


@dataclass(frozen=True, slots=True)
class CheckedFile:
    """A file that passed every client-side check, ready to be sent."""

    file_name: str
    content: bytes
    content_type: str

    @property
    def size(self) -> int:
        return len(self.content)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    def base64(self) -> str:
        return base64.b64encode(self.content).decode("ascii")

    def __repr__(self) -> str:
        return f"CheckedFile({self.file_name!r}, {self.content_type}, {self.size} bytes)"


def _starts(*prefixes: bytes) -> Callable[[bytes], bool]:
    return lambda data: data.startswith(prefixes)


def _mpeg_audio(data: bytes) -> bool:
    return data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF and data[1] >= 0xE0)


def _iso_media(data: bytes) -> bool:
    return data[4:8] == b"ftyp"


def _text(data: bytes) -> bool:
    """Text has no NUL bytes; a binary file renamed `.txt` almost always does."""
    return b"\x00" not in data[:8192]


@dataclass(frozen=True, slots=True)
class FileType:
    content_type: str
    looks_right: Callable[[bytes], bool]
    label: str


_JPEG = FileType("image/jpeg", _starts(b"\xff\xd8\xff"), "JPEG image")
_TIFF = FileType("image/tiff", _starts(b"II*\x00", b"MM\x00*"), "TIFF image")
_TEXT = FileType("text/plain", _text, "text file")


@dataclass(frozen=True, slots=True)
class FileRules:
    """What one kind of message may carry, and the parameter names to blame."""

    kind: str
    max_files: int
    max_bytes: int
    size_label: str
    types: Mapping[str, FileType]

    @property
    def extensions(self) -> str:
        return ", ".join(sorted(self.types))


MMS_RULES: Final = FileRules(
    "an MMS",
    max_files=3,
    max_bytes=400 * KB,
    size_label="400 KB",
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
)
FAX_RULES: Final = FileRules(
    "a fax",
    max_files=3,
    max_bytes=10 * KB * KB,
    size_label="10 MB",
    types=MappingProxyType(
        {
            "pdf": FileType("application/pdf", _starts(b"%PDF-"), "PDF document"),
            "tif": _TIFF,
            "tiff": _TIFF,
            "txt": _TEXT,
        }
    ),
)


@dataclass(frozen=True, slots=True)
class Fields:
    """The request fields a file problem is reported under (they differ per operation)."""

    names: tuple[str, ...]
    """The file-name field of each slot (`FileName`, `FileName2`, ...)."""
    content: str
    """The field of the files as a whole (count and total size)."""

    def name(self, index: int) -> str:
        return self.names[min(index, len(self.names) - 1)]


MMS_FIELDS: Final = Fields(("FileName", "FileName2", "FileName3"), "MMSContentBase64")
FAX_FIELDS: Final = Fields(("FileName", "FileName2", "FileName3"), "objFile")


def document_fields(message: int) -> Fields:
    label = f"Message {message} Attachment"
    return Fields(tuple(f"{label} {n}" for n in (1, 2, 3)), label)


def _refuse(message: str, field: str) -> ValidationError:
    return ValidationError(message, field=field, status=None)


def check_name(name: str, field: str) -> str:
    """A plain file name that shows as what it is.

    The recipient sees the name: a path is refused, and so is a character that hides
    itself (a bidirectional override turns `invoice<U+202E>fdp.txt` into what looks
    like `invoicetxt.pdf`; zero-width and control characters disguise a name).
    """
    name = name.strip()
    if not name:
        raise _refuse("Each file needs a name.", field)
    if len(name) > MAX_FILE_NAME:
        raise _refuse(
            f"The file name {visible(name)[:40]!r}… is longer than {MAX_FILE_NAME} characters.",
            field,
        )
    if any(ch in name for ch in "/\\"):
        raise _refuse(f"{visible(name)[:60]!r} must be a plain file name.", field)
    hidden = first_hidden(name)
    if hidden is not None:
        raise _refuse(
            f"The file name {visible(name)[:80]!r} holds {describe_hidden(hidden)}; "
            "rename the file.",
            field,
        )
    return clean_text(name, field)


def check_file(name: str, data: bytes, rules: FileRules, field: str) -> CheckedFile:
    """Type by extension, confirmed by the first bytes; empty files are refused."""
    file_name = check_name(name, field)
    extension = extension_of(file_name)
    file_type = rules.types.get(extension)
    if file_type is None:
        shown = f".{extension} files" if extension else "files without an extension"
        raise _refuse(
            f"{file_name}: {shown} cannot be sent in {rules.kind}; use {rules.extensions}.", field
        )
    if not data:
        raise _refuse(f"{file_name} is empty.", field)
    if not file_type.looks_right(data):
        raise _refuse(
            f"{file_name} does not look like a {file_type.label}, although its name says so.",
            field,
        )
    return CheckedFile(file_name, data, file_type.content_type)


def _too_many(count: int, rules: FileRules, fields: Fields) -> ValidationError:
    return _refuse(
        f"{rules.kind[0].upper()}{rules.kind[1:]} takes at most {rules.max_files} files; "
        f"{count} were given, so nothing was sent.",
        fields.content,
    )


def _too_big(total: int, rules: FileRules, fields: Fields) -> ValidationError:
    return _refuse(
        f"The files of {rules.kind} come to {total:,} bytes; at most {rules.max_bytes:,} "
        f"({rules.size_label}) are allowed, so nothing was sent.",
        fields.content,
    )


def _size_of(source: FileSource, field: str) -> int:
    if isinstance(source, LodgeFile):
        return len(source.content)
    try:
        info = source.stat()
    except OSError as exc:
        raise _refuse(f"Cannot read {source}: {exc.strerror or exc}.", field) from None
    if not os.path.isfile(source):
        raise _refuse(f"{source} is not a file.", field)
    return info.st_size


def _read(source: FileSource, limit: int, field: str) -> tuple[str, bytes]:
    if isinstance(source, LodgeFile):
        return source.file_name, source.content
    try:
        with source.open("rb") as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        raise _refuse(f"Cannot read {source}: {exc.strerror or exc}.", field) from None
    return source.name, data


def _check_all(
    sources: Sequence[FileSource], rules: FileRules, fields: Fields
) -> list[CheckedFile]:
    sizes = [_size_of(source, fields.name(i)) for i, source in enumerate(sources)]
    if sum(sizes) > rules.max_bytes:
        raise _too_big(sum(sizes), rules, fields)
    checked: list[CheckedFile] = []
    for index, source in enumerate(sources):
        field = fields.name(index)
        name, data = _read(source, rules.max_bytes, field)
        checked.append(check_file(name, data, rules, field))
    # Sizes are measured again: a file may have grown between stat and read.
    total = sum(f.size for f in checked)
    if total > rules.max_bytes:
        raise _too_big(total, rules, fields)
    return checked


async def read_files(
    sources: Sequence[FileSource], rules: FileRules, fields: Fields
) -> list[CheckedFile]:
    """Check the count first (nothing is read), then sizes, then read and type each file."""
    if len(sources) > rules.max_files:
        raise _too_many(len(sources), rules, fields)
    in_memory = all(isinstance(s, LodgeFile) for s in sources)
    if in_memory and sum(_size_of(s, fields.content) for s in sources) < THREAD_THRESHOLD:
        return _check_all(sources, rules, fields)
    return await asyncio.to_thread(_check_all, sources, rules, fields)
