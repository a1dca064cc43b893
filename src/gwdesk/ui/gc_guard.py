"""Garbage collection on the GUI thread only.

Python's cyclic collector runs on whichever thread happens to allocate when a
threshold is crossed. If that is a worker (a CSV import, zeep building a WSDL,
a test's sandbox thread) and the garbage holds Qt objects, they are destroyed
on the wrong thread, and Qt crashes later in its timer bookkeeping. So the
automatic collector is switched off and this timer runs it, generation by
generation, on the GUI thread.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject

from gwdesk.ui.timers import repeating


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject | None = None, interval_ms: int = 500) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        gc.disable()
        self._timer = repeating(self, interval_ms, self.check)

    def check(self) -> None:
        """Collect the generations whose thresholds the allocation counts have crossed."""
        counts = gc.get_count()
        if counts[0] <= self._thresholds[0]:
            return
        generation = 0
        if counts[1] > self._thresholds[1]:
            generation = 1
            if counts[2] > self._thresholds[2]:
                generation = 2
        gc.collect(generation)

    def stop(self) -> None:
        self._timer.stop()
        gc.enable()
