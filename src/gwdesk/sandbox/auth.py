"""OAuth 2 password-grant tokens and Basic authentication for the REST face."""

from __future__ import annotations

import base64
import math
import secrets
import sqlite3
from email.utils import formatdate
from typing import Any

from gwdesk.sandbox.db import Account, account_by_id, token_digest, transaction, verify_password
from gwdesk.sandbox.engine import now_us


class AuthError(Exception):
    """Why a request is not authenticated; `invalid_token` marks a bad bearer token."""

    def __init__(self, message: str, *, invalid_token: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.invalid_token = invalid_token

    @property
    def challenge(self) -> str:
        if self.invalid_token:
            return f'Bearer error="invalid_token", error_description="{self.message}"'
        return "Bearer"


class TokenError(Exception):
    """An RFC 6749 section 5.2 error for the token endpoint."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


class Authenticator:
    def __init__(self, conn: sqlite3.Connection, token_ttl: float) -> None:
        self.conn = conn
        self.token_ttl = token_ttl

    def issue_token(self, form: dict[str, str]) -> dict[str, Any]:
        grant_type = form.get("grant_type")
        if not grant_type:
            raise TokenError("invalid_request", "grant_type is required.")
        if grant_type != "password":
            raise TokenError("unsupported_grant_type", "Only the password grant is supported.")
        username, password = form.get("username"), form.get("password")
        if not username or password is None or password == "":
            raise TokenError("invalid_request", "username and password are required.")
        account = verify_password(self.conn, username, password)
        if account is None:
            raise TokenError("invalid_grant", "The user name or password is incorrect.")
        token = secrets.token_urlsafe(32)
        issued = now_us()
        expires = issued + int(self.token_ttl * 1_000_000)
        with transaction(self.conn):
            self.conn.execute("DELETE FROM tokens WHERE expires_us < ?", (issued,))
            self.conn.execute(
                "INSERT INTO tokens(token_hash, account_id, issued_us, expires_us) VALUES (?, ?, ?, ?)",
                (token_digest(token), account.id, issued, expires),
            )
        return {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": max(1, math.ceil(self.token_ttl)) if self.token_ttl >= 1 else 0,
            "scope": "send",
            ".issued": formatdate(issued / 1_000_000, usegmt=True),
            ".expires": formatdate(expires / 1_000_000, usegmt=True),
        }

    def authenticate(self, header: str | None) -> Account:
        """The account behind an `Authorization` header (Bearer or Basic)."""
        if not header:
            raise AuthError("Authorization is required: a Bearer token or Basic credentials.")
        scheme, _, credentials = header.partition(" ")
        scheme = scheme.lower()
        if scheme == "bearer":
            return self._bearer(credentials)
        if scheme == "basic":
            return self._basic(credentials)
        raise AuthError("Unsupported authorization scheme; use Bearer or Basic.")

    def _bearer(self, token: str) -> Account:
        # Issued tokens are printable ASCII; anything else (a header's raw non-ASCII bytes
        # arrive as surrogate escapes) cannot be one and must not reach the digest.
        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise AuthError("Malformed Bearer authorization header.", invalid_token=True)
        row = self.conn.execute(
            "SELECT account_id, expires_us FROM tokens WHERE token_hash = ?", (token_digest(token),)
        ).fetchone()
        if row is None:
            raise AuthError("The access token is not valid.", invalid_token=True)
        if row["expires_us"] <= now_us():
            raise AuthError("The access token expired.", invalid_token=True)
        account = account_by_id(self.conn, row["account_id"])
        if account is None:  # pragma: no cover - accounts are never deleted
            raise AuthError("The access token is not valid.", invalid_token=True)
        return account

    def _basic(self, credentials: str) -> Account:
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
        except ValueError:  # binascii.Error, non-ASCII input, UnicodeDecodeError
            raise AuthError("Malformed Basic credentials.") from None
        username, sep, password = decoded.partition(":")
        if not sep:
            raise AuthError("Malformed Basic credentials.")
        account = verify_password(self.conn, username, password)
        if account is None:
            raise AuthError("The user name or password is incorrect.")
        return account
