"""Files only their owner can read: every folder gwdesk makes is 0700, every file 0600.

A profile's database holds the listener's secret (whoever reads it can post
replies), the log and settings say which gateways and numbers are used. So
nothing gwdesk writes may be readable by other local users, whatever umask it
was started under: files are created with an explicit mode (`os.open`, never the
default 0666 masked by the umask) and folders likewise, and what an earlier
version left readable is tightened when it is opened. Tightening only takes
bits away (group and others); it never widens what the owner set.

Imported before the console's first paint: standard library only. The sandbox
keeps its own copy of the two lines it needs (it shares no code with the client).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path
from typing import IO, Any, Final

log = logging.getLogger("gwdesk.private_files")
FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600
SQLITE_SIDES: Final = ("-wal", "-shm", "-journal")
"""Files SQLite keeps beside a database (created with the database file's mode)."""


def tighten(path: Path | str) -> bool:
    """Take group and other permissions off `path` if it exists; whether it exists.

    A file of another user's (a shared folder named by `GWDESK_DATA_DIR`, say)
    cannot be changed: that is logged, not fatal.
    """
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    if mode & 0o077:
        try:
            os.chmod(path, mode & 0o700)
        except PermissionError as exc:
            log.warning("cannot make %s private: %s", path, exc.strerror)
    return True


def private_folder(folder: Path) -> Path:
    """`folder`, created (with any missing parents) 0700 and tightened if it was not."""
    missing: list[Path] = []
    at = folder
    while not at.exists() and at.parent != at:
        missing.append(at)
        at = at.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            created.mkdir(mode=FOLDER_MODE)
        # mkdir's mode is masked by the umask, which can only take bits away: set it exactly,
        # or a umask like 0o277 would leave a folder gwdesk cannot write into.
        os.chmod(created, FOLDER_MODE)
    tighten(folder)
    return folder


def private_file(path: Path | str) -> Path:
    """`path` as an existing file (empty if it was new) that only its owner can read."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    os.close(fd)
    tighten(path)
    return Path(path)


def private_database(path: Path | str) -> None:
    """Before SQLite opens `path`: its folder and file private, and the files beside it.

    SQLite creates its `-wal`, `-shm` and `-journal` files with the mode of the
    database file, so a private database keeps them private; ones left by an
    earlier version are tightened here.
    """
    private_folder(Path(path).parent)
    private_file(path)
    for side in SQLITE_SIDES:
        tighten(f"{path}{side}")


def _private_opener(path: str, flags: int) -> int:
    """`open`'s opener: a new file is created 0600, an existing one tightened."""
    fd = os.open(path, flags, FILE_MODE)
    try:
        tighten(path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_private(path: Path | str, mode: str = "w", **options: Any) -> IO[Any]:
    """`open(path, mode, ...)`, the file created 0600 (an existing one tightened).

    Exports, lock files and logs all go through here.
    """
    return open(path, mode, opener=_private_opener, **options)


def private_rotator(source: str, dest: str) -> None:
    """A `RotatingFileHandler.rotator`: the fresh log it opens next is private too."""
    os.replace(source, dest)
    private_file(source)
