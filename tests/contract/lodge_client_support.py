"""Shared set-up of the Lodge client's contract tests: services, real files, a hostile server.

Test files are real: the smallest byte strings that are valid PNG, JPEG, GIF, PDF and
TIFF files (built here, not copied from the sandbox), because the gateway checks a
file's first bytes as well as its name.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from string import Template
from typing import Any

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import LodgePort, Profile
from gwdesk.gateway.http import HttpSettings
from gwdesk.gateway.lodge.files import LodgeFile
from gwdesk.gateway.retry import RetryPolicy
from gwdesk.gateway.service import GatewayService
from gwdesk.resources import resource_path
from gwdesk.sandbox.server import SandboxThread
from tests.contract.rest_support import FAST, profile_for

PORTS: tuple[LodgePort, ...] = ("soap11", "soap12", "http_get", "http_post")
SOAP_PORTS: tuple[LodgePort, ...] = ("soap11", "soap12")
HTTP_PORTS: tuple[LodgePort, ...] = ("http_get", "http_post")
MOBILE = "0412 345 678"
MOBILE_DIGITS = "61412345678"
FAX = "(02) 9999 8888"
FAX_DIGITS = "61299998888"


# ---- real files ---------------------------------------------------------------------------


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(width: int = 1, height: int = 1) -> bytes:
    """A valid grey-scale PNG."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x80" * width for _ in range(height)))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", pixels)
        + _png_chunk(b"IEND", b"")
    )


def gif() -> bytes:
    """A valid 1x1 GIF89a."""
    return (
        b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff"
        b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
    )


def jpeg() -> bytes:
    """A JPEG's start of image, a JFIF header and its end: what a file signature checks."""
    jfif = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    return b"\xff\xd8" + jfif + b"\xff\xd9"


def pdf(padding: int = 0) -> bytes:
    """A minimal one-page PDF, optionally padded with a comment to a size."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 4\n0000000000 65535 f \n"
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    if padding:
        out += b"%" + b"x" * (padding - 2) + b"\n"
    return bytes(out)


def tiff() -> bytes:
    """A valid 1x1 bi-level little-endian TIFF."""
    entries = [
        (256, 3, 1, 1),  # width
        (257, 3, 1, 1),  # height
        (259, 3, 1, 1),  # no compression
        (262, 3, 1, 0),  # white is zero
        (273, 4, 1, 8 + 2 + 12 * 6 + 4),  # strip offset: just after the directory
        (279, 4, 1, 1),  # strip byte count
    ]
    ifd = struct.pack("<H", len(entries))
    ifd += b"".join(struct.pack("<HHII", *e) for e in entries) + struct.pack("<I", 0)
    return b"II*\x00" + struct.pack("<I", 8) + ifd + b"\x00"


def sized(data: bytes, size: int) -> bytes:
    """`data` padded to exactly `size` bytes (the signature stays at the front)."""
    return data + b"\x00" * (size - len(data))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def files(*named: tuple[str, bytes]) -> list[LodgeFile]:
    return [LodgeFile(name, data) for name, data in named]


# ---- services -----------------------------------------------------------------------------


def lodge_profile(sandbox: SandboxThread, port: LodgePort, **overrides: Any) -> Profile:
    fields = {"soap_namespace": sandbox.config.namespace, "lodge_port": port, **overrides}
    return profile_for(sandbox, **fields)


def lodge_service(
    sandbox: SandboxThread,
    port: LodgePort,
    password: str = "demo",  # noqa: S107 - the sandbox's demo account
    *,
    retry: RetryPolicy = FAST,
    http: HttpSettings | None = None,
    **overrides: Any,
) -> GatewayService:
    return GatewayService(
        lodge_profile(sandbox, port, **overrides), Secret(password), retry=retry, http=http
    )


LAST = (
    "message_id",
    "type",
    "to_number",
    "message",
    "subject",
    "url",
    "reply_type",
    "reply_path",
    "service_id",
    "attachments",
)


def messages(sandbox: SandboxThread) -> list[dict[str, Any]]:
    rows = sandbox.query(f"SELECT {', '.join(LAST)} FROM messages ORDER BY id")
    found = [dict(zip(LAST, row, strict=True)) for row in rows]
    for row in found:
        row["attachments"] = json.loads(row["attachments"]) if row["attachments"] else []
    return found


def only_message(sandbox: SandboxThread) -> dict[str, Any]:
    [row] = messages(sandbox)
    return row


def stored_files(row: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(a["file_name"], a["content_type"], a["sha256"]) for a in row["attachments"]]


# ---- a hostile server ---------------------------------------------------------------------


@dataclass
class Answer:
    """One canned answer: status, content type and body (or a body too big to hold)."""

    body: bytes = b""
    status: int = 200
    content_type: str = "text/xml; charset=utf-8"
    stream_bytes: int = 0
    """When set, this many bytes are streamed (of `body` repeated) instead of `body`."""
    declare_length: bool = True


@dataclass
class HostileServer:
    """A tiny loopback HTTP server that answers Lodge calls the way a broken gateway might.

    `wsdl` answers `GET ...?WSDL`; `answer` answers everything else. Every request is
    recorded as (method, path with query, content type).
    """

    wsdl: Answer
    answer: Answer = field(default_factory=Answer)
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    url: str = ""
    _server: ThreadingHTTPServer | None = None

    def start(self) -> HostileServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                owner.requests.append(
                    (self.command, self.path, self.headers.get("Content-Type", ""))
                )
                wants_wsdl = self.command == "GET" and self.path.lower().endswith("?wsdl")
                chosen = owner.wsdl if wants_wsdl else owner.answer
                try:
                    self._write(chosen)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _write(self, answer: Answer) -> None:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                total = answer.stream_bytes or len(answer.body)
                if answer.declare_length:
                    self.send_header("Content-Length", str(total))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if not answer.stream_bytes:
                    self.wfile.write(answer.body)
                    return
                chunk = (answer.body * (65536 // max(1, len(answer.body)) + 1))[:65536]
                sent = 0
                while sent < total:
                    self.wfile.write(chunk[: total - sent])
                    sent += len(chunk)

            do_GET = _serve
            do_POST = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/dotnet/Lodge.asmx"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def operation_requests(self) -> list[tuple[str, str, str]]:
        return [r for r in self.requests if not r[1].lower().endswith("?wsdl")]


NAMESPACE = "http://sandbox.gwdesk.local/Lodge"


def wsdl_text(address: str, namespace: str = NAMESPACE, padding: int = 0) -> bytes:
    """The Lodge WSDL (the service description the sandbox also serves), optionally padded
    with `padding` extra schema elements to make it slow to load."""
    template = Template(resource_path("wsdl", "lodge.wsdl.tmpl").read_text(encoding="utf-8"))
    text = template.substitute(namespace=namespace, address=address)
    if padding:
        extra = "".join(
            f'<s:element name="Pad{i}"><s:complexType><s:sequence>'
            f'<s:element minOccurs="0" maxOccurs="1" name="A" type="s:string" />'
            f'<s:element minOccurs="0" maxOccurs="1" name="B" type="s:string" />'
            f"</s:sequence></s:complexType></s:element>"
            for i in range(padding)
        )
        marker = '<s:element name="LodgeSMSMessage">'
        text = text.replace(marker, extra + marker, 1)
    return text.encode()


def hostile_service(
    server: HostileServer, port: LodgePort, *, retry: RetryPolicy = FAST
) -> GatewayService:
    profile = Profile(
        name="hostile",
        rest_url=server.url.rsplit("/dotnet", 1)[0],
        lodge_url=server.url,
        soap_namespace=NAMESPACE,
        username="demo",
        lodge_port=port,
    )
    return GatewayService(profile, Secret("demo"), retry=retry)


def running(start: Callable[[], HostileServer]) -> Iterator[HostileServer]:
    server = start()
    try:
        yield server
    finally:
        server.stop()
