"""Which password a profile connects with: one typed this run, else the keyring's.

Where no keyring can store a password, the Profiles dialog keeps what the operator
typed for this run of the console only (by the keyring's key, so a rename or a
removal drops it); a connection asks here first and the keyring after. The keyring's
own failure (`KeyringUnavailable`) is left to the caller: the controller connects
without a password, the dialog says there is no keyring.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import PasswordVault, password_of


class SessionPasswords:
    """The passwords kept for this run, looked up before the keyring's."""

    def __init__(
        self,
        vault: PasswordVault,
        gateway: MutableMapping[str, Secret] | None = None,
        store: MutableMapping[str, Secret] | None = None,
    ) -> None:
        self.vault = vault
        self.gateway: MutableMapping[str, Secret] = {} if gateway is None else gateway
        """Gateway passwords kept for this run only (by `keyring_key`)."""
        self.store: MutableMapping[str, Secret] = {} if store is None else store
        """Team servers' passwords kept for this run only (by `store_keyring_key`)."""

    def gateway_password(self, profile: Profile) -> Secret | None:
        return password_of(profile, self.vault, self.gateway)

    def store_password(self, profile: Profile) -> Secret | None:
        """The team server's password (None: no team server, or libpq's own, a
        `~/.pgpass` or a client certificate)."""
        if profile.store_url is None:
            return None
        return password_of(profile, self.vault, self.store, store=True)
