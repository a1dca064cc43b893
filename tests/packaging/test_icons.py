"""The committed application icon bitmaps: every size, current with the SVG, well formed."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from gwdesk.ui.app import APP_ID
from gwdesk.ui.theme import app_icon

ROOT = Path(__file__).resolve().parents[2]
ICONS = ROOT / "packaging" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """packaging/render-icons run afresh into a scratch folder."""
    out = tmp_path_factory.mktemp("icons")
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "render-icons"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return out


def largest_difference(a: QImage, b: QImage) -> int:
    a = a.convertToFormat(QImage.Format.Format_RGBA8888)
    b = b.convertToFormat(QImage.Format.Format_RGBA8888)
    assert (a.width(), a.height()) == (b.width(), b.height())
    return max(abs(x - y) for x, y in zip(a.constBits(), b.constBits(), strict=True))  # type: ignore[call-overload]


@pytest.mark.parametrize("size", SIZES)
def test_committed_png_is_the_svg_rendered_at_its_size(rendered: Path, size: int) -> None:
    """Fails when the SVG changed and packaging/render-icons was not run again."""
    name = Path("hicolor", f"{size}x{size}", "apps", f"{APP_ID}.png")
    committed = QImage(str(ICONS / name))
    assert (committed.width(), committed.height()) == (size, size)
    assert largest_difference(committed, QImage(str(rendered / name))) <= 8


def test_ico_holds_png_images_up_to_256(rendered: Path) -> None:
    data = (ICONS / "gwdesk.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    sides = []
    for i in range(count):
        width, _h, _c, _r, _p, _bits, size, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * i : 22 + 16 * i]
        )
        assert data[offset : offset + 8] == PNG
        assert offset + size <= len(data)
        sides.append(width or 256)
    assert sides == [16, 24, 32, 48, 64, 128, 256]
    assert (rendered / "gwdesk.ico").read_bytes()[:6] == data[:6]


def test_icns_holds_png_images_up_to_512() -> None:
    data = (ICONS / "gwdesk.icns").read_bytes()
    assert data[:4] == b"icns"
    assert struct.unpack(">I", data[4:8])[0] == len(data)
    kinds, at = [], 8
    while at < len(data):
        kind, length = data[at : at + 4], struct.unpack(">I", data[at + 4 : at + 8])[0]
        assert data[at + 8 : at + 16] == PNG, kind
        kinds.append(kind)
        at += length
    assert at == len(data)
    assert {b"icp4", b"icp5", b"ic07", b"ic08", b"ic09"} <= set(kinds)


def test_console_window_icon_is_the_svg_at_any_size(qapp) -> None:
    icon = app_icon()
    assert not icon.isNull()
    assert icon.pixmap(512, 512).width() == 512
