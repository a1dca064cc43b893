"""The reply inbox's values as the console's views name them.

They are the core's (`gwdesk.app.reply_state`): the flow decides them, the hub emits
them, and the Replies tab, the status bar's listener widget and the notifier show them.
"""

from gwdesk.app.reply_state import (
    LOOPBACK,
    NO_TEAM_ROUTE,
    BackfillReport,
    ListenerSettings,
    ListenerState,
    ListenerStatus,
    ReplyDelivery,
    unreadable_text,
)

__all__ = [
    "LOOPBACK",
    "NO_TEAM_ROUTE",
    "BackfillReport",
    "ListenerSettings",
    "ListenerState",
    "ListenerStatus",
    "ReplyDelivery",
    "unreadable_text",
]
