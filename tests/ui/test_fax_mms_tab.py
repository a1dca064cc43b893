"""Fax/MMS tab, MMS against a sandbox over loopback: what reaches the gateway, what never does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from gwdesk.app.media import Mode
from gwdesk.domain.models import Secret
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import sandbox_profile
from gwdesk.ui.sandbox_process import SandboxAddresses
from gwdesk.ui.widgets.validity import is_invalid
from tests.contract.lodge_client_support import png
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.fax_mms_support import (
    attach,
    lodged,
    main_window,
    open_tab,
    picture,
    send,
    sha,
    write,
)
from tests.ui.screenshot_support import WINDOW, shot


async def test_an_mms_with_a_png_attachment_reaches_the_sandbox(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    data = picture()
    await attach(tab.mms.attachments, write(tmp_path, "sunset.png", data))
    tab.mms.recipient.set_text("0412 345 678")
    tab.mms.subject.setText("Your new card")
    tab.mms.text.setPlainText("Here it is.")
    await send(tab)
    [row] = lodged(sandbox)
    assert (row["type"], row["to_number"], row["subject"], row["message"]) == (
        "MMS",
        "61412345678",
        "Your new card",
        "Here it is.",
    )
    [stored] = row["attachments"]
    assert (stored["file_name"], stored["sha256"]) == ("sunset.png", sha(data))
    assert "Message sent successfully." in tab.status_label.text()
    assert [e.channel for e in tab.history.entries()] == ["MMS"]
    assert ui.session.store is not None
    assert [e.channel for e in ui.session.store.history.since(tab._started)] == ["MMS"]


async def test_an_mms_by_url_lodges_the_url(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    tab.mode_buttons[Mode.MMS_URL].click()
    tab.mms.recipient.set_text("+61 412 345 678")
    tab.mms.subject.setText("Spring sale")
    tab.mms.url.setText("https://example.com/offer.jpg")
    await send(tab)
    [row] = lodged(sandbox)
    assert (row["type"], row["subject"], row["url"]) == (
        "MMS",
        "Spring sale",
        "https://example.com/offer.jpg",
    )


async def test_a_multi_mms_to_three_recipients_lodges_three(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    tab.mode_buttons[Mode.MULTI_MMS].click()
    data = picture()
    await attach(tab.mms.attachments, write(tmp_path, "flyer.png", data))
    tab.mms.recipients.set_text("0412 345 678\n0412 345 679\n+61 412 345 670")
    assert tab.mms.recipients.feedback.text() == "3 recipients ready"
    tab.mms.subject.setText("Open day")
    await send(tab)
    rows = lodged(sandbox)
    assert [r["to_number"] for r in rows] == ["61412345678", "61412345679", "61412345670"]
    assert {r["attachments"][0]["sha256"] for r in rows} == {sha(data)}
    entries = tab.history.entries()
    assert [e.recipients for e in entries] == ["61412345678", "61412345679", "61412345670"]
    assert all(e.ok and e.message_id for e in entries)
    assert tab.status_label.text() == "Multi-MMS: 3 of 3 messages lodged."


async def test_an_unusable_recipient_is_refused_at_the_field_without_a_request(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "a.png", png()))
    tab.mms.recipient.set_text("0412")
    await send(tab)
    assert is_invalid(tab.mms.recipient.edit)
    assert "not usable" in tab.mms.recipient.feedback.text()
    assert lodged(sandbox) == []


async def test_a_refused_send_keeps_every_input_and_points_at_the_field(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "a.png", png()))
    tab.mms.recipient.set_text("0412 345 678")
    subject = "S" * 150  # the client lets it through; the gateway refuses it
    tab.mms.subject.setText(subject)
    tab.mms.text.setPlainText("Kept text")
    await send(tab)
    assert lodged(sandbox) == []
    assert is_invalid(tab.mms.subject)
    assert "MMSSubject is longer than 100 characters" in tab.mms.subject_error.text()
    assert (tab.mms.recipient.text(), tab.mms.subject.text(), tab.mms.text.toPlainText()) == (
        "0412 345 678",
        subject,
        "Kept text",
    )
    assert tab.mms.attachments.names() == ["a.png"]
    [entry] = tab.history.entries()
    assert not entry.ok


async def test_ctrl_enter_sends(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "a.png", png()))
    tab.mms.recipient.set_text("0412 345 678")
    qtbot.keyClick(tab.mms.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    await wait_until(lambda: not tab.sending())
    assert len(lodged(sandbox)) == 1


async def test_the_profiles_lodge_port_is_shown(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any
) -> None:
    tab = await open_tab(ui, sandbox, qtbot)
    assert tab.port_label.text() == "Via Lodge · SOAP 1.2 (the profile's port)"


async def test_cancelling_a_slow_send_keeps_every_input(
    ui: UiBundle, sandbox_factory: Any, qtbot: Any, tmp_path: Path
) -> None:
    slow = sandbox_factory(faults="lodge:latency=5")
    tab = await open_tab(ui, slow, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "a.png", png()))
    tab.mms.recipient.set_text("0412 345 678")
    tab.send_button.click()
    await wait_until(lambda: tab.status_label.text().startswith("Sending MMS to +61 412 345 678"))
    assert (tab.cancel_button.isHidden(), tab.send_button.isEnabled()) == (False, False)
    tab.cancel_button.click()
    assert not tab.sending()
    assert tab.status_label.text().startswith("Cancelled. The gateway may already have lodged it")
    assert (tab.cancel_button.isHidden(), tab.send_button.isEnabled()) == (True, True)
    assert (tab.mms.recipient.text(), tab.mms.attachments.names()) == ("0412 345 678", ["a.png"])


async def test_a_profile_without_a_lodge_url_says_so(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
    await ui.session.activate(profile.model_copy(update={"lodge_url": None}), Secret("demo"))
    tab = await open_tab(ui, None, qtbot)
    assert "no Lodge URL" in tab.port_label.text()
    await attach(tab.mms.attachments, write(tmp_path, "a.png", png()))
    tab.mms.recipient.set_text("0412 345 678")
    await send(tab)
    assert "set its Lodge URL" in tab.status_label.text()
    assert lodged(sandbox) == []


async def test_sending_with_no_gateway_connected_says_so(
    ui: UiBundle, qtbot: Any, tmp_path: Path
) -> None:
    tab = await open_tab(ui, None, qtbot)
    await attach(tab.mms.attachments, write(tmp_path, "a.png", png()))
    tab.mms.recipient.set_text("0412 345 678")
    await send(tab)
    assert tab.status_label.text() == "No gateway is connected yet: choose a profile first."


async def test_screenshot_fax_mms(
    ui: UiBundle,
    sandbox: SandboxThread,
    qtbot: Any,
    tmp_path: Path,
    screenshots_dir: Path | None,
) -> None:
    window, tab = await main_window(ui, sandbox, qtbot)
    panel = tab.mms.attachments
    await attach(
        panel,
        write(tmp_path, "storefront.png", picture(640, 420, 200)),
        write(tmp_path, "voucher.png", picture(300, 300, 20)),
        write(tmp_path, "terms.txt", b"Offer valid until 30 June.\nOne voucher per customer.\n"),
    )
    tab.mms.recipient.set_text("0412 345 678")
    tab.mms.subject.setText("Grand opening this Saturday")
    tab.mms.text.setPlainText(
        "Hi Sam, our new store opens on Saturday at 9 am.\nShow the voucher at the counter."
    )
    await send(tab)
    panel.list.setCurrentRow(0)
    assert tab.history.entries()[0].ok
    await shot(window, screenshots_dir, "fax_mms.png", WINDOW)


async def test_screenshot_fax_mms_multi(
    ui: UiBundle,
    sandbox: SandboxThread,
    qtbot: Any,
    tmp_path: Path,
    screenshots_dir: Path | None,
) -> None:
    window, tab = await main_window(ui, sandbox, qtbot)
    tab.mode_buttons[Mode.MULTI_MMS].click()
    panel = tab.mms.attachments
    await attach(panel, write(tmp_path, "open-day.png", picture(500, 320, 280)))
    tab.mms.recipients.set_text("0412 345 678\n0412 345 679\n+61 413 222 333")
    tab.mms.subject.setText("Open day: Saturday 10 am")
    tab.mms.text.setPlainText("Bring the family: free coffee and a sausage sizzle.")
    await send(tab)
    await attach(
        panel,
        write(
            tmp_path,
            "quarterly-promotion-installer-for-all-stores-2026-final-v3.exe",
            b"MZ\x90\x00" * 64,
        ),
    )
    assert len(tab.history.entries()) == 3
    multi = await shot(window, screenshots_dir, "fax_mms_multi.png", WINDOW)
    tab.mode_buttons[Mode.MMS_URL].click()
    tab.mms.url.setText("https://example.com/open-day.jpg")
    assert tab.mms.url.isVisible()
    by_url = await shot(window, screenshots_dir, "fax_mms_url.png", WINDOW)
    tab.mode_buttons[Mode.MMS].click()
    panel.clear()
    assert not tab.mms.url.isVisible()
    empty = await shot(window, screenshots_dir, "fax_mms_empty.png", WINDOW)
    assert len({bytes(image.constBits()) for image in (multi, by_url, empty)}) == 3


async def test_a_multi_mms_on_an_http_profile_goes_by_soap_1_1(
    ui: UiBundle, sandbox: SandboxThread, qtbot: Any, tmp_path: Path
) -> None:
    profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
    await ui.session.activate(
        profile.model_copy(update={"lodge_port": "http_post"}), Secret("demo")
    )
    tab = await open_tab(ui, None, qtbot)
    tab.mode_buttons[Mode.MULTI_MMS].click()
    assert tab.port_label.text().startswith("Via Lodge · SOAP 1.1 (multi-MMS documents need SOAP")
    await attach(tab.mms.attachments, write(tmp_path, "a.png", png()))
    tab.mms.recipients.set_text("0412 345 678\n0412 345 679")
    await send(tab)
    assert len(lodged(sandbox)) == 2
