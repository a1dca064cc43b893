"""The frozen (PyInstaller) app's one executable, and how it is told to be the sandbox.

A frozen app has no Python interpreter beside it, so the console starts its sandbox
gateway child as this same executable with a hidden first argument; the launcher,
seeing it, runs `gwdesk-sandbox` instead of the console. Both sides read it here.
"""

from __future__ import annotations

import sys
from typing import Final

SANDBOX_SUBCOMMAND: Final = "sandbox"


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))
