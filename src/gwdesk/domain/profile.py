"""A gateway profile: where an account's gateway is and how to talk to it.

Profiles are settings an operator edits, so every field is checked when a profile
is made, with a message that names the field. The password is not here: it lives
in the system keyring (see `gwdesk.profiles`), never in a settings file.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Final, Literal
from urllib.parse import SplitResult, parse_qsl, urlsplit, urlunsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gwdesk.domain.numbers import DEFAULT_REGION, is_region
from gwdesk.domain.operator import default_operator, operator_name

AuthMode = Literal["oauth", "basic"]
LodgePort = Literal["soap11", "soap12", "http_get", "http_post"]
DEFAULT_NAMESPACE: Final = "http://tempuri.org/"
DEFAULT_TIMEZONE: Final = "Australia/Sydney"
LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost.localdomain"})


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: str, what: str) -> str:
    """An https URL, or http on this machine only (a local sandbox).

    Credentials travel in every request (Basic) or in the token request (OAuth), so
    plain http is refused anywhere a network sits between client and gateway.
    """
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{what} must be an http(s) address such as https://host/, not {text[:80]!r}"
        )
    if parts.username or parts.password:
        raise ValueError(f"{what} must not hold a user name or password")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ValueError(f"{what} must use https (plain http is allowed for this machine only)")
    if parts.query or parts.fragment:
        raise ValueError(f"{what} must not have a query or fragment")
    return text.rstrip("/")


class Profile(BaseModel):
    """One gateway account as the operator set it up."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    name: str = Field(min_length=1, max_length=80)
    rest_url: str
    lodge_url: str | None = None
    soap_namespace: str = DEFAULT_NAMESPACE
    username: str = Field(min_length=1, max_length=200)
    auth: AuthMode = "oauth"
    timezone: str = DEFAULT_TIMEZONE
    """The gateway account's zone: webhook times and offset-less times are read in it."""
    region: str = DEFAULT_REGION
    """Where national numbers typed without a country code belong."""
    lodge_port: LodgePort = "soap12"
    ca_bundle: Path | None = None
    """A PEM file of extra trusted CAs; the system trust store is used otherwise."""
    store_url: str | None = None
    """The team's shared store (`postgresql://role@host:port/database?sslmode=…`), or None:
    the profile's own file. Never with a password: that is in the keyring."""
    operator: str | None = None
    """Who works this profile at this workstation, as the team sees it (None: the OS user)."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if any(not c.isprintable() for c in value):
            raise ValueError("the name must be printable text")
        return value

    @field_validator("rest_url")
    @classmethod
    def _rest_url(cls, value: str) -> str:
        return check_url(value, "the REST base URL")

    @field_validator("lodge_url")
    @classmethod
    def _lodge_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return check_url(value, "the Lodge URL")

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value[:60]!r}; use a name such as Australia/Sydney"
            ) from None
        return value

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        if not is_region(value):
            raise ValueError(f"unknown region {value[:8]!r}; use a two-letter code such as AU")
        return value.upper()

    @field_validator("store_url")
    @classmethod
    def _store_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return check_store_url(value)

    @field_validator("operator")
    @classmethod
    def _operator(cls, value: str | None) -> str | None:
        return operator_name(value) or None

    @property
    def operator_display(self) -> str:
        """The name other consoles show beside what this one sends and changes."""
        return self.operator or default_operator()

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def keyring_key(self) -> str:
        """Where this profile's password is kept in the system keyring."""
        return f"{self.name}:{self.username}"

    @property
    def store_keyring_key(self) -> str:
        """Where the shared store's password is kept in the system keyring."""
        return f"{self.name}:store:{store_role(self.store_url or '')}"


STORE_SCHEMES: Final = ("postgresql", "postgres")
STORE_TLS_MODES: Final = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
STORE_TLS_REQUIRED: Final = ("require", "verify-ca", "verify-full")
"""The modes that never send a byte in clear (`verify-full` also checks who answers)."""
PLAINTEXT_OPT_OUT: Final = ("gwdesk_plaintext", "trusted-lan")
"""`gwdesk_plaintext=trusted-lan` in a store address: the office accepts a connection in
clear to a server that is not on this machine (a trusted LAN only; docs/team.md)."""
SECRET_PARAMETERS: Final = frozenset({"password", "sslpassword"})


def store_role(url: str) -> str:
    """The database role a store URL names (`gwdesk` when it names none)."""
    return urlsplit(url).username or "gwdesk"


def _store_hosts(parts: SplitResult, query: list[tuple[str, str]]) -> list[str]:
    """Every host a store address may connect to: the URL's, and libpq's `host` and
    `hostaddr` parameters (each possibly a list, a path being a Unix socket's folder)."""
    hosts = [parts.hostname] if parts.hostname else []
    for key, value in query:
        if key in ("host", "hostaddr"):
            hosts.extend(h.strip() for h in value.split(",") if h.strip())
    return hosts


def _is_local(host: str) -> bool:
    """A Unix socket's folder or a loopback address: nothing leaves this machine."""
    return host.startswith("/") or is_loopback(host)


def check_store_url(url: str) -> str:
    """A PostgreSQL URL naming a server and a database, without a password anywhere (the
    keyring keeps it), with a TLS mode PostgreSQL knows, and TLS required (`require` at
    least) for a server that is not on this machine unless the address carries the
    trusted-LAN opt-out; ValueError saying what is wrong."""
    value = url.strip()
    if any(not c.isprintable() or c.isspace() for c in value):
        raise ValueError("the store address holds spaces or control characters")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        if "port" in str(exc).lower():
            raise ValueError("the store address's port is out of range (1 to 65535)") from None
        raise ValueError(f"the store address is not a URL ({exc})") from None
    if parts.scheme not in STORE_SCHEMES:
        raise ValueError("the store address must start postgresql:// (a PostgreSQL server)")
    query = parse_qsl(parts.query, keep_blank_values=True)
    if parts.password or any(key.lower() in SECRET_PARAMETERS for key, _ in query):
        raise ValueError("the store address must not hold a password: it goes to the keyring")
    hosts = _store_hosts(parts, query)
    if not hosts:
        raise ValueError("the store address names no server (postgresql://role@host/database)")
    if len(parts.path.strip("/")) == 0:
        raise ValueError("the store address names no database (…/database)")
    if port is not None and not 0 < port < 65536:
        raise ValueError("the store address's port is out of range")
    modes = [v for k, v in query if k == "sslmode"]
    mode = modes[-1] if modes else "prefer"
    if mode not in STORE_TLS_MODES:
        raise ValueError(f"unknown sslmode {mode[:20]!r}; use verify-full to check the server")
    remote = [h for h in hosts if not _is_local(h)]
    if remote and mode not in STORE_TLS_REQUIRED and PLAINTEXT_OPT_OUT not in query:
        raise ValueError(
            f"the store at {remote[0][:80]} is not on this machine, so the connection must "
            "be encrypted: add sslmode=verify-full&sslrootcert=<the office CA> (recommended) "
            "or sslmode=require; on a trusted office LAN only, add "
            "gwdesk_plaintext=trusted-lan to connect in clear (docs/team.md)"
        )
    return value


def libpq_url(url: str) -> str:
    """A store address as PostgreSQL's client library takes it: without gwdesk's own
    parameter (the trusted-LAN opt-out), which libpq would refuse as unknown."""
    parts = urlsplit(url)
    if PLAINTEXT_OPT_OUT[0] not in parts.query:
        return url
    kept = [p for p in parts.query.split("&") if p.split("=", 1)[0] != PLAINTEXT_OPT_OUT[0]]
    return urlunsplit(parts._replace(query="&".join(kept)))
