"""Fax/MMS tab, eFax: a real PDF reaches the sandbox, and its pages are previewed and counted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gwdesk.app.media import Mode
from gwdesk.sandbox.server import SandboxThread
from tests.contract.lodge_client_support import png
from tests.ui.conftest import UiBundle
from tests.ui.fax_mms_support import (
    attach,
    document,
    lodged,
    main_window,
    open_tab,
    picture_tiff,
    send,
    sha,
    write,
)
from tests.ui.screenshot_support import WINDOW, shot


async def test_a_fax_with_a_pdf_reaches_the_sandbox(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    tab.mode_buttons[Mode.FAX].click()
    data = document(2)
    await attach(tab.fax.attachments, write(tmp_path, "invoice.pdf", data))
    tab.fax.recipient.set_text("(02) 9999 8888")
    tab.fax.subject.setText("Invoice 1042")
    tab.fax.text.setPlainText("Two pages follow.")
    await send(tab)
    [row] = lodged(sandbox)
    assert (row["type"], row["to_number"], row["subject"], row["message"]) == (
        "FAX",
        "61299998888",
        "Invoice 1042",
        "Two pages follow.",
    )
    assert [(a["file_name"], a["sha256"]) for a in row["attachments"]] == [
        ("invoice.pdf", sha(data))
    ]
    [entry] = tab.history.entries()
    assert entry.channel == "FAX"
    assert entry.message_id
    assert f"MsgID {entry.message_id}" in tab.status_label.text()


async def test_a_pdf_is_previewed_with_its_page_count(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    tab.mode_buttons[Mode.FAX].click()
    await attach(tab.fax.attachments, write(tmp_path, "invoice.pdf", document(3)))
    assert tab.fax.attachments.row_widget(0).info.text().endswith("· 3 pages")
    preview = tab.fax.attachments.preview
    assert preview.stack.currentWidget() is preview.pdf
    assert preview.pdf.page_count() == 3
    assert preview.pdf.pages_label.text() == "Page 1 of 3"


async def test_a_fax_refuses_an_image_it_cannot_carry(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    tab.mode_buttons[Mode.FAX].click()
    await attach(tab.fax.attachments, write(tmp_path, "photo.png", png()))
    assert ".png files cannot be sent in a fax" in tab.fax.attachments.row_widget(0).reason.text()


async def test_screenshot_fax_mms_fax(
    ui: UiBundle,
    sandbox: SandboxThread,
    qtbot: Any,
    tmp_path: Path,
    screenshots_dir: Path | None,
) -> None:
    window, tab = await main_window(ui, sandbox, qtbot)
    tab.mode_buttons[Mode.FAX].click()
    await attach(
        tab.fax.attachments,
        write(tmp_path, "invoice-1042.pdf", document(3)),
        write(tmp_path, "scan.tif", picture_tiff()),
    )
    tab.fax.recipient.set_text("(02) 9999 8888")
    tab.fax.subject.setText("Invoice 1042")
    tab.fax.text.setPlainText(
        "Attn: Accounts payable\nThree pages follow, plus the signed delivery note."
    )
    await send(tab)
    tab.fax.attachments.list.setCurrentRow(0)
    assert tab.history.entries()[0].ok
    # QPdfView renders its pages on a thread of its own
    await shot(window, screenshots_dir, "fax_mms_fax.png", WINDOW, after=0.5)
    assert tab.fax.attachments.preview.isVisible()
