"""Profiles on disk and passwords in the system keyring; pure Python, no Qt.

Profiles are a JSON file in the platform's config directory (`GWDESK_CONFIG_DIR`
overrides it), written atomically with a schema version, so a crash never leaves
half a file and a newer gwdesk's file is refused rather than misread. Passwords
are never written there: they go to the system keyring under the service
`gwdesk`, keyed by profile name and user name. When no keyring is usable the
caller is told (`KeyringUnavailable`) so it can say the password is kept for this
session only.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import keyring
import keyring.backend
import keyring.errors
import pydantic

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.domain.settings import DEFAULT_PROFILE
from gwdesk.paths import config_dir
from gwdesk.private_files import private_folder, tighten

PROFILES_FILE: Final = "profiles.json"
SCHEMA_VERSION: Final = 1
KEYRING_SERVICE: Final = "gwdesk"


class SettingsError(Exception):
    """A settings file that cannot be used as it is; the message says what to do."""


class KeyringUnavailable(Exception):
    """No usable system keyring: a password can only be kept for this session."""


def _upgrade(document: dict[str, Any]) -> dict[str, Any]:
    """Bring an older document to `SCHEMA_VERSION` (one step per version when there are any)."""
    version = document.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise SettingsError("The profiles file has no valid schema_version.")
    if version > SCHEMA_VERSION:
        raise SettingsError(
            f"The profiles file was written by a newer gwdesk (schema {version}); "
            "update gwdesk to use it."
        )
    return document


class ProfileStore:
    """The operator's gateway profiles, read and written as one JSON document."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or config_dir()
        self.path = self.directory / PROFILES_FILE

    def _read(self) -> dict[str, Any]:
        tighten(self.directory)  # as an earlier version may have left them
        tighten(self.path)
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {
                "schema_version": SCHEMA_VERSION,
                "profiles": [],
                DEFAULT_PROFILE.stored_as: None,
            }
        except OSError as exc:
            raise SettingsError(f"The profiles file {self.path} cannot be read: {exc}.") from None
        try:
            document = json.loads(text)
        except ValueError:
            raise SettingsError(
                f"The profiles file {self.path} is not valid JSON; fix or remove it."
            ) from None
        if not isinstance(document, dict) or not isinstance(document.get("profiles", []), list):
            raise SettingsError(f"The profiles file {self.path} does not hold a profile list.")
        return _upgrade(document)

    def _write(self, document: dict[str, Any]) -> None:
        private_folder(self.directory)
        handle, temp = tempfile.mkstemp(prefix=".profiles-", suffix=".json", dir=self.directory)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(document, stream, indent=2, ensure_ascii=False)
                stream.write("\n")
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def profiles(self) -> list[Profile]:
        out = []
        for index, raw in enumerate(self._read().get("profiles", [])):
            try:
                out.append(Profile.model_validate(raw))
            except pydantic.ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                reason = str(first["msg"]).removeprefix("Value error, ")
                raise SettingsError(
                    f"Profile #{index + 1} in {self.path} is not valid ({where}: {reason})."
                ) from None
        return out

    def get(self, name: str) -> Profile:
        for profile in self.profiles():
            if profile.name == name:
                return profile
        known = ", ".join(p.name for p in self.profiles()) or "none"
        raise SettingsError(f"There is no profile named {name!r} (known: {known}).")

    def save(self, profile: Profile) -> None:
        """Add `profile`, or replace the one of the same name."""
        document = self._read()
        rest = [p for p in document.get("profiles", []) if p.get("name") != profile.name]
        rest.append(profile.model_dump(mode="json"))
        document["profiles"] = rest
        document["schema_version"] = SCHEMA_VERSION
        self._write(document)

    def delete(self, name: str) -> bool:
        document = self._read()
        before = document.get("profiles", [])
        after = [p for p in before if p.get("name") != name]
        if len(after) == len(before):
            return False
        document["profiles"] = after
        if document.get(DEFAULT_PROFILE.stored_as) == name:
            document[DEFAULT_PROFILE.stored_as] = None
        self._write(document)
        return True

    @property
    def default_name(self) -> str | None:
        """The default profile's name (`DEFAULT_PROFILE`); None when unset or unreadable."""
        return DEFAULT_PROFILE.read(self._read().get(DEFAULT_PROFILE.stored_as))

    def set_default(self, name: str | None) -> None:
        if name is not None:
            self.get(name)
        document = self._read()
        document[DEFAULT_PROFILE.stored_as] = DEFAULT_PROFILE.write(name)
        self._write(document)


class PasswordVault:
    """Profile passwords in the system keyring (or a given keyring backend, for tests)."""

    def __init__(self, backend: keyring.backend.KeyringBackend | None = None) -> None:
        self._backend = backend

    @property
    def backend(self) -> keyring.backend.KeyringBackend:
        return self._backend or keyring.get_keyring()

    def _guard(self, action: str, call: Any) -> Any:
        try:
            return call()
        except keyring.errors.NoKeyringError:
            raise KeyringUnavailable(
                "No system keyring is available: the password is kept for this session only."
            ) from None
        except keyring.errors.KeyringError as exc:
            raise KeyringUnavailable(
                f"The system keyring could not {action} the password ({type(exc).__name__}); "
                "it is kept for this session only."
            ) from None

    def get(self, profile: Profile) -> Secret | None:
        value = self._guard(
            "read", lambda: self.backend.get_password(KEYRING_SERVICE, profile.keyring_key)
        )
        return Secret(value) if isinstance(value, str) else None

    def set(self, profile: Profile, password: Secret) -> None:
        self._guard(
            "store",
            lambda: self.backend.set_password(
                KEYRING_SERVICE, profile.keyring_key, password.reveal()
            ),
        )

    def get_store(self, profile: Profile) -> Secret | None:
        """The password of the profile's shared store (None: none kept)."""
        found = self._guard(
            "read", lambda: self.backend.get_password(KEYRING_SERVICE, profile.store_keyring_key)
        )
        return Secret(found) if isinstance(found, str) and found else None

    def set_store(self, profile: Profile, password: Secret) -> None:
        self._guard(
            "save",
            lambda: self.backend.set_password(
                KEYRING_SERVICE, profile.store_keyring_key, password.reveal()
            ),
        )

    def delete(self, profile: Profile) -> None:
        """Forget the password; one that was never stored is not an error."""
        self._remove(profile.keyring_key)

    def delete_store(self, profile: Profile) -> None:
        """Forget the shared store's password (kept or not)."""
        self._remove(profile.store_keyring_key)

    def get_rule_secret(self, profile: Profile, rule: str) -> Secret | None:
        """The signing secret of a keyword rule's forwards (None: none kept here)."""
        found = self._guard(
            "read", lambda: self.backend.get_password(KEYRING_SERVICE, rule_key(profile, rule))
        )
        return Secret(found) if isinstance(found, str) and found else None

    def set_rule_secret(self, profile: Profile, rule: str, secret: Secret) -> None:
        self._guard(
            "save",
            lambda: self.backend.set_password(
                KEYRING_SERVICE, rule_key(profile, rule), secret.reveal()
            ),
        )

    def delete_rule_secret(self, profile: Profile, rule: str) -> None:
        self._remove(rule_key(profile, rule))

    def _remove(self, key: str) -> None:
        def remove() -> None:
            try:
                self.backend.delete_password(KEYRING_SERVICE, key)
            except keyring.errors.PasswordDeleteError:
                return

        self._guard("remove", remove)


def rule_key(profile: Profile, rule: str) -> str:
    """Where a keyword rule's signing secret is kept (rule names are matched in any case)."""
    return f"{profile.name}:rule:{rule.casefold()}"


def password_of(
    profile: Profile, vault: PasswordVault, kept: Mapping[str, Secret], *, store: bool = False
) -> Secret | None:
    """A profile's password (`store`: its team server's), as the console looks it up:
    the one kept for this session (`kept`, by keyring key: typed when no keyring was
    usable), else the keyring's; None when neither holds one. `KeyringUnavailable`
    when the keyring cannot be read and nothing is kept (the caller says so, or not)."""
    key = profile.store_keyring_key if store else profile.keyring_key
    found = kept.get(key)
    if found is not None:
        return found
    return vault.get_store(profile) if store else vault.get(profile)
