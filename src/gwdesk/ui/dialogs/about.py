"""Help → About: what this gwdesk is, what it runs on, and which gateway it talks to.

The details are what a bug report needs, so "Copy details" puts them on the
clipboard as plain text.
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, metadata
from typing import Final

import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk import __version__
from gwdesk.ui.plain_text import PlainLabel, html_text
from gwdesk.ui.session import Session
from gwdesk.ui.theme import app_icon

LICENCE: Final = "MIT"
SUMMARY: Final = "Desktop operator console for the messaging gateway"
#: pyproject's [project.urls], for when the installed metadata cannot be read (a
#: packaging test keeps the two the same).
PROJECT_LINKS: Final = (
    ("Homepage", "https://github.com/gwdesk/gwdesk"),
    ("Documentation", "https://github.com/gwdesk/gwdesk/tree/main/docs"),
    ("Changelog", "https://github.com/gwdesk/gwdesk/blob/main/CHANGELOG.md"),
    ("Issues", "https://github.com/gwdesk/gwdesk/issues"),
)


def project_links() -> list[tuple[str, str]]:
    """(label, URL) from the installed package's metadata, else the built-in list."""
    try:
        entries = metadata("gwdesk").get_all("Project-URL") or []
    except PackageNotFoundError:
        entries = []
    links = []
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip().startswith("https://"):
            links.append((label.strip(), url.strip()))
    return links or list(PROJECT_LINKS)


def describe_gateway(session: Session | None) -> str:
    if session is None or session.profile is None:
        return "Not connected"
    profile = session.profile
    if session.is_sandbox:
        return f"Sandbox (local, simulated) at {profile.rest_url}"
    return f"{profile.name}: {profile.username} @ {profile.rest_url}"


def about_details(session: Session | None) -> list[tuple[str, str]]:
    return [
        ("Version", __version__),
        ("Licence", LICENCE),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("Qt / PySide6", f"Qt {qVersion()}, PySide6 {PySide6.__version__}"),
        ("Platform", platform.platform(terse=True)),
        ("Gateway", describe_gateway(session)),
    ]


class AboutDialog(QDialog):
    def __init__(self, session: Session | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About gwdesk")
        self.details = about_details(session)

        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(64, 64))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        title = QLabel(f"<b style='font-size: 18pt'>gwdesk</b>&nbsp;&nbsp;{html_text(__version__)}")
        title.setAccessibleName(f"gwdesk {__version__}")
        summary = QLabel(SUMMARY + ", with a local sandbox gateway to practise on.")
        summary.setWordWrap(True)
        heading = QVBoxLayout()
        heading.addWidget(title)
        heading.addWidget(summary)
        top = QHBoxLayout()
        top.addWidget(icon)
        top.addLayout(heading, 1)

        form = QFormLayout()
        self.values: dict[str, PlainLabel] = {}
        for label, value in self.details:
            shown = PlainLabel(value)  # the gateway's address, the profile's name: plain
            shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            shown.setWordWrap(True)
            shown.setAccessibleName(label)
            self.values[label] = shown
            form.addRow(f"{label}:", shown)
        self.links = QLabel(
            " · ".join(
                f"<a href='{html_text(url)}'>{html_text(name)}</a>" for name, url in project_links()
            )
        )
        self.links.setOpenExternalLinks(True)
        self.links.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.links.setAccessibleName("Links")
        form.addRow("Links:", self.links)

        self.copy_button = QPushButton("C&opy details")
        self.copy_button.setToolTip("Copy these details to the clipboard, e.g. for a bug report")
        self.copy_button.clicked.connect(self.copy_details)
        close = QPushButton("Close")
        close.setDefault(True)
        close.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addStretch(1)
        buttons.addWidget(close)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addSpacing(8)
        layout.addLayout(form)
        layout.addStretch(1)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)

    def details_text(self) -> str:
        lines = [f"gwdesk {__version__}"]
        lines += [f"{label}: {value}" for label, value in self.details]
        return "\n".join(lines)

    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(self.details_text())
        self.copy_button.setText("Copied")
