"""Light and dark palettes that follow the system, the stylesheet, and themed icons.

The theme is applied before the console's first paint, so this module stays away
from PySide6's `Qt` namespace until it is needed: the first use of any of its enums
(even one returned by `colorScheme()`) costs ~18 ms, a tenth of a bare window's start.
"""

from __future__ import annotations

from string import Template
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from gwdesk.resources import resource_path

if TYPE_CHECKING:  # imported where used: each of these classes builds its enums on import
    from PySide6.QtGui import QIcon

LIGHT_STROKE = "#37474f"
DARK_STROKE = "#cfd8dc"


def platform_is_dark(app: QGuiApplication) -> bool:
    """Whether the platform's own palette (read before ours replaces it) is dark.

    Where the platform reports a colour scheme its palette follows it, and a dark
    colour scheme that reports none (some KDE set-ups) is caught too.
    """
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


#: Radio buttons' and check boxes' colours in each palette (`resources/style/indicators.qss`):
#: a rim at least 3:1 against the window, as WCAG asks of a control's parts (1.4.11).
INDICATORS: Final = {
    "dark": dict(rim="#90a4ae", hover="#cfd8dc", base="#1e272c", dot="#64b5f6", disabled="#546e7a"),
    "light": dict(
        rim="#6e7b85", hover="#37474f", base="#ffffff", dot="#1e88e5", disabled="#b0bec5"
    ),
}


def dark_palette() -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#263238",
        QPalette.ColorRole.WindowText: "#eceff1",
        QPalette.ColorRole.Base: "#1e272c",
        QPalette.ColorRole.AlternateBase: "#2c393f",
        QPalette.ColorRole.ToolTipBase: "#37474f",
        QPalette.ColorRole.ToolTipText: "#eceff1",
        QPalette.ColorRole.PlaceholderText: "#90a4ae",
        QPalette.ColorRole.Text: "#eceff1",
        QPalette.ColorRole.Button: "#2f3e46",
        QPalette.ColorRole.ButtonText: "#eceff1",
        QPalette.ColorRole.BrightText: "#ff5252",
        QPalette.ColorRole.Highlight: "#42a5f5",
        QPalette.ColorRole.HighlightedText: "#0b1317",
        QPalette.ColorRole.Link: "#64b5f6",
        QPalette.ColorRole.Mid: "#455a64",
        QPalette.ColorRole.Midlight: "#37474f",
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#78909c"))
    return palette


def light_palette() -> QPalette:
    palette = QApplication.style().standardPalette()
    palette.setColor(QPalette.ColorRole.Highlight, QColor("#1e88e5"))
    palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.AlternateBase, QColor("#f3f6f8"))
    return palette


class Theme(QObject):
    """Applies palette and stylesheet now and whenever the system scheme changes."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self._icons: dict[tuple[str, bool], QIcon] = {}
        self._dark = platform_is_dark(app)
        app.setStyle("Fusion")
        app.styleHints().colorSchemeChanged.connect(self._scheme_changed)
        self.apply()

    @property
    def dark(self) -> bool:
        return self._dark

    def _scheme_changed(self, scheme: object) -> None:
        from PySide6.QtCore import Qt

        self.set_dark(scheme == Qt.ColorScheme.Dark)

    def set_dark(self, dark: bool) -> None:
        """Use the dark palette (or the light one) from now on."""
        self._dark = dark
        self.apply()

    def apply(self) -> None:
        self._app.setPalette(dark_palette() if self.dark else light_palette())
        sheet = resource_path("style", "gwdesk.qss").read_text(encoding="utf-8")
        indicators = resource_path("style", "indicators.qss").read_text(encoding="utf-8")
        colours = INDICATORS["dark" if self.dark else "light"]
        self._app.setStyleSheet(sheet + Template(indicators).substitute(colours))

    def icon(self, name: str) -> QIcon:
        """A resource icon, its strokes recoloured for the current scheme."""
        key = (name, self.dark)
        cached = self._icons.get(key)
        if cached is not None:
            return cached
        icon = render_icon(name, DARK_STROKE if self.dark else LIGHT_STROKE)
        self._icons[key] = icon
        return icon


def render_icon(name: str, stroke: str, sizes: tuple[int, ...] = (16, 24, 32, 48)) -> QIcon:
    from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
    from PySide6.QtGui import QIcon, QPainter, QPixmap
    from PySide6.QtSvg import QSvgRenderer  # here: not needed before the first paint

    svg = resource_path("icons", f"{name}.svg").read_text(encoding="utf-8")
    renderer = QSvgRenderer(QByteArray(svg.replace(LIGHT_STROKE, stroke).encode("utf-8")))
    icon = QIcon()
    for size in sizes:
        pixmap = QPixmap(QSize(size, size))
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        icon.addPixmap(pixmap)
    return icon


def app_icon() -> QIcon:
    from PySide6.QtGui import QIcon

    return QIcon(str(resource_path("icons", "gwdesk.svg")))
