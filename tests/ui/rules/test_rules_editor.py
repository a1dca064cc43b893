"""The Keyword rules window on a real profile file: listing, adding (refusals at their
field, a forward's secret shown once), moving, turning, removing, testing a reply, and
what the rules did; every store and keyring call off the GUI thread."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest
from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from gwdesk.app.rule_editing import RuleSecrets, RulesFlow
from gwdesk.domain.models import Secret
from gwdesk.domain.reply_rules import Draft
from gwdesk.profiles import PasswordVault
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from gwdesk.store.stored_settings import StoredSettings
from gwdesk.ui.controller import default_tabs
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.plain_text import tooltip
from gwdesk.ui.rules.add_form import AddRuleDialog
from gwdesk.ui.rules.dialog import RulesDialog
from gwdesk.ui.rules.opener import RulesOpener
from gwdesk.ui.rules.secret_note import SecretDialog
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.rules.support import (
    HOSTILE_ERROR,
    HOSTILE_NAME,
    PROFILE,
    RULES,
    add_rules,
    cell,
    opened,
    record_runs,
)

FORWARD = Draft("To the CRM", "first word", "BOOK", forward="http://127.0.0.1:9/hook")


async def add_form(dialog: RulesDialog) -> AddRuleDialog:
    dialog.add_button.click()
    await wait_until(lambda: dialog.add_form is not None and dialog.add_form.isVisible())
    assert dialog.add_form is not None
    return dialog.add_form


def type_rule(form: AddRuleDialog, draft: Draft) -> None:
    form.name.setText(draft.name)
    form.match.setCurrentIndex(form.match.findData(draft.match))
    form.value.setText(draft.value)
    form.reply.setPlainText(draft.reply)
    form.per_day.setValue(draft.per_day)
    form.assign.setText(draft.assign)
    form.state.setCurrentIndex(form.state.findData(draft.state))
    form.tag.setText(draft.tag)
    form.forward.setText(draft.forward)


async def names_kept(flow: RulesFlow) -> list[str]:
    rules = await asyncio.to_thread(flow.rules)
    return [rule.name for rule in rules.rules]


# ---- listing -------------------------------------------------------------------------


async def test_the_rules_are_listed_in_the_order_they_run(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, *RULES)
    dialog = await opened(ui, qtbot, flow, 3)
    assert [cell(dialog, row, 0) for row in range(3)] == ["1", "2", "3"]
    assert [cell(dialog, row, 1) for row in range(2)] == ["Hours", "Booking"]
    assert cell(dialog, 0, 2) == "whole: HOURS"
    assert cell(dialog, 1, 3) == "assign alice; state waiting; tag booking"
    assert cell(dialog, 0, 4) == "on"


async def test_a_rules_name_is_shown_as_plain_text_with_its_bidi_override_defused(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, *RULES)
    dialog = await opened(ui, qtbot, flow, 3)
    assert cell(dialog, 2, 1) == "<b>x</b> \ufffdevil\ufffd"
    item = dialog.table.item(2, 1)
    assert item is not None
    assert item.toolTip() == tooltip(HOSTILE_NAME)
    assert "&lt;b&gt;x&lt;/b&gt;" in item.toolTip()


async def test_an_empty_profile_lists_no_rules_and_offers_only_adding(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    dialog = await opened(ui, qtbot, flow, 0)
    assert dialog.add_button.isEnabled()
    assert not dialog.remove_button.isEnabled()
    assert not dialog.up_button.isEnabled()


# ---- adding --------------------------------------------------------------------------


async def test_a_rule_added_in_the_form_is_kept_and_listed_last(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, RULES[0])
    dialog = await opened(ui, qtbot, flow, 1)
    form = await add_form(dialog)
    type_rule(form, RULES[1])
    form.add_button.click()
    await wait_until(lambda: dialog.table.rowCount() == 2, 10, "the new rule listed")
    assert await names_kept(flow) == ["Hours", "Booking"]
    assert cell(dialog, 1, 1) == "Booking"
    assert dialog.selected_name() == "Booking"


async def test_a_refused_keyword_is_shown_at_its_field_and_the_form_keeps_what_was_typed(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    dialog = await opened(ui, qtbot, flow, 0)
    form = await add_form(dialog)
    type_rule(form, Draft("Stopper", "whole", "STOP", reply="Sorry to see you go"))
    form.add_button.click()
    await wait_until(lambda: form.shown_refusal() is not None, 10, "the refusal")
    field, message = form.shown_refusal() or ("", "")
    assert field == "value"
    assert "STOP handling comes first" in message
    assert form.errors["value"].isVisible()
    assert form.isVisible()
    assert form.name.text() == "Stopper"
    assert form.reply.toPlainText() == "Sorry to see you go"
    assert await names_kept(flow) == []


async def test_a_rule_that_does_nothing_is_refused_above_the_actions(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    dialog = await opened(ui, qtbot, flow, 0)
    form = await add_form(dialog)
    type_rule(form, Draft("Idle", "whole", "HELLO"))
    form.add_button.click()
    await wait_until(lambda: form.shown_refusal() is not None, 10, "the refusal")
    assert form.shown_refusal() == ("actions", "A rule does at least one thing.")


async def test_a_reply_that_would_answer_itself_is_refused_at_the_reply(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    dialog = await opened(ui, qtbot, flow, 0)
    form = await add_form(dialog)
    type_rule(form, Draft("Echo", "first word", "HOURS", reply="Hours: 9 to 5"))
    form.add_button.click()
    await wait_until(lambda: form.shown_refusal() is not None, 10, "the refusal")
    assert form.shown_refusal() is not None
    assert form.shown_refusal()[0] == "reply"  # type: ignore[index]


async def test_a_forwarding_rules_secret_is_shown_once_and_is_the_one_in_the_keyring(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow, vault: PasswordVault
) -> None:
    dialog = await opened(ui, qtbot, flow, 0)
    form = await add_form(dialog)
    type_rule(form, FORWARD)
    form.add_button.click()
    await wait_until(lambda: dialog.secret_note is not None, 10, "the secret shown")
    note = dialog.secret_note
    assert isinstance(note, SecretDialog)
    kept = await asyncio.to_thread(vault.get_rule_secret, PROFILE, FORWARD.name)
    assert kept is not None
    assert note.field.text() == kept.reveal()
    assert note.field.isReadOnly()
    assert "not shown again" in note.note.text()


async def test_a_forwarding_rules_secret_is_cleared_when_its_window_closes(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow, vault: PasswordVault
) -> None:
    dialog = await opened(ui, qtbot, flow, 0)
    form = await add_form(dialog)
    type_rule(form, FORWARD)
    form.add_button.click()
    await wait_until(lambda: dialog.secret_note is not None, 10, "the secret shown")
    note = dialog.secret_note
    assert note is not None
    field = note.field
    note.close()
    assert field.text() == ""
    kept = await asyncio.to_thread(vault.get_rule_secret, PROFILE, FORWARD.name)
    assert kept is not None
    assert not any(
        kept.reveal() in (getattr(w, "text", lambda: "")() or "")
        for w in dialog.findChildren(QWidget)
        if w is not field and hasattr(w, "text") and callable(w.text)
    )


async def test_a_forwarding_rules_secret_is_never_logged(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow, vault: PasswordVault, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    dialog = await opened(ui, qtbot, flow, 0)
    form = await add_form(dialog)
    type_rule(form, FORWARD)
    form.add_button.click()
    await wait_until(lambda: dialog.secret_note is not None, 10, "the secret shown")
    kept = await asyncio.to_thread(vault.get_rule_secret, PROFILE, FORWARD.name)
    assert kept is not None
    assert kept.reveal() not in caplog.text


# ---- changing ------------------------------------------------------------------------


async def test_moving_a_rule_down_keeps_the_new_order(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, *RULES[:2])
    dialog = await opened(ui, qtbot, flow, 2)
    dialog.table.selectRow(0)
    dialog.down_button.click()
    await wait_until(lambda: cell(dialog, 0, 1) == "Booking", 10, "the order shown")
    assert await names_kept(flow) == ["Booking", "Hours"]
    assert dialog.selected_name() == "Hours"


async def test_turning_a_rule_off_is_kept_and_shown(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, *RULES[:2])
    dialog = await opened(ui, qtbot, flow, 2)
    dialog.table.selectRow(1)
    dialog.turn_button.click()
    await wait_until(lambda: cell(dialog, 1, 4) == "off", 10, "the rule shown off")
    rules = await asyncio.to_thread(flow.rules)
    assert [rule.on for rule in rules.rules] == [True, False]


async def test_removing_a_forwarding_rule_asks_and_then_deletes_its_secret(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow, vault: PasswordVault
) -> None:
    await add_rules(flow, RULES[0], FORWARD)
    dialog = await opened(ui, qtbot, flow, 2)
    dialog.table.selectRow(1)
    dialog.remove_button.click()
    await wait_until(lambda: dialog.findChild(QMessageBox) is not None, 10, "the question")
    box = dialog.findChild(QMessageBox)
    assert box is not None
    [remove] = [b for b in box.buttons() if b.text() == "Remove"]
    remove.click()
    await wait_until(lambda: dialog.table.rowCount() == 1, 10, "the rule gone")
    assert await names_kept(flow) == ["Hours"]
    assert await asyncio.to_thread(vault.get_rule_secret, PROFILE, FORWARD.name) is None


async def test_a_removal_cancelled_keeps_the_rule(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, RULES[0])
    dialog = await opened(ui, qtbot, flow, 1)
    dialog.table.selectRow(0)
    dialog.remove_button.click()
    await wait_until(lambda: dialog.findChild(QMessageBox) is not None, 10, "the question")
    box = dialog.findChild(QMessageBox)
    assert box is not None
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: not ui.tasks.running("rules-remove", owner=dialog), 10)
    assert await names_kept(flow) == ["Hours"]
    assert dialog.table.rowCount() == 1


# ---- trying --------------------------------------------------------------------------


async def test_a_reply_tested_says_which_rule_it_would_set_off(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, *RULES)
    dialog = await opened(ui, qtbot, flow, 3)
    dialog.test_text.setText("hours?")
    dialog.test_button.click()
    await wait_until(lambda: "Hours: when the reply" in dialog.tested.text(), 10, "the test")


async def test_a_stop_reply_tested_runs_no_rule(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    await add_rules(flow, *RULES)
    dialog = await opened(ui, qtbot, flow, 3)
    dialog.test_text.setText("STOP")
    dialog.test_button.click()
    await wait_until(lambda: "no rule runs" in dialog.tested.text(), 10, "the test")


# ---- what the rules did --------------------------------------------------------------


async def test_a_failed_forward_is_listed_first_with_its_error_as_plain_text(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow, store: LocalStore
) -> None:
    await record_runs(store)
    dialog = await opened(ui, qtbot, flow, 0)
    dialog.pages.setCurrentWidget(dialog.done_list)
    done = dialog.done_list
    await wait_until(lambda: done.forwards_table.rowCount() == 2, 10, "the forwards")
    state = done.forwards_table.item(0, 2)
    error = done.forwards_table.item(0, 4)
    assert state is not None
    assert error is not None
    assert state.text() == "failed"
    assert error.text().startswith("␛[31m<b>refused</b>␛[0m \ufffd")
    assert len(error.text()) <= 300
    assert error.toolTip() == tooltip(HOSTILE_ERROR)
    assert "FAILED" in done.summary.text()


async def test_the_runs_are_listed_latest_first_with_their_outcome(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow, store: LocalStore
) -> None:
    await record_runs(store)
    dialog = await opened(ui, qtbot, flow, 0)
    dialog.pages.setCurrentWidget(dialog.done_list)
    runs = dialog.done_list.runs_table
    await wait_until(lambda: runs.rowCount() == 3, 10, "the runs")
    first, last = runs.item(0, 0), runs.item(2, 4)
    assert first is not None
    assert last is not None
    assert first.text() == "103"
    assert last.text() == "replied: We are open 9 to 5 ␛[31m<b>sure</b>"


# ---- threads and the console ---------------------------------------------------------


class ThreadsSeen:
    """The threads a flow's store and keyring calls ran on."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def note(self) -> None:
        self.threads.append(threading.current_thread().name)


class WatchedSettings(StoredSettings):
    seen: ThreadsSeen

    def get(self, *args: Any, **kwargs: Any) -> Any:
        self.seen.note()
        return super().get(*args, **kwargs)

    def set(self, *args: Any, **kwargs: Any) -> Any:
        self.seen.note()
        return super().set(*args, **kwargs)


@pytest.fixture
def watched(store: LocalStore, vault: PasswordVault) -> tuple[RulesFlow, ThreadsSeen]:
    seen = ThreadsSeen()
    settings = store.settings
    settings.__class__ = WatchedSettings
    assert isinstance(settings, WatchedSettings)
    settings.seen = seen

    def put(rule: str, secret: Secret) -> None:
        seen.note()
        vault.set_rule_secret(PROFILE, rule, secret)

    def delete(rule: str) -> None:
        seen.note()
        vault.delete_rule_secret(PROFILE, rule)

    secrets = RuleSecrets(lambda rule: vault.get_rule_secret(PROFILE, rule), put, delete)
    return RulesFlow(settings, secrets, store.rule_runs), seen


async def test_every_store_and_keyring_call_of_the_window_runs_off_the_gui_thread(
    ui: UiBundle, qtbot: QtBot, watched: tuple[RulesFlow, ThreadsSeen]
) -> None:
    flow, seen = watched
    dialog = await opened(ui, qtbot, flow, 0)
    form = await add_form(dialog)
    type_rule(form, FORWARD)
    form.add_button.click()
    await wait_until(lambda: dialog.table.rowCount() == 1, 10, "the rule added")
    dialog.table.selectRow(0)
    dialog.turn_button.click()
    await wait_until(lambda: cell(dialog, 0, 4) == "off", 10, "the rule turned off")
    dialog.test_text.setText("book now")
    dialog.test_button.click()
    await wait_until(lambda: "would set off" in dialog.tested.text(), 10, "the test")
    main = threading.main_thread().name
    assert seen.threads, "the flow was never called"
    assert main not in seen.threads


async def test_the_file_menu_opens_the_rules_of_the_sessions_profile(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    opener = RulesOpener(window, ui.session, ui.tasks, PasswordVault(),
                         opened_by=window.rules_requested)  # fmt: skip
    await ui.connect(sandbox)
    store = ui.session.store
    assert store is not None
    await add_rules(opener.flow(), RULES[0])  # type: ignore[arg-type]
    window.rules_action.trigger()
    await wait_until(lambda: opener.dialog is not None, 10, "the rules window")
    dialog = opener.dialog
    assert dialog is not None
    await wait_until(lambda: dialog.table.rowCount() == 1, 10, "the profile's rule")
    assert cell(dialog, 0, 1) == "Hours"


async def test_a_profile_change_closes_the_rules_window(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    opener = RulesOpener(window, ui.session, ui.tasks, PasswordVault())
    await ui.connect(sandbox)
    opener.open_dialog()
    dialog = opener.dialog
    assert dialog is not None
    assert dialog.isVisible()
    await ui.connect(sandbox)  # the profile is opened again: a new store
    await wait_until(lambda: not dialog.isVisible(), 10, "the rules window closed")
    assert opener.dialog is None


async def test_the_rules_window_without_a_profile_says_to_choose_one(
    ui: UiBundle, qtbot: QtBot
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, default_tabs())
    qtbot.addWidget(window)
    opener = RulesOpener(window, ui.session, ui.tasks, PasswordVault(),
                         opened_by=window.rules_requested)  # fmt: skip
    window.rules_action.trigger()
    assert opener.dialog is None
    assert "Choose a profile first" in window.statusBar().currentMessage()


async def test_the_add_form_stays_open_while_its_rule_is_being_kept(
    ui: UiBundle, qtbot: QtBot, flow: RulesFlow
) -> None:
    release = threading.Event()

    def slow_add(draft: Draft) -> Any:
        release.wait(10)
        return flow.add(draft)

    host = QMainWindow()  # the last window closing would stop the loop
    qtbot.addWidget(host)
    host.show()
    form = AddRuleDialog(slow_add, ui.tasks, host)
    form.show()
    type_rule(form, FORWARD)
    form.add_button.click()
    await wait_until(lambda: form.busy, 10, "the add started")
    form.reject()
    assert form.isVisible()
    release.set()
    await wait_until(lambda: form.added is not None, 10, "the rule kept")
    assert form.result() == AddRuleDialog.DialogCode.Accepted
