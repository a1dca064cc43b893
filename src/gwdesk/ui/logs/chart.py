"""Messages per day by status, for the Logs tab (QtCharts).

Up to `BAR_DAYS` days are stacked bars, one per day; longer spans (up to a year and
more) are stacked areas on a date axis, where bars would be slivers. The counts
come from one SQL GROUP BY over the view's filter (`logcache_query.per_day`),
computed off the GUI thread; this widget only draws them.
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Final

from PySide6.QtCharts import (
    QAreaSeries,
    QBarCategoryAxis,
    QBarSet,
    QChart,
    QChartView,
    QDateTimeAxis,
    QLineSeries,
    QStackedBarSeries,
    QValueAxis,
)
from PySide6.QtCore import QDateTime, QMargins, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QWidget

from gwdesk.domain.models import ACTIVE, DELIVERED, FAILED
from gwdesk.logs.query import DayCounts
from gwdesk.ui.formatting import status_colour
from gwdesk.ui.plain_text import html_text

BAR_DAYS: Final = 45
SHORT_LABELS_FROM: Final = 12
ORDER: Final = (DELIVERED, ACTIVE, FAILED)
OTHER_COLOURS: Final = ("#8e24aa", "#f9a825", "#6d4c41", "#00897b", "#546e7a")
TITLE: Final = "Messages per day by status"


def series_order(statuses: list[str]) -> list[str]:
    known = [s for s in ORDER if s in statuses]
    return known + sorted(s for s in statuses if s not in ORDER)


def colour_for(status: str, others: list[str]) -> QColor:
    colour = status_colour(status)
    if colour is not None:
        return colour
    return QColor(OTHER_COLOURS[others.index(status) % len(OTHER_COLOURS)])


def day_labels(days: list[date]) -> list[str]:
    """Day and month while they fit; beyond that day numbers (the axis title has the months).

    A category axis merges equal labels, so a day number seen in an earlier month of
    the span gets zero-width spaces appended: it looks the same, and stays its own bar.
    """
    if len(days) <= SHORT_LABELS_FROM:
        return [d.strftime("%d %b") for d in days]
    first = days[0]
    labels = []
    for day in days:
        months_in = (day.year - first.year) * 12 + day.month - first.month
        labels.append(str(day.day) + "\u200b" * months_in)
    return labels


def month_span(days: list[date]) -> str:
    first, last = days[0], days[-1]
    if (first.year, first.month) == (last.year, last.month):
        return first.strftime("%B %Y")
    return f"{first:%d %b %Y} – {last:%d %b %Y}"


def day_ms(day: date) -> float:
    return datetime.combine(day, time()).astimezone().timestamp() * 1000


class LogChart(QChartView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts = DayCounts([], {})
        self._lines: list[QLineSeries] = []
        """An area series borrows its line series: they must outlive it."""
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setAccessibleName("Messages per day by status")
        self.setMinimumHeight(150)
        self._chart = QChart()
        self._chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
        self._chart.setMargins(QMargins(4, 4, 4, 4))
        self._chart.legend().setAlignment(Qt.AlignmentFlag.AlignRight)
        self.setChart(self._chart)
        self._apply_palette()
        self.set_counts(self.counts)

    def _apply_palette(self) -> None:
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        self._chart.setBackgroundBrush(palette.color(QPalette.ColorRole.Base))
        self._chart.setBackgroundRoundness(4)
        self._chart.setTitleBrush(text)
        self._chart.legend().setLabelColor(text)

    def _style_axis(self, axis: QValueAxis | QBarCategoryAxis | QDateTimeAxis) -> None:
        palette = self.palette()
        axis.setLabelsColor(palette.color(QPalette.ColorRole.WindowText))
        axis.setGridLineColor(palette.color(QPalette.ColorRole.Midlight))
        axis.setLinePenColor(palette.color(QPalette.ColorRole.Mid))

    def set_counts(self, counts: DayCounts, note: str = "") -> None:
        """Draw `counts`; `note` is added to the title (e.g. what the filter is)."""
        self.counts = counts
        chart = self._chart
        chart.removeAllSeries()
        self._lines = []
        for axis in chart.axes():
            chart.removeAxis(axis)
        title = TITLE
        if counts.truncated:
            title += f" (last {len(counts.days)} days)"
        if note:
            title += f" — {html_text(note)}"  # chart titles are rich text
        if not counts.days:
            title += ": nothing to show yet"
        chart.setTitle(title)
        if not counts.days:
            return
        statuses = series_order(list(counts.series))
        others = [s for s in statuses if status_colour(s) is None]
        top = max(sum(c[i] for c in counts.series.values()) for i in range(len(counts.days)))
        values = QValueAxis()
        values.setLabelFormat("%d")
        values.setRange(0, max(4.0, top * 1.1))
        values.setTickCount(5)
        values.applyNiceNumbers()
        self._style_axis(values)
        if len(counts.days) <= BAR_DAYS:
            self._bars(counts, statuses, others, values)
        else:
            self._areas(counts, statuses, others, values)

    def _bars(
        self, counts: DayCounts, statuses: list[str], others: list[str], values: QValueAxis
    ) -> None:
        series = QStackedBarSeries()
        series.setBarWidth(0.8)
        for status in statuses:
            bar = QBarSet(html_text(status))  # the gateway's word; legends are rich text
            bar.append([float(n) for n in counts.series[status]])
            colour = colour_for(status, others)
            bar.setColor(colour)
            bar.setBorderColor(colour)
            series.append(bar)
        self._chart.addSeries(series)
        days = QBarCategoryAxis()
        days.append(day_labels(counts.days))
        self._style_axis(days)
        if len(counts.days) > SHORT_LABELS_FROM:
            days.setTitleText(month_span(counts.days))
            days.setTitleBrush(self.palette().color(QPalette.ColorRole.WindowText))
        self._chart.addAxis(days, Qt.AlignmentFlag.AlignBottom)
        self._chart.addAxis(values, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(days)
        series.attachAxis(values)

    def _areas(
        self, counts: DayCounts, statuses: list[str], others: list[str], values: QValueAxis
    ) -> None:
        xs = [day_ms(d) for d in counts.days]
        base = [0.0] * len(xs)
        axis = QDateTimeAxis()
        axis.setFormat("dd MMM yy")
        axis.setTickCount(8)
        first, last = (QDateTime.fromMSecsSinceEpoch(int(x)) for x in (xs[0], xs[-1]))
        axis.setRange(first, last)
        self._style_axis(axis)
        self._chart.addAxis(axis, Qt.AlignmentFlag.AlignBottom)
        self._chart.addAxis(values, Qt.AlignmentFlag.AlignLeft)
        for status in statuses:
            lower, upper = QLineSeries(), QLineSeries()
            stacked = [b + n for b, n in zip(base, counts.series[status], strict=True)]
            for x, low, high in zip(xs, base, stacked, strict=True):
                lower.append(x, low)
                upper.append(x, high)
            self._lines += [lower, upper]
            area = QAreaSeries(upper, lower)
            area.setName(html_text(status))
            colour = colour_for(status, others)
            fill = QColor(colour)
            fill.setAlpha(190)
            area.setColor(fill)
            # No outline: a status with no records that day would still draw its line on top.
            area.setPen(QPen(Qt.PenStyle.NoPen))
            self._chart.addSeries(area)
            area.attachAxis(axis)
            area.attachAxis(values)
            base = stacked
