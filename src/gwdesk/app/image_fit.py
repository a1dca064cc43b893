"""A picture made to fit an MMS: shrunk under the gateway's size limit, or converted
from a format the gateway does not take (HEIC from a phone, WebP, BMP, TIFF) to JPEG.

An operator attaches the photo they have: often several megabytes, or a HEIC file an
iPhone made. The gateway takes at most 400 KB in all, in JPEG, PNG or GIF. On the
operator's request (never by itself) the picture is decoded, turned upright as its
camera recorded (EXIF orientation), flattened onto white if it has transparency, and
written as JPEG: at full size first, then smaller and at lower quality, step by step,
until it fits `limit`, never below `MIN_SIDE` pixels on its longer side. HEIC needs
pillow-heif; without it such a file is refused with why. Decoding a hostile file is
bounded: Pillow's decompression-bomb guard is on, and no more than
`MAX_SOURCE_BYTES` are read. Blocking: run it off the GUI thread.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from PIL import Image, ImageOps, UnidentifiedImageError

from gwdesk.domain.files import extension_of, format_size

#: Extensions of pictures that can be made to fit (the gateway takes the first three).
FITS_FROM: Final = frozenset(
    {"jpg", "jpeg", "png", "gif", "heic", "heif", "webp", "bmp", "tif", "tiff"}
)
HEIF: Final = frozenset({"heic", "heif"})
MAX_SOURCE_BYTES: Final = 64 * 1024 * 1024
MIN_SIDE: Final = 320
"""A picture is not made smaller than this on its longer side: past it, it says so."""
QUALITIES: Final = (85, 75, 65, 55)


class FitError(ValueError):
    """The picture cannot be made to fit; the message says why, in plain words."""


@dataclass(frozen=True, slots=True)
class FittedPicture:
    name: str
    """The original name with `.jpg` for its extension."""
    data: bytes
    width: int
    height: int
    from_size: int
    from_width: int
    from_height: int

    def summary(self) -> str:
        """`Shrunk from 2.3 MB (4032×3024) to 381 KB (1600×1200).`"""
        return (
            f"Made to fit from {format_size(self.from_size)} ({self.from_width}×{self.from_height}) "
            f"to {format_size(len(self.data))} ({self.width}×{self.height}), as JPEG."
        )


def can_fit(name: str, size: int, limit: int, refused: bool) -> bool:
    """Whether to offer it: a picture too big for `limit`, or one the gateway refuses."""
    return extension_of(name) in FITS_FROM and (size > limit or refused)


def read_and_fit(path: Path, limit: int) -> FittedPicture:
    """The picture at `path`, made to fit `limit` bytes (see the module docstring)."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise FitError(f"{path.name} cannot be read: {exc.strerror or exc}.") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise FitError(
            f"{path.name} is larger than {format_size(MAX_SOURCE_BYTES)}: not a picture to send."
        )
    return fit_picture(path.name, data, limit)


def fit_picture(name: str, data: bytes, limit: int) -> FittedPicture:
    """`data`, a picture called `name`, as a JPEG of at most `limit` bytes."""
    if extension_of(name) in HEIF:
        _heif_opener(name)
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.load()
            picture = ImageOps.exif_transpose(opened) or opened
            width, height = picture.size
            flat = _flattened(picture)
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as exc:
        raise FitError(f"{name} could not be read as a picture ({_why(exc)}).") from None
    scale = 1.0
    while True:
        shown = flat if scale == 1.0 else _scaled(flat, scale)
        for quality in QUALITIES:
            encoded = _jpeg(shown, quality)
            if len(encoded) <= limit:
                stem = name.rpartition(".")[0] if "." in name else name
                return FittedPicture(f"{stem}.jpg", encoded, *shown.size, len(data), width, height)
        if max(shown.size) <= MIN_SIDE:
            raise FitError(
                f"{name} does not fit {format_size(limit)} even at {shown.size[0]}×{shown.size[1]}: "
                "remove another file to leave it more room."
            )
        # The bytes grow about with the pixels: aim under the limit, then step on.
        scale *= max(0.5, min(0.9, math.sqrt(limit / len(encoded)) * 0.95))
        scale = max(scale, MIN_SIDE / max(flat.size))


def _heif_opener(name: str) -> None:
    try:
        from pillow_heif import register_heif_opener
    except ImportError:
        raise FitError(
            f"{name} is a HEIC picture; converting it needs pillow-heif, which is not "
            "installed here. Save it as JPEG on the phone or computer first."
        ) from None
    register_heif_opener()


def _flattened(picture: Image.Image) -> Image.Image:
    """RGB, transparency shown over white (as a phone shows a JPEG's missing alpha)."""
    if picture.mode in ("RGBA", "LA", "P", "PA"):
        rgba = picture.convert("RGBA")
        white = Image.new("RGB", rgba.size, (255, 255, 255))
        white.paste(rgba, mask=rgba.getchannel("A"))
        return white
    return picture.convert("RGB")


def _scaled(picture: Image.Image, scale: float) -> Image.Image:
    width, height = picture.size
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return picture.resize(size, Image.Resampling.LANCZOS)


def _jpeg(picture: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=quality, optimize=True, progressive=True)
    return out.getvalue()


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200]
    return text or type(exc).__name__
