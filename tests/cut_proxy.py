"""A TCP forwarder to a server that a test can cut: the server "stopped" for whoever
connects through it (every connection dropped, new ones refused) without stopping the
server the other tests share, and joined again in a moment."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit, urlunsplit


class CutProxy:
    """Forwards 127.0.0.1:`port` to `target`; `cut()` drops and refuses, `join()` forwards."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._server.getsockname()[1])
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._cut = False
        self._closed = False
        threading.Thread(target=self._accept, name="cut-proxy", daemon=True).start()

    def via(self, url: str) -> str:
        """`url` (a postgresql:// address of the target) through this proxy."""
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")
        userinfo = netloc[0] + "@" if netloc[1] else ""
        return urlunsplit(parts._replace(netloc=f"{userinfo}127.0.0.1:{self.port}"))

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            dropped, self._open = self._open, set()
        for sock in dropped:
            _close(sock)

    def join(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        _close(self._server)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                cut = self._cut
            if cut:
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        with self._lock:
            self._open -= {source, sink}
        _close(source)
        _close(sink)


def _close(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


@contextmanager
def cut_proxy(url: str) -> Iterator[CutProxy]:
    """A proxy to the server `url` names (closed at the end)."""
    parts = urlsplit(url)
    proxy = CutProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    try:
        yield proxy
    finally:
        proxy.close()
