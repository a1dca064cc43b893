"""The client's reply listener: the gateway's reply webhooks and keyword forwards come in here.

    store = ReplyStore(path)                       # or LocalStore(path).replies
    with ReplyInbox(store) as inbox:               # the group-committing writer thread
        listener = ReplyListener(inbox, profile.zone)
        info = listener.start()                    # PortInUseError offers a free port
        print(info.template.render())              # the ReplyPath to configure
        listener.subscribe(on_batch)               # ReplyBatch after each commit (writer thread)
        await backfill(service, inbox, suggested_start(store, now))
        listener.stop()

Reply webhooks (`HTTP`, `HTTPGET`, `HTTPPOST`) use `template.render()` as the
message's ReplyPath; keyword forwards are configured with `template.base_url` (the
same secret path: a JSON POST is read as a keyword forward, a form POST or a GET as
a reply webhook).

No Qt here: a GUI bridges `subscribe` to its own thread (a signal, or a `FeedBuffer`
drained by a timer).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from gwdesk.replies.backfill import BackfillResult, backfill, suggested_start
from gwdesk.replies.feed import Drained, FeedBuffer, ReplyBatch, ReplyFeed, Subscription
from gwdesk.replies.inbox import InboxClosed, ReplyInbox
from gwdesk.replies.template import ReplyTemplate, TemplateError

if TYPE_CHECKING:
    from gwdesk.replies.endpoint import ListenerLimits
    from gwdesk.replies.listener import (
        DEFAULT_PORT,
        ListenerError,
        ListenerInfo,
        PortInUseError,
        ReplyListener,
    )

#: The listener's names, loaded when one is first asked for: the listener brings aiohttp
#: (its web server), which `gwdesk.replies.template` (the console's Send tab needs it)
#: and the inbox do not need.
_LAZY: Final = {
    "ListenerLimits": "endpoint",
    "DEFAULT_PORT": "listener",
    "ListenerError": "listener",
    "ListenerInfo": "listener",
    "PortInUseError": "listener",
    "ReplyListener": "listener",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "DEFAULT_PORT",
    "BackfillResult",
    "Drained",
    "FeedBuffer",
    "InboxClosed",
    "ListenerError",
    "ListenerInfo",
    "ListenerLimits",
    "PortInUseError",
    "ReplyBatch",
    "ReplyFeed",
    "ReplyInbox",
    "ReplyListener",
    "ReplyTemplate",
    "Subscription",
    "TemplateError",
    "backfill",
    "suggested_start",
]
