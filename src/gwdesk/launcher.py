"""The single executable of a frozen (PyInstaller) gwdesk: console, commands and sandbox.

A frozen app has no Python interpreter beside it, so the console cannot start its
sandbox child as `python -m gwdesk.sandbox`. Instead it runs this same executable
with the hidden first argument `sandbox` (`gwdesk.ui.sandbox_process`), which
this entry point hands to `gwdesk-sandbox`; everything else goes to `gwdesk`.
Run from source as `python -m gwdesk.launcher` to exercise the same path.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Final

#: The hidden first argument that makes the executable behave as `gwdesk-sandbox`.
SANDBOX_SUBCOMMAND: Final = "sandbox"


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == [SANDBOX_SUBCOMMAND]:
        from gwdesk.sandbox.cli import main as sandbox_main

        return sandbox_main(arguments[1:])
    from gwdesk.cli import main as gwdesk_main

    return gwdesk_main(arguments)


if __name__ == "__main__":
    sys.exit(main())
