"""Where a profile's data lives, and the services that work on it: decided here only.

A profile's store is one file under the data folder, named after the profile (the
embedded sandbox has one of its own, whatever port it got; an inline gateway of the
command line has "command line"'s). Its outbox belongs to one gateway account: only
that account resumes what it recorded. The console's `Session` and every command of
the command line open a profile's data through `open_profile`, so the two always
meet in the same file and the same outbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gwdesk.app.optouts import OptOutGuard
from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Compliance
from gwdesk.domain.profile import Profile
from gwdesk.domain.settings import MARKETING_DEFAULT, OPT_OUT_INSTRUCTION
from gwdesk.gateway.service import GatewayService
from gwdesk.paths import AppPaths
from gwdesk.store.database import slug
from gwdesk.store.local import LocalStore, open_local

SANDBOX_STORE: Final = "__sandbox__"
INLINE_NAME: Final = "command line"
"""The profile name of a gateway given by options on the command line."""


@dataclass(frozen=True, slots=True)
class ProfileData:
    """Where one profile's data is, and which gateway account its outbox serves."""

    path: Path
    account: str
    region: str


def locate(
    profile: Profile, *, sandbox: bool = False, paths: AppPaths | None = None
) -> ProfileData:
    """The store file and outbox account of `profile` (`sandbox`: the embedded gateway)."""
    paths = paths or AppPaths.default()
    path = paths.profile_db(SANDBOX_STORE) if sandbox else store_path(profile.name, paths)
    return ProfileData(path, account_key(profile, sandbox=sandbox), profile.region)


def store_path(name: str, paths: AppPaths | None = None) -> Path:
    """The store file of the profile called `name` (`gwdesk listen` without a gateway
    names `INLINE_NAME`'s)."""
    return (paths or AppPaths.default()).profile_db(slug(name))


def account_key(profile: Profile, *, sandbox: bool = False) -> str:
    """Which gateway account a batch was recorded for: only that one resumes it.

    A profile's URL and user name name its account; the embedded sandbox keeps its
    account across runs but changes port, so it is named by its user alone.
    """
    if sandbox:
        return f"sandbox:{profile.username}"
    return f"{profile.username}@{profile.rest_url.rstrip('/').lower()}"


def open_profile(data: ProfileData) -> LocalStore:
    """Open (and upgrade) the store; `StoreError` when the file cannot be used. Blocking:
    it may wait out another process's write lock, so the console calls it on a worker
    thread. Keyword replies it stores change this account's opt-out list."""
    return open_local(data.path, data.account, data.region)


def compliance_of(store: LocalStore) -> Compliance:
    """The profile's marketing rules as its store keeps them (read again after the operator
    changes them). Blocking: a read of the file."""
    return Compliance(
        marketing_default=store.settings.get(MARKETING_DEFAULT),
        instruction=store.settings.get(OPT_OUT_INSTRUCTION),
    )


def sending_for(gateway: GatewayService, store: LocalStore, data: ProfileData) -> Sending:
    """Every send of this profile: through its outbox, into its history."""
    guard = OptOutGuard(store.optouts)
    runner = OutboxRunner(gateway, store.outbox, data.account, guard=guard)
    return Sending(runner, store.history, gateway.profile.region, compliance=compliance_of(store))
