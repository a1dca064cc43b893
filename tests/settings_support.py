"""Values for the settings tests: a sample other than the default for every declared
setting (`gwdesk.domain.settings`), and what a hand-edited or damaged place might hold."""

from __future__ import annotations

from typing import Any

#: A value other than the default for every declared setting: a new setting needs one here.
SAMPLES: dict[str, Any] = {
    "profiles.default": "Work",
    "listener.enabled": False,
    "listener.host": "192.168.1.20",
    "listener.public_host": "desk.example.com",
    "listener.port": 8642,
    "listener.secret": "a-secret-path-segment",
    "replies.seen_up_to": 1234,
    "replies.rules_done_up_to": 1200,
    "logs.header": "AAAA/wAAAAA=",
    "optouts.opt_out_keywords": ("STOP", "HALT", "NO MORE"),
    "optouts.opt_in_keywords": ("START", "RESUME"),
    "sending.marketing_default": True,
    "sending.opt_out_instruction": "Txt STOP to 0412 345 678 to opt out",
    "sending.quiet_hours_on": False,
    "sending.quiet_hours": {"weekdays": {"start": "09:00", "end": "17:30"}, "weekends": None},
    "team.reply_path": "https://replies.example.com/gwdesk/abc?from=#FROM#",
    "replies.rules": [
        {
            "name": "hours",
            "match": "whole",
            "value": "HOURS",
            "actions": [{"do": "reply", "value": "Open 9 to 5.", "per_day": 2}],
            "on": True,
        }
    ],
    "sending.own_number": "61499888777",
    "sending.repeat_window_hours": 6,
    "window.geometry": b"\x01\xd9\xd0\xcb\x00\x03",
    "window.tab": 3,
}
#: What a hand-edited or damaged place might hold instead, per kind of value.
GARBLED: list[object] = ["", "not a number", -1, 10**30, 1.5, [], {"a": 1}, True, "\x07bell"]
