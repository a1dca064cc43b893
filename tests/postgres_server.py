"""A throwaway PostgreSQL server for the team tests and benchmarks: a real one, never a mock.

`initdb` in a temporary folder, `pg_ctl start` on a free loopback port (and a Unix socket
in the same folder), trust authentication for the superuser the tests connect as, and
`stop` + removal at the end. The server binaries come from the distribution's package
(Debian's `postgresql`, which `packaging/dev test` installs); `initdb` refuses to run
as root, so as root the folder is given to the `postgres` user and the tools run as
that user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SUPERUSER = "gwdesk_test"


def server_bin() -> Path | None:
    """The folder of the newest installed server's binaries (initdb, pg_ctl), or None."""
    versions = []
    for found in glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        version = Path(found).parent.parent.name
        versions.append((int(version) if version.isdigit() else 0, Path(found).parent))
    if versions:
        return max(versions)[1]
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _served_certificate(server: PostgresServer, cert: Path, key: Path) -> str:
    """Copy `cert` and `key` into the server's folder as its user may read them (the key
    private, or PostgreSQL refuses it); the configuration lines naming them."""
    lines = []
    for source, name, mode in ((cert, "server.crt", 0o644), (key, "server.key", 0o600)):
        target = server.data / name
        shutil.copyfile(source, target)
        os.chmod(target, mode)
        if server.run_as is not None:
            user = pwd.getpwnam(server.run_as)
            os.chown(target, user.pw_uid, user.pw_gid)
        lines.append(f"ssl_{'cert' if name.endswith('crt') else 'key'}_file = '{target}'\n")
    return "".join(lines)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    """A running throwaway server."""

    folder: Path
    port: int
    bin: Path
    run_as: str | None

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def dsn(self, database: str = "postgres", user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def _tool(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / name), *args]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> None:
        self._tool(
            "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
            "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1",
            "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._tool("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        self.stop()
        self.start()

    def create_database(self, name: str) -> str:
        """A fresh database (one per test keeps tests apart); its DSN."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def drop_database(self, name: str) -> None:
        """Drop a test's database, ending whatever is still connected to it."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def log(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def postgres_server(
    *, durable: bool = False, tls: tuple[Path, Path] | None = None
) -> Iterator[PostgresServer]:
    """Start a throwaway server; stop it and remove its folder afterwards.

    Tests run it with `fsync` off (their data is thrown away; a crash of the machine is not
    what they test); `durable=True` keeps PostgreSQL's defaults, for benchmarks whose
    figures must include what a commit costs an office's server. `tls`: (certificate,
    key) it serves TLS with, as an office's server does."""
    tools = server_bin()
    if tools is None:
        raise RuntimeError(
            "PostgreSQL's server is not installed: on Debian or Ubuntu, apt-get install "
            "postgresql (packaging/dev test does it)"
        )
    run_as = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="gwdesk-pg-"))
    if run_as is not None:
        user = pwd.getpwnam(run_as)
        os.chown(folder, user.pw_uid, user.pw_gid)
    os.chmod(folder, 0o700)
    server = PostgresServer(folder, free_port(), tools, run_as)
    try:
        server._tool(
            "initdb", "-D", str(server.data), "-U", SUPERUSER, "--auth=trust",
            "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        with (server.data / "postgresql.conf").open("a") as conf:
            conf.write("max_connections = 200\n")
            if not durable:
                conf.write("fsync = off\nfull_page_writes = off\n")
            if tls is not None:
                conf.write(f"ssl = on\n{_served_certificate(server, *tls)}")
        for attempt in range(3):
            try:
                server.start()
                break
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise RuntimeError(f"PostgreSQL did not start:\n{server.log()}") from None
                server.port = free_port()
                time.sleep(0.2)
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)
