"""The console's tabs, in the tab bar's order: what several tests expect to see."""

from __future__ import annotations

from typing import Final

TAB_TITLES: Final = [
    "Send",
    "Batch",
    "Scheduled",
    "Status",
    "Replies",
    "Contacts",
    "Opt-outs",
    "Logs",
    "Fax / MMS",
]
