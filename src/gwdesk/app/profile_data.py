"""Where a profile's data lives, and the services that work on it: decided here only.

A profile's store is one file under the data folder, named after the profile (the
embedded sandbox has one of its own, whatever port it got; an inline gateway of the
command line has "command line"'s). Its outbox belongs to one gateway account: only
that account resumes what it recorded. The console's `Session` and every command of
the command line open a profile's data through `open_profile`, so the two always
meet in the same file and the same outbox. The console holds what it opens by the names
this module gives them (`GatewayService`, `LocalStore`, `SharedData`, and the service's
watch on whether the gateway answers: `GatewayHealth`, `Answering`), never the
gateway's or the store's.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gwdesk.app.optouts import OptOutGuard
from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.sending import Sending
from gwdesk.app.sending_hours import sending_hours
from gwdesk.app.sms import Compliance
from gwdesk.domain.profile import Profile
from gwdesk.domain.settings import MARKETING_DEFAULT, OPT_OUT_INSTRUCTION
from gwdesk.gateway.service import Answering as Answering
from gwdesk.gateway.service import GatewayHealth as GatewayHealth
from gwdesk.gateway.service import GatewayService as GatewayService
from gwdesk.paths import AppPaths
from gwdesk.store.database import slug
from gwdesk.store.local import LocalStore as LocalStore
from gwdesk.store.local import open_local
from gwdesk.store.shared import SharedData as SharedData

SANDBOX_STORE: Final = "__sandbox__"
INLINE_NAME: Final = "command line"
"""The profile name of a gateway given by options on the command line."""


@dataclass(frozen=True, slots=True)
class ProfileData:
    """Where one profile's data is, and which gateway account its outbox serves."""

    path: Path
    """The profile's own file: drafts, the log cache, this desk's settings (and, without
    a server, everything)."""
    account: str
    region: str
    store_url: str | None = None
    """The team's server holding the shared data (replies, history, outbox, opt-outs,
    templates, contacts), or None: the profile's own file holds it."""
    operator: str = ""
    """Who works at this desk, as history, audit and opt-out changes name them."""


def locate(
    profile: Profile, *, sandbox: bool = False, paths: AppPaths | None = None
) -> ProfileData:
    """The store file and outbox account of `profile` (`sandbox`: the embedded gateway)."""
    paths = paths or AppPaths.default()
    path = paths.profile_db(SANDBOX_STORE) if sandbox else store_path(profile.name, paths)
    return ProfileData(
        path,
        account_key(profile, sandbox=sandbox),
        profile.region,
        profile.store_url,
        profile.operator_display,
    )


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


def open_profile(data: ProfileData, store_password: str | None = None) -> LocalStore:
    """Open (and upgrade) the profile's file and, for a team profile, connect to (and
    upgrade) its server; `StoreError` when either cannot be used. Blocking: it may wait
    out another process's write lock or a slow server, so the console calls it on a
    worker thread. Keyword replies it stores change this account's opt-out list.

    `store_password`: the server's (None: libpq's own `PGPASSWORD` or `~/.pgpass`, or
    a client certificate named in the address)."""
    if data.store_url is None:
        return open_local(data.path, data.account, data.region, operator=data.operator)
    from gwdesk.store.postgres import PostgresDatabase
    from gwdesk.store.shared import ServerData

    console = uuid.uuid4().hex
    database = PostgresDatabase(
        data.store_url, store_password, operator=data.operator, console=console
    )
    server = ServerData(database)
    try:
        # The server names its operators by their own logins: that name is this desk's.
        operator = database.whoami().name
        return open_local(
            data.path, data.account, data.region, shared=server, operator=operator, console=console
        )
    except BaseException:
        server.close()
        raise


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
    sending = Sending(
        runner, store.history, gateway.profile.region, compliance=compliance_of(store)
    )
    sending.hours_source = functools.partial(
        sending_hours, store.settings, store.contacts, gateway.profile.zone
    )
    return sending
