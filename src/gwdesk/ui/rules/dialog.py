"""The Keyword rules window: a profile's rules in order, changed and tried here.

One page lists the rules as they run (the first that matches a reply acts on it):
#, name, when, does, on/off, with Add…, Remove, Move up/down and On/Off, and a box
to try a reply's text against them (`RulesFlow.test`: what it would set off, acting
on nothing). The other page is what the rules did (`done_list`). Every read and change
goes through the `RulesFlow` off the GUI thread (settings in the store, secrets in the
keyring); a refusal or failure is said on the page, plain text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.rule_editing import Added, RulesFlow
from gwdesk.domain.errors import InputRefused, StoreError
from gwdesk.domain.reply_rules import Do, Rule, RuleSet
from gwdesk.profiles import KeyringUnavailable
from gwdesk.ui.plain_text import PlainLabel, wrapped_label
from gwdesk.ui.rules.add_form import AddRuleDialog
from gwdesk.ui.rules.cells import RULE_COLUMNS, fill, rule_cells, table
from gwdesk.ui.rules.done_list import SHOWN, Done, DoneByRules
from gwdesk.ui.rules.secret_note import SecretDialog
from gwdesk.ui.tasks import TaskRunner, off_thread
from gwdesk.ui.timers import single_shot
from gwdesk.ui.widgets.field_errors import text_field
from gwdesk.ui.widgets.fitting import fit_on_screen
from gwdesk.ui.widgets.question import answered, question_box
from gwdesk.ui.widgets.validity import set_role

READ_KEY: Final = "rules-read"
CHANGE_KEY: Final = "rules-change"
TEST_KEY: Final = "rules-test"
TEST_MS: Final = 250
"""A test runs this long after the last key typed."""
FOLLOW_MS: Final = 500
"""Changes of a burst (a flood of replies acted on) are read once, this long after."""
FAILED: Final = (StoreError, KeyringUnavailable, InputRefused)


class RulesDialog(QDialog):
    """The rules of the profile `flow` keeps (non-modal; closed when the profile changes)."""

    def __init__(self, flow: RulesFlow, tasks: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.flow = flow
        self.tasks = tasks
        self.rules = RuleSet()
        self.add_form: AddRuleDialog | None = None
        self._busy = False
        """A change is being kept: the buttons wait for it."""
        self.secret_note: SecretDialog | None = None
        self.setWindowTitle("Keyword rules")
        self.setModal(False)

        self.table = table(RULE_COLUMNS, "Keyword rules in order", 3, (2, 20, 20, 0, 3))
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.add_button = self._button("&Add…", "Add a rule", self.open_add_form)
        self.remove_button = self._button("&Remove…", "Remove the selected rule", self.remove)
        self.up_button = self._button("Move &up", "Move the rule up", lambda: self.move_rule(-1))
        self.down_button = self._button(
            "Move do&wn", "Move the rule down", lambda: self.move_rule(1)
        )
        self.turn_button = self._button("&On/Off", "Turn the rule on or off", self.toggle)
        buttons = QVBoxLayout()
        for button in (self.add_button, self.remove_button, self.up_button, self.down_button,
                       self.turn_button):  # fmt: skip
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.state = wrapped_label("What happened")
        self.state.hide()  # until there is something to say
        self.test_text = text_field(
            "A reply to test", limit=2000, placeholder="Type a reply, such as: hours?", clear=True
        )
        self.test_button = self._button("&Test", "Test the reply against the rules", self.test)
        self.test_text.returnPressed.connect(self.test)
        self._test_timer = single_shot(self, TEST_MS, self.test)
        self.test_text.textChanged.connect(lambda _text: self._test_timer.start())
        self.tested = wrapped_label("What the reply would set off")
        test_row = QHBoxLayout()
        test_label = QLabel("Test a re&ply:")
        test_label.setBuddy(self.test_text)
        test_row.addWidget(test_label)
        test_row.addWidget(self.test_text, 1)
        test_row.addWidget(self.test_button)
        hint = PlainLabel(
            "The first rule that matches a reply acts on it; the rest are not looked at. "
            "STOP and START replies are handled first and run no rule."
        )
        hint.setWordWrap(True)
        hint.setProperty("role", "hint")

        rules_page = QWidget()
        listing = QHBoxLayout()
        listing.addWidget(self.table, 1)
        listing.addLayout(buttons)
        page = QVBoxLayout(rules_page)
        page.addWidget(hint)
        page.addLayout(listing, 1)
        page.addWidget(self.state)
        page.addLayout(test_row)
        page.addWidget(self.tested)
        self.done_list = DoneByRules(self._read_done, tasks)
        self.pages = QTabWidget()
        self.pages.addTab(rules_page, "Ru&les")
        self.pages.addTab(self.done_list, "&Done by rules")
        self.pages.currentChanged.connect(self._page_shown)
        self._rules_timer = single_shot(self, FOLLOW_MS, self.reload)
        self._done_timer = single_shot(self, FOLLOW_MS, self.done_list.reload)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages, 1)
        layout.addWidget(close)
        fit_on_screen(self, QSize(980, 600))
        self._update_buttons()

    def _button(self, text: str, name: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(name)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    # ---- reading -----------------------------------------------------------------------

    def _read_done(self) -> Done:
        return self.flow.runs_done(SHOWN), self.flow.forwards(limit=SHOWN)

    def reload(self) -> None:
        """Read the rules again (and what they did, when that page is shown)."""
        self.tasks.run(self.reading(), key=READ_KEY, owner=self, context="reading the rules")
        if self.pages.currentWidget() is self.done_list:
            self.done_list.reload()

    def rules_changed(self) -> None:
        """The rules may have changed elsewhere (another desk): read them soon."""
        self._rules_timer.start()

    def done_changed(self) -> None:
        """A run or forward was recorded: read them soon, if they are on show."""
        if self.pages.currentWidget() is self.done_list and not self._done_timer.isActive():
            self._done_timer.start()

    def _page_shown(self, _index: int) -> None:
        if self.pages.currentWidget() is self.done_list:
            self.done_list.reload()

    async def reading(self) -> None:
        try:
            rules = await off_thread(self.flow.rules)
        except StoreError as exc:
            self.say(f"The rules could not be read: {exc}", error=True)
            return
        self.show_rules(rules)

    def show_rules(self, rules: RuleSet, *, select: str | None = None) -> None:
        """`rules` in the table, the rule `select` (else the one selected before) selected."""
        keep = select if select is not None else self.selected_name()
        self.rules = rules
        fill(self.table, [rule_cells(n, rule) for n, rule in enumerate(rules.rules, 1)])
        found = rules.named(keep) if keep is not None else None
        if found is not None:
            self.table.selectRow(rules.rules.index(found))
        else:
            self.table.clearSelection()
        self._update_buttons()

    def selected(self) -> Rule | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.rules.rules):
            return None
        return self.rules.rules[rows[0].row()]

    def selected_name(self) -> str | None:
        rule = self.selected()
        return None if rule is None else rule.name

    def _update_buttons(self) -> None:
        rule = self.selected()
        busy = self._busy
        position = -1 if rule is None else self.rules.rules.index(rule)
        self.add_button.setEnabled(not busy)
        self.remove_button.setEnabled(rule is not None and not busy)
        self.turn_button.setEnabled(rule is not None and not busy)
        self.up_button.setEnabled(position > 0 and not busy)
        self.down_button.setEnabled(0 <= position < len(self.rules.rules) - 1 and not busy)
        self.turn_button.setText("Turn &off" if rule is not None and rule.on else "Turn &on")

    def say(self, text: str, *, error: bool = False) -> None:
        self.state.setText(text)
        self.state.setVisible(bool(text))
        set_role(self.state, "error" if error else "")

    # ---- changes -----------------------------------------------------------------------

    def _change(self, work: Callable[[], RuleSet], done: str, select: str | None) -> None:
        """Run `work` (a change through the flow, returning the rules after it) off the
        GUI thread; the table then shows the rules kept, or the page says why not."""
        self._busy = True
        self._update_buttons()
        self.tasks.run(
            self._changing(work, done, select), key=CHANGE_KEY, owner=self, context="the rules"
        )

    async def _changing(self, work: Callable[[], RuleSet], done: str, select: str | None) -> None:
        try:
            rules = await off_thread(work)
        except FAILED as exc:
            self.say(f"Not changed: {getattr(exc, 'message', None) or exc}", error=True)
            await self.reading()  # another desk may have changed them meanwhile
            return
        finally:
            self._busy = False
            self._update_buttons()
        self.show_rules(rules, select=select)
        self.say(done)

    def move_rule(self, by: int) -> None:
        rule = self.selected()
        if rule is None:
            return
        to = self.rules.rules.index(rule) + 1 + by
        flow = self.flow
        self._change(
            lambda: flow.move(rule.name, to), f"Rule {rule.name!r} is now #{to}.", rule.name
        )

    def toggle(self) -> None:
        rule = self.selected()
        if rule is None:
            return
        flow, on = self.flow, not rule.on

        def turn() -> RuleSet:
            flow.turn(rule.name, on)
            return flow.rules()

        self._change(turn, f"Rule {rule.name!r} is {'on' if on else 'off'}.", rule.name)

    def remove(self) -> None:
        rule = self.selected()
        if rule is not None:
            self.tasks.run(self.removing(rule), key="rules-remove", owner=self, context="a rule")

    async def removing(self, rule: Rule) -> None:
        box, yes = question_box(
            self,
            "Remove the rule?",
            f"Remove rule {rule.name!r}? Replies it would take go to the next rule that "
            "matches, or none."
            + (
                " Its forwards' signing secret is deleted from this computer's keyring."
                if rule.action(Do.FORWARD) is not None
                else ""
            ),
            "Remove",
        )
        if not await answered(box, yes):
            return
        flow = self.flow

        def take() -> RuleSet:
            flow.remove(rule.name)
            return flow.rules()

        self._change(take, f"Rule {rule.name!r} was removed.", None)

    # ---- adding ------------------------------------------------------------------------

    def open_add_form(self) -> None:
        form = AddRuleDialog(self.flow.add, self.tasks, self)
        form.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        form.accepted.connect(lambda: self._added(form.added))
        self.add_form = form
        form.open()

    def _added(self, added: Added | None) -> None:
        if added is None:
            return
        self.say(f"Rule {added.rule.name!r} was added as #{len(self.rules.rules) + 1}.")
        self.reload_selecting(added.rule.name)
        if added.secret is not None:
            note = SecretDialog(added.rule.name, added.secret, self)
            self.secret_note = note
            note.open()

    def reload_selecting(self, name: str) -> None:
        async def read() -> None:
            try:
                rules = await off_thread(self.flow.rules)
            except StoreError as exc:
                self.say(f"The rules could not be read: {exc}", error=True)
                return
            self.show_rules(rules, select=name)

        self.tasks.run(read(), key=READ_KEY, owner=self, context="reading the rules")

    # ---- trying ------------------------------------------------------------------------

    def test(self) -> None:
        self._test_timer.stop()
        text = self.test_text.text()
        if not text.strip():
            self.tested.setText("")
            return
        self.tasks.run(self.testing(text), key=TEST_KEY, owner=self, context="testing a reply")

    async def testing(self, text: str) -> None:
        try:
            tested = await off_thread(lambda: self.flow.test(text))
        except StoreError as exc:
            self.tested.setText(f"Could not test: {exc}")
            return
        shown = text if len(text) <= 60 else text[:59] + "…"
        self.tested.setText(f"A reply {shown!r} would set off: {tested.said}")
