"""A picture made to fit an MMS (`gwdesk.app.image_fit`): shrunk under the limit as JPEG,
upright, flattened onto white, HEIC converted, and hostile files refused with why."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from PIL import Image

from gwdesk.app.image_fit import MIN_SIDE, FitError, can_fit, fit_picture, read_and_fit

LIMIT = 400 * 1024


def noisy(width: int, height: int, mode: str = "RGB") -> Image.Image:
    """A picture that compresses badly, as a photo does."""
    rng = random.Random(7)
    channels = len(mode)
    data = bytes(rng.randrange(256) for _ in range(width * height * channels))
    return Image.frombytes(mode, (width, height), data)


def encoded(picture: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    picture.save(out, kind, **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def photo() -> bytes:
    return encoded(noisy(1600, 1200), "PNG")


def test_a_photo_too_big_is_shrunk_under_the_limit_as_jpeg(photo: bytes) -> None:
    assert len(photo) > LIMIT
    fitted = fit_picture("holiday.png", photo, LIMIT)
    assert fitted.name == "holiday.jpg"
    assert len(fitted.data) <= LIMIT
    assert fitted.data.startswith(b"\xff\xd8\xff")
    assert (fitted.from_width, fitted.from_height) == (1600, 1200)
    assert fitted.width < 1600
    assert fitted.width / fitted.height == pytest.approx(4 / 3, rel=0.01)
    assert "as JPEG" in fitted.summary()


def test_a_picture_that_fits_already_keeps_its_size() -> None:
    small = encoded(Image.new("RGB", (640, 480), (200, 30, 30)), "PNG")
    fitted = fit_picture("red.png", small, LIMIT)
    assert (fitted.width, fitted.height) == (640, 480)


def test_a_picture_is_turned_upright_as_its_camera_recorded() -> None:
    sideways = Image.new("RGB", (400, 300), (10, 120, 200))
    exif = sideways.getexif()
    exif[0x0112] = 6  # Orientation: rotate 90° clockwise to view
    data = encoded(sideways, "JPEG", exif=exif.tobytes())
    fitted = fit_picture("portrait.jpg", data, LIMIT)
    assert (fitted.width, fitted.height) == (300, 400)


def test_transparency_is_shown_over_white() -> None:
    clear = Image.new("RGBA", (200, 200), (0, 0, 0, 0))
    fitted = fit_picture("logo.png", encoded(clear, "PNG"), LIMIT)
    with Image.open(io.BytesIO(fitted.data)) as result:
        assert result.convert("RGB").getpixel((100, 100)) == (255, 255, 255)


def test_a_heic_picture_is_converted_to_jpeg() -> None:
    pillow_heif = pytest.importorskip("pillow_heif")
    heif = pillow_heif.from_pillow(Image.new("RGB", (320, 240), (0, 150, 0)))
    out = io.BytesIO()
    heif.save(out, quality=80)
    fitted = fit_picture("IMG_0042.HEIC", out.getvalue(), LIMIT)
    assert fitted.name == "IMG_0042.jpg"
    assert fitted.data.startswith(b"\xff\xd8\xff")
    assert (fitted.width, fitted.height) == (320, 240)


def test_bytes_that_are_no_picture_are_refused_with_why() -> None:
    with pytest.raises(FitError, match=r"setup\.png could not be read as a picture"):
        fit_picture("setup.png", b"MZ\x90\x00" + b"\x00" * 400, LIMIT)


def test_a_decompression_bomb_is_refused_not_decoded() -> None:
    # A PNG header claiming 100,000 × 100,000 pixels: 10 gigapixels never allocated.
    bomb = encoded(Image.new("1", (1, 1)), "PNG")
    header = bomb[:16] + (100_000).to_bytes(4, "big") + (100_000).to_bytes(4, "big") + bomb[24:]
    with pytest.raises(FitError, match="could not be read as a picture"):
        fit_picture("bomb.png", header, LIMIT)


def test_a_limit_no_picture_can_meet_is_said_not_looped_on(photo: bytes) -> None:
    with pytest.raises(FitError, match=r"does not fit 1\.0 KB"):
        fit_picture("holiday.png", photo, 1024)


def test_the_smallest_made_is_no_smaller_than_the_least_side(photo: bytes) -> None:
    fitted = fit_picture("holiday.png", photo, 40 * 1024)
    assert max(fitted.width, fitted.height) >= MIN_SIDE


def test_a_file_that_cannot_be_read_is_said(tmp_path: Path) -> None:
    with pytest.raises(FitError, match="cannot be read"):
        read_and_fit(tmp_path / "gone.jpg", LIMIT)


def test_only_pictures_too_big_or_refused_are_offered() -> None:
    assert can_fit("photo.jpg", 2_000_000, LIMIT, refused=False)
    assert can_fit("IMG_1.heic", 900_000, LIMIT, refused=True)
    assert not can_fit("photo.jpg", 100_000, LIMIT, refused=False)
    assert not can_fit("song.mp3", 2_000_000, LIMIT, refused=False)
    assert not can_fit("setup.exe", 10, LIMIT, refused=True)
