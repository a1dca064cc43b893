"""Fax/MMS tab attachments: checked when added, the reason at the file, the limits kept."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from PySide6.QtCore import QUrl

from gwdesk.sandbox.server import SandboxThread
from tests.contract.lodge_client_support import png, sized
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.fax_mms_support import attach, drop, lodged, open_tab, picture, send, sha, write


async def test_each_attachment_shows_its_preview_type_and_size(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    data = picture(320, 200)
    await attach(tab.mms.attachments, write(tmp_path, "sunset.png", data))
    row = tab.mms.attachments.row_widget(0)
    assert row.info.text() == f"PNG image · {len(data) / 1024:.1f} KB · 320×200"
    assert not row.thumb.pixmap().isNull()
    assert tab.mms.attachments.preview.stack.currentWidget() is tab.mms.attachments.preview.image
    assert tab.mms.attachments.total_label.text().startswith(f"Total {len(data) / 1024:.1f} KB")


async def test_a_fourth_attachment_is_refused(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    panel = tab.mms.attachments
    paths = [write(tmp_path, f"p{i}.png", png(i + 1)) for i in range(4)]
    await attach(panel, *paths[:3])
    await attach(panel, paths[3])
    assert panel.names() == ["p0.png", "p1.png", "p2.png"]
    assert not panel.error.isHidden()
    assert "at most 3 files, so p3.png was not added" in panel.error.text()
    assert not panel.drop_zone.browse.isEnabled()
    assert lodged(sandbox) == []


async def test_an_exe_is_refused_with_the_reason_at_the_attachment(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "setup.exe", b"MZ\x90\x00" + b"\x00" * 60))
    reason = tab.mms.attachments.row_widget(0).reason
    assert not reason.isHidden()
    assert ".exe files cannot be sent in an MMS" in reason.text()
    tab.mms.recipient.set_text("0412 345 678")
    await send(tab)
    assert tab.status_label.text().startswith("Not sent: setup.exe")
    assert lodged(sandbox) == []


async def test_a_renamed_program_is_refused_with_the_reason_at_the_attachment(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "holiday.png", b"MZ\x90\x00" * 100))
    reason = tab.mms.attachments.row_widget(0).reason
    assert "holiday.png does not look like a PNG image" in reason.text()
    tab.mms.recipient.set_text("0412 345 678")
    await send(tab)
    assert lodged(sandbox) == []


async def test_a_name_disguised_by_a_right_to_left_override_is_refused_at_the_attachment(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    # Shown by a bidi-aware renderer as "invoicetxt.pdf": a text file posing as a PDF.
    await attach(tab.mms.attachments, write(tmp_path, "invoice\u202efdp.txt", b"Pay now\n"))
    reason = tab.mms.attachments.row_widget(0).reason
    assert not reason.isHidden()
    assert "invoice⟨U+202E⟩fdp.txt" in reason.text()
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in reason.text()
    assert "\u202e" not in reason.text()
    tab.mms.recipient.set_text("0412 345 678")
    await send(tab)
    assert tab.status_label.text().startswith("Not sent:")
    assert lodged(sandbox) == []


async def test_the_400_kb_total_is_enforced_before_sending(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    panel = tab.mms.attachments
    big = [write(tmp_path, f"big{i}.png", sized(png(), 210 * 1024)) for i in range(2)]
    await attach(panel, *big)
    assert panel.total_label.property("role") == "error"
    assert "too much" in panel.total_label.text()
    tab.mms.recipient.set_text("0412 345 678")
    await send(tab)
    assert not panel.error.isHidden()
    assert "may carry 409,600 (400 KB) in all" in panel.error.text()
    assert lodged(sandbox) == []


async def test_a_file_bigger_than_the_whole_allowance_is_refused_unread(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "huge.png", sized(png(), 2 * 1024 * 1024)))
    [loaded] = tab.mms.attachments.files()
    assert loaded is not None
    assert loaded.content is None
    assert "huge.png is 2.0 MB: an MMS may carry 400 KB in all" in loaded.error


async def test_dropping_a_file_adds_it(ui: UiBundle, qtbot: Any, tmp_path: Path) -> None:
    tab = await open_tab(ui, None, qtbot)
    panel = tab.mms.attachments
    drop(panel.drop_zone, write(tmp_path, "dropped.png", picture()))
    await wait_until(lambda: panel.count() == 1 and not panel.reading())
    [loaded] = panel.files()
    assert loaded is not None
    assert (loaded.ok, loaded.name) == (True, "dropped.png")


async def test_removing_an_attachment_frees_its_place(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    panel = tab.mms.attachments
    await attach(panel, *(write(tmp_path, f"p{i}.png", png()) for i in range(3)))
    panel.row_widget(1).remove.click()
    assert panel.names() == ["p0.png", "p2.png"]
    assert panel.drop_zone.browse.isEnabled()


async def test_a_dropped_folder_is_refused_with_the_reason_at_it(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    folder = tmp_path / "photos.png"
    folder.mkdir()
    drop(tab.mms.attachments.drop_zone, folder)
    await wait_until(lambda: not tab.mms.attachments.reading())
    assert tab.mms.attachments.row_widget(0).reason.text() == "✗ photos.png is not a file."


async def test_a_dropped_web_link_points_at_mms_by_url(ui: UiBundle, qtbot: Any) -> None:
    tab = await open_tab(ui, None, qtbot)
    drop(tab.mms.attachments.drop_zone, QUrl("https://example.com/offer.jpg"))
    assert tab.mms.attachments.count() == 0
    assert "send an MMS by URL" in tab.mms.attachments.error.text()


async def test_a_file_with_a_long_reason_keeps_the_height_of_every_other_row(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    panel = tab.mms.attachments
    tab.resize(1024, 700)
    tab.show()
    long_name = "a-file-whose-name-goes-on-" * 8 + ".exe"
    await attach(panel, write(tmp_path, "fine.png", picture(40, 40)))
    await attach(panel, write(tmp_path, long_name, b"MZ\x90\x00" + b"\x00" * 60))
    refused = panel.row_widget(1)
    await wait_until(lambda: refused.reason.isVisible(), 10, "the reason shown")
    assert refused.height() == panel.row_widget(0).height()
    assert refused.reason.shown_text().endswith("…")  # cut at the row's edge, on one line
    assert ".exe files cannot be sent in an MMS" in refused.reason.toolTip()
    rows = [panel.list.visualItemRect(panel.list.item(i)) for i in range(2)]
    assert all(panel.list.viewport().rect().contains(rect) for rect in rows)


def photo_png(width: int = 1600, height: int = 1200) -> bytes:
    """A photo too big for an MMS: noise compresses badly, as a camera's picture does."""
    rng = random.Random(11)
    noise = bytes(rng.randrange(256) for _ in range(width * height * 3))
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), noise).save(out, "PNG")
    return out.getvalue()


async def test_a_photo_too_big_is_shrunk_on_request_and_sent(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    panel = tab.mms.attachments
    await attach(panel, write(tmp_path, "<b>holiday<i>.png", photo_png()))
    row = panel.row_widget(0)
    assert row.fit_button.isVisibleTo(row)
    assert row.fit_button.text() == "Shrink to fit"
    assert lodged(sandbox) == []  # nothing happens by itself

    row.fit_button.click()
    await wait_until(lambda: row.name.text() == "<b>holiday<i>.jpg", 20, "the picture fitted")
    loaded = panel.files()[0]
    assert loaded is not None
    assert not loaded.error
    assert loaded.size <= panel.rules.max_bytes
    assert loaded.note.startswith("Made to fit from")
    assert panel.preview.stack.currentWidget() is panel.preview.image  # the result shown
    assert not row.fit_button.isVisibleTo(row)

    tab.mms.recipient.set_text("0412 345 678")
    await send(tab)
    [message] = lodged(sandbox)
    [stored] = message["attachments"]
    assert stored["file_name"] == "<b>holiday<i>.jpg"
    assert stored["sha256"] == sha(loaded.content or b"")


async def test_a_heic_picture_is_offered_as_jpeg(ui: UiBundle, qtbot: Any, tmp_path: Path) -> None:
    pillow_heif = pytest.importorskip("pillow_heif")
    heif = pillow_heif.from_pillow(Image.new("RGB", (320, 240), (0, 150, 0)))
    out = io.BytesIO()
    heif.save(out, quality=80)
    tab = await open_tab(ui, None, qtbot)
    panel = tab.mms.attachments
    await attach(panel, write(tmp_path, "IMG_0042.HEIC", out.getvalue()))
    row = panel.row_widget(0)
    assert row.reason.isVisibleTo(row)  # the gateway does not take HEIC
    assert row.fit_button.text() == "Convert to JPEG"
    row.fit_button.click()
    await wait_until(lambda: row.name.text() == "IMG_0042.jpg", 20, "the picture converted")
    assert not row.reason.isVisibleTo(row)
