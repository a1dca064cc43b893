"""Who an operator is to the rest of the team: the name beside what they sent and changed.

A name travels to every other console of the office (history, audit, opt-out changes,
"Sam is typing"), so it is kept to one printable line, bounded; until an operator gives
one, the workstation's user name stands in.
"""

from __future__ import annotations

import getpass
from typing import Final

MAX_OPERATOR: Final = 100
"""Characters of an operator's name kept."""


def operator_name(given: str | None) -> str:
    """`given` as other consoles will show it: printable, one line, spaces collapsed,
    bounded (format characters such as bidi overrides become spaces)."""
    if not given:
        return ""
    text = "".join(c if c.isprintable() else " " for c in given)
    return " ".join(text.split())[:MAX_OPERATOR]


def default_operator() -> str:
    """The OS user's name: who an operator is until they say otherwise."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (a bare container)
        name = ""
    return operator_name(name) or "operator"
