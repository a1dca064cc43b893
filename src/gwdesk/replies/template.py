"""The `ReplyPath` template the listener hands out, and how it reads its own template back.

The gateway fills `#FROM#`, `#TO#`, `#MSG#`, `#SENTDTS#` and `#RCVDDTS#` into the
template with URL-encoded values; the parameter names around them are whatever
the operator configured. The listener therefore knows which parameter carries
which value only from its own template: `fields` maps each parameter name to its
placeholder. A secret path segment keeps strangers from adding replies: only the
gateway, which was given the template, knows it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote, urlsplit

from gwdesk.domain.profile import is_loopback

PLACEHOLDERS: Final = ("FROM", "TO", "MSG", "SENTDTS", "RCVDDTS")
REQUIRED: Final = frozenset({"FROM", "TO", "MSG", "RCVDDTS"})
"""Without the received time a retry and the backfill could not be recognised (the natural key)."""
DEFAULT_FIELDS: Final = (
    ("from", "FROM"),
    ("to", "TO"),
    ("msg", "MSG"),
    ("sent", "SENTDTS"),
    ("rcvd", "RCVDDTS"),
)
PATH_PREFIX: Final = "/replies/"
_NAME_RE: Final = re.compile(r"[A-Za-z0-9._~-]{1,40}")
_SECRET_RE: Final = re.compile(r"[A-Za-z0-9_-]{16,128}")
_PLACEHOLDER_RE: Final = re.compile(r"#([A-Z]+)#")


class TemplateError(ValueError):
    """A `ReplyPath` template this listener cannot serve; the message says why."""


DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def team_route(template: ReplyTemplate) -> ReplyTemplate:
    """`template` if a team may route every two-way reply to it: https, or a loopback
    address (a test's receiver on this machine); `TemplateError` saying why not. A team's
    server holds the published ReplyPath to the same rule (`pg_rules.py`), and each
    console checks it again as it reads it: a path pointed anywhere else in clear is not
    used."""
    if template.scheme == "https" or is_loopback(template.host):
        return template
    raise TemplateError(
        f"a team's ReplyPath must be an https address (it is http://{template.host[:60]}): "
        "put the receiver behind the office's TLS proxy and give it --public-url "
        "https://… (docs/team.md)"
    )


def _netloc(host: str, port: int, scheme: str = "http") -> str:
    """host:port, the port left out where it is the scheme's own (as a proxy's address is)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return shown if DEFAULT_PORTS.get(scheme) == port else f"{shown}:{port}"


def public_address(text: str) -> tuple[str, str, int]:
    """Where the gateway reaches a listener that sits behind a reverse proxy
    (`https://replies.example.org`): its scheme, host and port; `TemplateError` saying
    what is wrong. Only the address: the path is the listener's own secret one."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError as exc:
        raise TemplateError(f"not a usable address: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TemplateError(f"not an http(s) address: {text[:80]!r}")
    if parts.username or parts.password:
        raise TemplateError("the address must not hold a user name or password")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise TemplateError(
            "give the address only (https://host[:port]); the path is the listener's"
        )
    return (
        parts.scheme,
        parts.hostname,
        port if port is not None else (443 if parts.scheme == "https" else 80),
    )


@dataclass(frozen=True, slots=True)
class ReplyTemplate:
    """A listener's `ReplyPath`: where it is, its secret, and which parameter is which."""

    host: str
    port: int
    secret: str = field(repr=False)
    """Kept out of `repr`, so a log line or a traceback does not hand out the way in."""
    fields: tuple[tuple[str, str], ...] = DEFAULT_FIELDS
    """(parameter name, placeholder) pairs in the order they appear."""
    scheme: str = "http"

    def __post_init__(self) -> None:
        if self.scheme not in ("http", "https"):
            raise TemplateError(f"the address must be http or https, not {self.scheme[:10]!r}")
        if not self.host or any(c in self.host for c in "/?#@ "):
            raise TemplateError(f"not a host name: {self.host[:60]!r}")
        if not 0 < self.port < 65536:
            raise TemplateError(f"not a port number: {self.port}")
        if not _SECRET_RE.fullmatch(self.secret):
            raise TemplateError("the secret must be 16 to 128 URL-safe characters")
        names = [name for name, _ in self.fields]
        placeholders = [placeholder for _, placeholder in self.fields]
        for name in names:
            if not _NAME_RE.fullmatch(name):
                raise TemplateError(
                    f"parameter name {name[:40]!r} must be 1 to 40 letters, digits or . _ ~ -"
                )
        for placeholder in placeholders:
            if placeholder not in PLACEHOLDERS:
                raise TemplateError(f"unknown placeholder #{placeholder[:20]}#")
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise TemplateError(f"parameter {repeated[0]!r} is named twice")
        twice = sorted({p for p in placeholders if placeholders.count(p) > 1})
        if twice:
            raise TemplateError(f"#{twice[0]}# appears twice")
        missing = [p for p in PLACEHOLDERS if p in REQUIRED and p not in placeholders]
        if missing:
            raise TemplateError(
                "the template needs " + ", ".join(f"#{p}#" for p in missing)
                + " (the received time is how retries and the backfill are matched)"
            )  # fmt: skip

    @classmethod
    def generate(
        cls,
        host: str,
        port: int,
        secret: str,
        fields: Sequence[tuple[str, str]] = DEFAULT_FIELDS,
    ) -> ReplyTemplate:
        return cls(host=host, port=port, secret=secret, fields=tuple(fields))

    @classmethod
    def parse(cls, text: str) -> ReplyTemplate:
        """Read a template back (e.g. one the operator edited) into host, secret and fields."""
        address, _, query = text.strip().partition("?")
        if "#" in address:
            raise TemplateError("placeholders belong in the query, after the '?'")
        try:
            parts = urlsplit(address)
            port = parts.port
        except ValueError as exc:
            raise TemplateError(f"not a usable address: {exc}") from None
        if not parts.hostname:
            raise TemplateError(f"not an http(s) address: {address[:80]!r}")
        if parts.username or parts.password:
            raise TemplateError("the address must not hold a user name or password")
        if not parts.path.startswith(PATH_PREFIX) or parts.path.count("/") != 2:
            raise TemplateError(f"the path must be {PATH_PREFIX}SECRET")
        fields: list[tuple[str, str]] = []
        for piece in query.split("&") if query else []:
            name, equals, value = piece.partition("=")
            match = _PLACEHOLDER_RE.fullmatch(value)
            if not equals or match is None:
                raise TemplateError(f"{piece[:60]!r} is not name=#PLACEHOLDER#")
            fields.append((name, match.group(1)))
        default_port = 443 if parts.scheme == "https" else 80
        return cls(
            host=parts.hostname,
            port=port if port is not None else default_port,
            secret=parts.path.removeprefix(PATH_PREFIX),
            fields=tuple(fields),
            scheme=parts.scheme,
        )

    @property
    def path(self) -> str:
        """The secret path the listener answers on; every other path is a 404."""
        return PATH_PREFIX + self.secret

    @property
    def base_url(self) -> str:
        """The address without parameters: where keyword forwards are configured to go."""
        return f"{self.scheme}://{_netloc(self.host, self.port, self.scheme)}{self.path}"

    @property
    def names(self) -> dict[str, str]:
        """Placeholder -> parameter name."""
        return {placeholder: name for name, placeholder in self.fields}

    def render(self) -> str:
        """The text to configure as the message's `ReplyPath`."""
        query = "&".join(f"{name}=#{placeholder}#" for name, placeholder in self.fields)
        return f"{self.base_url}?{query}"

    def fill(self, values: Mapping[str, str]) -> str:
        """The URL a gateway calls for `values` (placeholder -> text), URL-encoded UTF-8."""
        query = "&".join(
            f"{name}={quote(values[placeholder], safe='')}" for name, placeholder in self.fields
        )
        return f"{self.base_url}?{query}"

    def __str__(self) -> str:
        return self.render()
