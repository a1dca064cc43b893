"""The console's window state (`console.ini`, through `QSettings`), read and written through
the settings' declarations (`gwdesk.domain.settings`, those kept in the window state).

Imported before the first paint: Qt's core and the declarations only.
"""

from __future__ import annotations

from typing import Any, TypeVar

from PySide6.QtCore import QByteArray, QSettings

from gwdesk.domain.settings import Place, Setting

T = TypeVar("T")


def _key(setting: Setting[Any]) -> str:
    if setting.place is not Place.WINDOW_STATE:
        raise ValueError(f"{setting.name} is kept in the {setting.place}, not the window state")
    return setting.stored_as


def kept(settings: QSettings, setting: Setting[T]) -> T:
    """What the window state holds for `setting`; its default when unset or unreadable."""
    value = settings.value(_key(setting))
    if isinstance(value, QByteArray):
        value = bytes(value.data())
    return setting.read(value)


def keep(settings: QSettings, setting: Setting[T], value: T) -> None:
    written: Any = setting.write(value)
    if isinstance(written, bytes):
        written = QByteArray(written)
    settings.setValue(_key(setting), written)
