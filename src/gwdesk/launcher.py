"""`gwdesk`: the one entry point, above the console and the commands.

Without arguments, or with the console's own options first (`--profile`,
`--sandbox`), it opens the console (`gwdesk.ui.app`); with a command, it runs the
command line (`gwdesk.cli`), which never imports the console. A frozen
(PyInstaller) app has no Python interpreter beside it, so the console starts its
sandbox child as this same executable with a hidden first argument
(`gwdesk.frozen.SANDBOX_SUBCOMMAND`), which this entry point hands to
`gwdesk-sandbox`. Neither `gwdesk.cli` nor `gwdesk.ui` imports this module. Run from
source as `python -m gwdesk.launcher` to exercise the same path.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Final

from gwdesk.domain.terminal import terminal_safe
from gwdesk.frozen import SANDBOX_SUBCOMMAND

#: Options of the console itself (`gwdesk.ui.app`): given first, they open the console.
CONSOLE_OPTIONS: Final = ("--profile", "--sandbox", "--quit-after")
EXIT_USAGE: Final = 2


def wants_console(arguments: Sequence[str]) -> bool:
    return not arguments or arguments[0].split("=", 1)[0] in CONSOLE_OPTIONS


def open_console(arguments: Sequence[str] = ()) -> int:
    """Start the Qt console (imported only now: the commands must work without Qt)."""
    try:
        app = importlib.import_module("gwdesk.ui.app")
    except ImportError as exc:
        why = terminal_safe(str(exc))
        print(
            f"gwdesk: the console cannot start ({why}). Use a command instead; see gwdesk --help.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    code = app.main(list(arguments))
    return code if isinstance(code, int) else 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == [SANDBOX_SUBCOMMAND]:
        from gwdesk.sandbox.cli import main as sandbox_main

        return sandbox_main(arguments[1:])
    if wants_console(arguments):
        return open_console(arguments)
    from gwdesk.cli import main as commands

    return commands(arguments)


if __name__ == "__main__":
    sys.exit(main())
