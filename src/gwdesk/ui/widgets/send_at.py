"""A scheduled send time, off by default, with the zones spelled out.

The operator picks a time on their own clock; the gateway account has a zone of its
own (the profile's), and operators in another city are easily an hour or a day out.
So the picker shows the operator's zone and the same moment in the gateway's zone.
Who keeps the send until then is the operator's choice (`keeper`): gwdesk (held in
the outbox, changeable until then: `gwdesk.app.scheduled`), or the gateway (`SendAt`:
lodged now, beyond gwdesk's reach).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo

from PySide6.QtCore import QDateTime, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from gwdesk.ui.plain_text import tooltip
from gwdesk.ui.widgets.drafts import Draft, draft_moment
from gwdesk.ui.widgets.elided_label import ElidedLabel
from gwdesk.ui.widgets.validity import set_invalid

DEFAULT_LEAD = timedelta(hours=1)
REPEATS = (
    ("never", None),
    ("daily", "daily"),
    ("each weekday", "weekdays"),
    ("weekly", "weekly"),
    ("monthly", "monthly"),
)
"""The repeat choices (shown, `SmsForm.repeat`)."""


def _offset(moment: datetime) -> str:
    offset = moment.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def local_zone_label(moment: datetime) -> str:
    """`AEDT, UTC+11:00` for the operator's zone at that moment (`UTC` when it is UTC)."""
    local = moment.astimezone()
    name = local.tzname() or ""
    offset = _offset(local)
    if name in ("UTC", "GMT") and offset == "UTC+00:00":
        return "UTC"
    return f"{name}, {offset}" if name and name != offset else offset


def zone_text(moment: datetime, gateway_zone: tzinfo | None, gateway_name: str) -> str:
    """The operator's zone, and the same moment on the gateway's clock."""
    mine = f"Your time: {local_zone_label(moment)}"
    if gateway_zone is None:
        return mine
    there = moment.astimezone(gateway_zone)
    return f"{mine} · Gateway: {there:%a %d %b %H:%M} {gateway_name} ({_offset(there)})"


def next_slot(now: datetime, lead: timedelta = DEFAULT_LEAD) -> datetime:
    """A sensible default: an hour ahead, on the next quarter hour."""
    moment = (now + lead).replace(second=0, microsecond=0)
    return moment + timedelta(minutes=(-moment.minute) % 15)


class SendAtPicker(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None, *, zone_beside: bool = False) -> None:
        """`zone_beside`: the zone line right of the time (wide forms), else under it."""
        super().__init__(parent)
        self.enabled_box = QCheckBox("Schedule")
        self.enabled_box.setAccessibleName("Schedule the send")
        self.enabled_box.setToolTip(
            "Off: the message goes at once. On: it goes at the chosen time, kept until then "
            "by gwdesk (changeable in the Scheduled tab) or by the gateway (SendAt)."
        )
        self.keeper = QComboBox()
        self.keeper.setAccessibleName("Who keeps the scheduled send")
        self.keeper.addItem("kept by gwdesk", True)
        self.keeper.addItem("kept by the gateway", False)
        self.repeat_box = QComboBox()
        self.repeat_box.setAccessibleName("Repeat the scheduled send")
        for shown, kind in REPEATS:
            self.repeat_box.addItem(shown, kind)
        self.repeat_box.setToolTip(
            "Send it again at the same time on the profile's clock (across daylight saving);\n"
            "each time is a scheduled send of its own: cancel the waiting one to stop."
        )
        self.keeper.setToolTip(
            "gwdesk: held in the outbox until its time; you can change or cancel it in the "
            "Scheduled tab, and a console (or the office's receiver) must be running then.\n"
            "The gateway: lodged now with SendAt; the gateway sends it then, and gwdesk can "
            "no longer change or cancel it."
        )
        self.edit = QDateTimeEdit()
        self.edit.setAccessibleName("Send at")
        self.edit.setCalendarPopup(True)
        self.edit.setDisplayFormat("ddd d MMM yyyy  HH:mm")
        self.edit.setToolTip("The time on your clock; the line beside shows the gateway's zone.")
        # Names the gateway's zone: one line, shortened with "…" on a narrow window (the
        # tooltip has it all), so the form below never jumps as the time changes.
        self.zone_label = ElidedLabel()
        self.zone_label.setAccessibleName("Send at time zones")
        self.zone_label.setProperty("role", "hint")
        self.gateway_zone: tzinfo | None = None
        self.gateway_name = ""
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.enabled_box)
        row.addWidget(self.edit)
        row.addWidget(self.keeper)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        again = QHBoxLayout()  # the repeat on a row of its own: the first is full at 150%
        again.setContentsMargins(0, 0, 0, 0)
        self.repeat_label = QLabel("Repeat")
        self.repeat_label.setBuddy(self.repeat_box)
        again.addWidget(self.repeat_label)
        again.addWidget(self.repeat_box)
        again.addStretch(1)
        if zone_beside:
            row.addSpacing(8)
            row.addWidget(self.zone_label, 1)
            layout.addLayout(again)
        else:
            row.addStretch(1)
            layout.addLayout(again)
            layout.addWidget(self.zone_label)
        self.set_moment(next_slot(datetime.now(UTC)))
        self.edit.setEnabled(False)
        self.keeper.setEnabled(False)
        self.repeat_box.setEnabled(False)
        self.repeat_label.setEnabled(False)
        self.keeper.currentIndexChanged.connect(self._kept)
        self.repeat_box.currentIndexChanged.connect(self._moved)
        self.enabled_box.toggled.connect(self._toggled)
        self.edit.dateTimeChanged.connect(self._moved)
        self._update_zone()

    def set_gateway_zone(self, zone: tzinfo | None, name: str) -> None:
        self.gateway_zone = zone
        self.gateway_name = name
        self._update_zone()

    def is_scheduled(self) -> bool:
        return self.enabled_box.isChecked()

    def moment(self) -> datetime:
        """The picked time, aware, whether or not scheduling is on."""
        seconds = self.edit.dateTime().toSecsSinceEpoch()
        return datetime.fromtimestamp(seconds, UTC)

    def value(self) -> datetime | None:
        """When the message goes, or None when it goes at once (whoever keeps it)."""
        return self.moment() if self.is_scheduled() else None

    def held(self) -> bool:
        """gwdesk keeps the send until its time (else the gateway does)."""
        return bool(self.keeper.currentData())

    def gateway_time(self) -> datetime | None:
        """`SendAt`: a time handed to the gateway, or None."""
        return None if self.held() else self.value()

    def hold_time(self) -> datetime | None:
        """A time gwdesk holds the send until, or None."""
        return self.value() if self.held() else None

    def set_held(self, held: bool) -> None:
        self.keeper.setCurrentIndex(0 if held else 1)

    def repeat(self) -> str:
        """How a send gwdesk keeps repeats ('' once; the gateway's SendAt never repeats)."""
        return str(self.repeat_box.currentData() or "") if self.hold_time() else ""

    def set_repeat(self, kind: str) -> None:
        found = self.repeat_box.findData(kind or None)
        self.repeat_box.setCurrentIndex(max(found, 0))

    def set_moment(self, moment: datetime) -> None:
        self.edit.setDateTime(QDateTime.fromSecsSinceEpoch(int(moment.timestamp())))

    def set_value(self, moment: datetime | None) -> None:
        if moment is not None:
            self.set_moment(moment)
        self.enabled_box.setChecked(moment is not None)

    def draft(self) -> dict[str, object]:
        """The time as a draft keeps it (picked, even when scheduling is off)."""
        return {
            "scheduled": self.is_scheduled(),
            "send_at": self.moment().isoformat(),
            "held": self.held(),
            "repeat": str(self.repeat_box.currentData() or ""),
        }

    def restore(self, data: Draft) -> None:
        """The time from a draft; scheduled only when it was and its time reads."""
        moment = draft_moment(data, "send_at")
        if moment is not None:
            self.set_moment(moment)
        self.enabled_box.setChecked(data.get("scheduled") is True and moment is not None)
        self.set_held(data.get("held") is not False)
        repeat = data.get("repeat")
        self.set_repeat(repeat if isinstance(repeat, str) else "")

    def set_invalid(self, invalid: bool) -> None:
        set_invalid(self.edit, invalid)

    def _toggled(self, on: bool) -> None:
        if on and self.moment() < datetime.now(UTC):
            self.set_moment(next_slot(datetime.now(UTC)))
        self.edit.setEnabled(on)
        self.keeper.setEnabled(on)
        self.repeat_box.setEnabled(on and self.held())
        self.repeat_label.setEnabled(self.repeat_box.isEnabled())
        self._update_zone()
        self.changed.emit()

    def _kept(self) -> None:
        self.repeat_box.setEnabled(self.is_scheduled() and self.held())
        self.repeat_label.setEnabled(self.repeat_box.isEnabled())
        self._moved()

    def _moved(self) -> None:
        self._update_zone()
        self.changed.emit()

    def _update_zone(self) -> None:
        if not self.is_scheduled():
            now = datetime.now(UTC)
            gateway = f" · Gateway zone: {self.gateway_name}" if self.gateway_name else ""
            text = f"Off: sent at once. Your zone: {local_zone_label(now)}{gateway}"
        else:
            text = zone_text(self.moment(), self.gateway_zone, self.gateway_name)
        self.zone_label.setText(text)
        self.zone_label.setToolTip(tooltip(text))
