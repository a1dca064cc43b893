"""The form of one profile: every field, and the model's refusals shown at the field.

Checking is the `Profile` model's job; the form only turns what the model says
(a pydantic error naming a field) into a red border and a line under that field,
so the rules live in one place and the dialog cannot drift from the CLI. The model's
messages never quote what was typed, so a password typed into the store address is
refused without being shown again.

The Team part names the office's PostgreSQL server that holds the shared data of a
team profile, the server's password (kept in the keyring, like the gateway's) and the
name the other consoles show for this operator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.domain.models import Secret
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.operator import default_operator
from gwdesk.domain.profile import DEFAULT_NAMESPACE, DEFAULT_TIMEZONE, Profile
from gwdesk.ui.dialogs.profile_choices import AUTH_CHOICES, LODGE_PORTS, regions, time_zones
from gwdesk.ui.widgets.field_errors import error_label
from gwdesk.ui.widgets.listing import file_to_open
from gwdesk.ui.widgets.validity import set_invalid, set_role

PASSWORD = "password"  # noqa: S105 - the key of the password field
STORE_PASSWORD = "store_password"  # noqa: S105 - the key of the store's password field
STORE_URL_HINT = (
    "postgresql://gwdesk_console@db.office.lan/gwdesk?sslmode=verify-full&sslrootcert=…"
)
TEAM_TEXT = (
    "Optional. To share this account's replies, sent history, opt-outs and outbox with "
    "the other desks, give the office's PostgreSQL server. Left empty, they stay on this "
    "computer."
)
FIELD_LABELS = {
    "name": "&Name",
    "rest_url": "&REST base URL",
    "lodge_url": "&Lodge URL",
    "soap_namespace": "SOAP na&mespace",
    "username": "&User name",
    PASSWORD: "Pass&word",
    "auth": "&Authentication",
    "timezone": "Gateway time &zone",
    "region": "Default re&gion",
    "lodge_port": "Preferred Lodge p&ort",
    "ca_bundle": "CA &bundle",
    "store_url": "Stor&e address",
    STORE_PASSWORD: "Store &password",
    "operator": "&Your name",
}
TEAM_FIELDS = ("store_url", STORE_PASSWORD, "operator")
ADVANCED_FIELDS = ("soap_namespace", "lodge_port", "ca_bundle")
"""Folded under "Advanced" unless a profile sets one: most gateways need the defaults."""
DEFAULT_LODGE_PORT = "soap12"


def plain_message(error: Any) -> str:
    """A pydantic error item as a sentence an operator can act on."""
    kind = error.get("type", "")
    context = error.get("ctx") or {}
    if kind == "string_too_short":
        return "This is required."
    if kind == "string_too_long":
        return f"At most {context.get('max_length', 'a few')} characters."
    if kind == "missing":
        return "This is required."
    text = str(error.get("msg", "not valid")).removeprefix("Value error, ").strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else f"{text}."


def field_errors(exc: pydantic.ValidationError) -> dict[str, str]:
    """First message per field of the profile; model-wide errors under the key ''."""
    found: dict[str, str] = {}
    for error in exc.errors():
        location = error.get("loc") or ("",)
        found.setdefault(str(location[0]), plain_message(error))
    return found


class ProfileForm(QWidget):
    """Inputs for every `Profile` field plus the password, each with its own error line."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. Production")
        self.rest_edit = QLineEdit()
        self.rest_edit.setPlaceholderText("https://gateway.example.com/api")
        self.rest_edit.setToolTip(
            "The address the /v2/ endpoints hang off; https (plain http only for this machine)"
        )
        self.lodge_edit = QLineEdit()
        self.lodge_edit.setPlaceholderText("Optional: https://gateway.example.com/Lodge.asmx")
        self.lodge_edit.setToolTip("The legacy Lodge service, for Lodge SMS, WAP push, MMS and fax")
        self.namespace_edit = QLineEdit()
        self.namespace_edit.setToolTip("The Lodge SOAP namespace your gateway's WSDL declares")
        self.username_edit = QLineEdit()
        self.password_edit = QLineEdit()
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setToolTip(
            "Kept in the system keyring, never in a settings file or the log"
        )
        self.auth_combo = QComboBox()
        for key, label, tip in AUTH_CHOICES:
            self.auth_combo.addItem(label, key)
            self.auth_combo.setItemData(
                self.auth_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole
            )
        self.zone_combo = QComboBox()
        self.zone_combo.setEditable(True)
        self.zone_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.zone_combo.addItems(list(time_zones()))
        self.zone_combo.setToolTip(
            "The gateway account's zone: webhook times and times without an offset are read in it"
        )
        completer = QCompleter(self.zone_combo.model(), self.zone_combo)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.zone_combo.setCompleter(completer)
        self.region_combo = QComboBox()
        for code, label in regions():
            self.region_combo.addItem(label, code)
        self.region_combo.setToolTip("Where numbers typed without a country code belong")
        self.port_combo = QComboBox()
        for key, label in LODGE_PORTS:
            self.port_combo.addItem(label, key)
        self.port_combo.setToolTip("How Lodge calls travel; SOAP 1.2 unless your gateway says")
        self.ca_edit = QLineEdit()
        self.ca_edit.setPlaceholderText("Optional: a PEM file of extra trusted certificates")
        self.ca_button = QPushButton("Browse…")
        self.ca_button.setAccessibleName("Choose a CA bundle file")
        self.ca_button.clicked.connect(self.choose_ca_bundle)
        self.password_hint = QLabel()
        self.password_hint.setProperty("role", "hint")
        self.password_hint.setWordWrap(True)
        self.store_edit = QLineEdit()
        self.store_edit.setPlaceholderText(STORE_URL_HINT)
        self.store_edit.setToolTip(
            "The team's PostgreSQL server, logging in as you: postgresql://login@host[:port]/"
            "database, with sslmode=verify-full and sslrootcert=CA file to check the server "
            "(a server on another machine needs TLS). No password here: it goes in the field "
            "below, and from there to the keyring."
        )
        self.store_password_edit = QLineEdit()
        self.store_password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.store_password_edit.setToolTip(
            "Your store login's password, kept in the system keyring. Leave it empty to use "
            "~/.pgpass or a client certificate named in the address."
        )
        self.store_hint = QLabel()
        self.store_hint.setProperty("role", "hint")
        self.store_hint.setWordWrap(True)
        self.operator_edit = QLineEdit()
        self.operator_edit.setPlaceholderText(default_operator())
        self.operator_edit.setMaxLength(200)
        self.operator_edit.setToolTip(
            "Shown to the other desks beside what you send and change, and while you type "
            "a reply (empty: this computer's user name). A login of your own is named by "
            "the server as the team's owner named it, whatever this says."
        )
        self.team_text = QLabel(TEAM_TEXT)
        self.team_text.setProperty("role", "hint")
        self.team_text.setWordWrap(True)

        self.advanced_button = QToolButton()
        self.advanced_button.setText("Advanced: SOAP namespace, Lodge port, CA bundle")
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_button.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_button.setCheckable(True)
        self.advanced_button.setAutoRaise(True)
        self.advanced_button.setToolTip(
            "What most gateways need left as it is: shown when a profile sets one of them"
        )
        self.advanced_button.toggled.connect(self.show_advanced)

        self.inputs: dict[str, QWidget] = {
            "name": self.name_edit,
            "rest_url": self.rest_edit,
            "lodge_url": self.lodge_edit,
            "username": self.username_edit,
            PASSWORD: self.password_edit,
            "auth": self.auth_combo,
            "timezone": self.zone_combo,
            "region": self.region_combo,
            "soap_namespace": self.namespace_edit,
            "lodge_port": self.port_combo,
            "ca_bundle": self.ca_edit,
            "store_url": self.store_edit,
            STORE_PASSWORD: self.store_password_edit,
            "operator": self.operator_edit,
        }
        self.errors: dict[str, QLabel] = {}
        self.boxes: dict[str, QWidget] = {}
        """Each input's row: the input, its hint or button and its error line."""
        layout = QFormLayout(self)
        layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.setVerticalSpacing(6)
        self.layout_ = layout
        for key, widget in self.inputs.items():
            if key == ADVANCED_FIELDS[0]:
                layout.addRow(self.advanced_button)
            if key == TEAM_FIELDS[0]:
                heading = QLabel("Team")
                heading.setStyleSheet("font-weight: 600; margin-top: 8px;")
                layout.addRow(heading, self.team_text)
            widget.setAccessibleName(FIELD_LABELS[key].replace("&", ""))
            caption = QLabel(FIELD_LABELS[key])
            caption.setBuddy(widget)
            layout.addRow(caption, self._field_box(key, widget))
        self.operator_edit.setAccessibleName("Your name (operator)")
        self._wire_edits()
        self.clear()
        self.show_advanced(False)

    def show_advanced(self, shown: bool) -> None:
        """Show (or fold away) the fields most gateways need left as they are."""
        if self.advanced_button.isChecked() != shown:
            self.advanced_button.setChecked(shown)  # comes back here through toggled
            return
        self.advanced_button.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        for key in ADVANCED_FIELDS:
            self.layout_.setRowVisible(self.boxes[key], shown)

    def advanced_set(self) -> bool:
        """Whether any advanced field holds other than its default."""
        return (
            self.namespace_edit.text().strip() not in ("", DEFAULT_NAMESPACE)
            or self.port_combo.currentData() != DEFAULT_LODGE_PORT
            or bool(self.ca_edit.text().strip())
        )

    def _field_box(self, key: str, widget: QWidget) -> QWidget:
        """The input (plus its Browse button or hint) with its hidden error line below."""
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        if key == "ca_bundle":
            row = QHBoxLayout()
            row.addWidget(widget, 1)
            row.addWidget(self.ca_button)
            column.addLayout(row)
        else:
            column.addWidget(widget)
        if key == PASSWORD:
            column.addWidget(self.password_hint)
        if key == STORE_PASSWORD:
            column.addWidget(self.store_hint)
        error = error_label(f"{FIELD_LABELS[key].replace('&', '')} error")
        column.addWidget(error)
        self.errors[key] = error
        self.boxes[key] = box
        return box

    def _wire_edits(self) -> None:
        for key, widget in self.inputs.items():
            if isinstance(widget, QLineEdit):
                widget.textEdited.connect(lambda _text, k=key: self._touched(k))
            elif isinstance(widget, QComboBox):
                widget.currentTextChanged.connect(lambda _text, k=key: self._touched(k))

    def _touched(self, key: str) -> None:
        self.clear_error(key)
        self.edited.emit()

    # ---- values ----------------------------------------------------------------------------

    def clear(self) -> None:
        """Empty fields with the usual defaults, as for a new profile."""
        for edit in (
            self.name_edit,
            self.rest_edit,
            self.lodge_edit,
            self.username_edit,
            self.password_edit,
            self.ca_edit,
            self.store_edit,
            self.store_password_edit,
            self.operator_edit,
        ):
            edit.clear()
        self.namespace_edit.setText(DEFAULT_NAMESPACE)
        self._select(self.auth_combo, "oauth")
        self.zone_combo.setCurrentText(DEFAULT_TIMEZONE)
        self._select(self.region_combo, DEFAULT_REGION)
        self._select(self.port_combo, DEFAULT_LODGE_PORT)
        self.clear_errors()

    def load(self, profile: Profile) -> None:
        self.clear()
        self.name_edit.setText(profile.name)
        self.rest_edit.setText(profile.rest_url)
        self.lodge_edit.setText(profile.lodge_url or "")
        self.namespace_edit.setText(profile.soap_namespace)
        self.username_edit.setText(profile.username)
        self._select(self.auth_combo, profile.auth)
        self.zone_combo.setCurrentText(profile.timezone)
        self._select(self.region_combo, profile.region)
        self._select(self.port_combo, profile.lodge_port)
        self.ca_edit.setText(str(profile.ca_bundle) if profile.ca_bundle else "")
        self.store_edit.setText(profile.store_url or "")
        self.operator_edit.setText(profile.operator or "")
        self.clear_errors()
        self.show_advanced(self.advanced_set())

    @staticmethod
    def _select(combo: QComboBox, key: str) -> None:
        index = combo.findData(key)
        combo.setCurrentIndex(max(index, 0))

    def raw_values(self) -> dict[str, object]:
        ca_text = self.ca_edit.text().strip()
        return {
            "name": self.name_edit.text(),
            "rest_url": self.rest_edit.text(),
            "lodge_url": self.lodge_edit.text() or None,
            "soap_namespace": self.namespace_edit.text().strip() or DEFAULT_NAMESPACE,
            "username": self.username_edit.text(),
            "auth": self.auth_combo.currentData(),
            "timezone": self.zone_combo.currentText().strip(),
            "region": self.region_combo.currentData(),
            "lodge_port": self.port_combo.currentData(),
            "ca_bundle": ca_text or None,
            "store_url": self.store_edit.text().strip() or None,
            "operator": self.operator_edit.text() or None,
        }

    def profile(self) -> Profile | None:
        """The typed profile, or None after showing each refusal at its field."""
        self.clear_errors()
        values = self.raw_values()
        try:
            profile = Profile.model_validate(values)
        except pydantic.ValidationError as exc:
            for key, message in field_errors(exc).items():
                self.show_error(key if key in self.inputs else "name", message)
            self.focus_first_error()
            return None
        if profile.ca_bundle is not None and not Path(profile.ca_bundle).is_file():
            self.show_error("ca_bundle", "There is no such file.")
            self.focus_first_error()
            return None
        return profile

    def typed_password(self) -> Secret | None:
        text = self.password_edit.text()
        return Secret(text) if text else None

    def typed_store_password(self) -> Secret | None:
        text = self.store_password_edit.text()
        return Secret(text) if text else None

    # ---- errors ----------------------------------------------------------------------------

    def show_error(self, key: str, message: str) -> None:
        if key in ADVANCED_FIELDS:
            self.show_advanced(True)
        label = self.errors[key]
        label.setText(message)
        label.show()
        set_invalid(self.inputs[key], True)

    def clear_error(self, key: str) -> None:
        self.errors[key].hide()
        set_invalid(self.inputs[key], False)

    def clear_errors(self) -> None:
        for key in self.inputs:
            self.clear_error(key)

    def error_text(self, key: str) -> str:
        label = self.errors[key]
        return "" if label.isHidden() else label.text()

    def focus_first_error(self) -> None:
        for key, widget in self.inputs.items():
            if not self.errors[key].isHidden():
                widget.setFocus()
                return

    def set_password_hint(self, text: str, role: str = "hint") -> None:
        self.password_hint.setText(text)
        self.password_hint.setVisible(bool(text))
        set_role(self.password_hint, role)

    def set_store_hint(self, text: str, role: str = "hint") -> None:
        self.store_hint.setText(text)
        self.store_hint.setVisible(bool(text))
        set_role(self.store_hint, role)

    def choose_ca_bundle(self) -> None:
        filters = "Certificates (*.pem *.crt *.cer);;All files (*)"
        path = file_to_open(self, "Choose a CA bundle", filters, self.ca_edit.text().strip())
        if path is not None:
            self.ca_edit.setText(str(path))
            self._touched("ca_bundle")
