"""Start-up and shutdown of the console: which gateway to connect, and the embedded sandbox."""

from __future__ import annotations

import asyncio
import logging

from gwdesk.app.profile_data import GatewayService
from gwdesk.domain.errors import StoreError
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.paths import AppPaths
from gwdesk.profiles import (
    KeyringUnavailable,
    PasswordVault,
    ProfileStore,
    SettingsError,
)
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.log_sync import session_sync
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.passwords import SessionPasswords
from gwdesk.ui.sandbox_process import (
    SANDBOX_ACCOUNT,
    RestartBudget,
    SandboxAddresses,
    SandboxProcess,
    SandboxStartError,
    describe_exit,
)
from gwdesk.ui.session import Session
from gwdesk.ui.tab_slots import LazyTab, TabFactory
from gwdesk.ui.tasks import TaskRunner, off_thread, on_own_thread

log = logging.getLogger("gwdesk.ui")
SANDBOX_PROFILE_NAME = "Sandbox"
SANDBOX_WATCH = "sandbox-watch"
RESTART_SAID_MS = 60_000


def default_service_factory(profile: Profile, password: Secret) -> GatewayService:
    return GatewayService(profile, password)


def default_tabs() -> list[TabFactory]:
    """The console's tabs in the tab bar's order; `rank` is each one's turn to be built
    in the idle time after start: what an operator reaches for first (a send, the replies
    it brings) before what is looked at now and then."""
    return [
        LazyTab("gwdesk.ui.send.tab", "SendTab", "Send", "send", rank=0),
        LazyTab("gwdesk.ui.batch.tab", "BatchTab", "Batch", "batch", rank=2),
        LazyTab("gwdesk.ui.scheduled.tab", "ScheduledTab", "Scheduled", "scheduled", rank=5),
        LazyTab("gwdesk.ui.status.tab", "StatusTab", "Status", "status", rank=3),
        LazyTab("gwdesk.ui.replies.tab", "RepliesTab", "Replies", "replies", rank=1),
        LazyTab("gwdesk.ui.contacts.tab", "ContactsTab", "Contacts", "contacts", rank=6),
        LazyTab("gwdesk.ui.optouts.tab", "OptOutsTab", "Opt-outs", "optout", rank=7),
        LazyTab("gwdesk.ui.logs.tab", "LogsTab", "Logs", "logs", rank=4),
        LazyTab("gwdesk.ui.fax_mms.tab", "FaxMmsTab", "Fax / MMS", "mms", rank=8),
    ]


def sandbox_profile(addresses: SandboxAddresses) -> Profile:
    return Profile(
        name=SANDBOX_PROFILE_NAME,
        rest_url=addresses.rest_url,
        lodge_url=addresses.lodge_url,
        soap_namespace=SANDBOX_ACCOUNT.namespace,
        username=SANDBOX_ACCOUNT.username,
        auth="oauth",
        timezone=SANDBOX_ACCOUNT.timezone,
        region="AU",
        lodge_port="soap12",
    )


class AppController:
    """Connects the session to a gateway at start, on request, and tears down at exit."""

    def __init__(
        self,
        window: MainWindow,
        session: Session,
        tasks: TaskRunner,
        profiles: ProfileStore,
        vault: PasswordVault,
        paths: AppPaths,
        reporter: ErrorReporter,
    ) -> None:
        self.window = window
        self.session = session
        self.tasks = tasks
        self.profiles = profiles
        self.vault = vault
        self.paths = paths
        self.reporter = reporter
        self.sandbox: SandboxProcess | None = None
        self.restarts = RestartBudget()
        """Restarts of a sandbox child that died: a few a minute, then given up."""
        self.passwords = SessionPasswords(vault)
        """Passwords kept for this session only, where no keyring could store them."""
        self._closed = asyncio.Event()
        window.closing.connect(self._closed.set)
        if window.closed:  # closed while the console was still starting
            self._closed.set()
        window.profiles_requested.connect(self.open_profiles)
        session.changed.connect(self.start_replies)
        session.changed.connect(self.start_log_sync)

    async def run(
        self, *, profile: str | None = None, sandbox: bool = False, quit_after: float | None = None
    ) -> int:
        if not self._closed.is_set():
            await self.connect_initial(profile, sandbox)
        if quit_after is not None:
            asyncio.get_running_loop().call_later(quit_after, self.window.close)
        await self._closed.wait()
        await self.shutdown()
        return 0

    async def connect_initial(self, name: str | None, sandbox: bool) -> None:
        try:
            saved = self.profiles.profiles()
            chosen = name or self.profiles.default_name
        except SettingsError as exc:
            self.window.status.showMessage(f"Profiles could not be read: {exc}", 15000)
            saved, chosen = [], None
        if sandbox or not saved:
            await self.use_sandbox()
            return
        profile = next((p for p in saved if p.name == chosen), saved[0])
        password = self.password_for(profile)
        if password is None:
            self.window.status.showMessage(
                f"Enter the password of profile {profile.name!r} to connect.", 15000
            )
            self.open_profiles()
            return
        if await self.activate(profile, password):
            log.info("connected profile %r at %s", profile.name, profile.rest_url)

    async def activate(
        self, profile: Profile, password: Secret, store_password: Secret | None = None
    ) -> bool:
        """Open `profile`; a store (file or team server) that cannot be opened is said in
        the status bar, naming it, and nothing of the profile stays open."""
        if store_password is None and profile.store_url is not None:
            store_password = self.password_for(profile, team_server=True)
        try:
            await self.session.activate(profile, password, store_password=store_password)
        except StoreError as exc:
            log.warning("profile %r not opened: %s", profile.name, exc)
            self.window.status.showMessage(f"The profile {profile.name!r} is not open: {exc}")
            return False
        return True

    def start_replies(self) -> None:
        """A profile was connected: its reply listener starts and fetches what it missed."""
        if self.session.active:
            self.tasks.run(
                self.session.replies.autostart(),
                key="reply-listener-start",
                context="starting the reply listener",
            )

    def start_log_sync(self) -> None:
        """A profile was connected: the log cache syncs in the background, whatever tab is
        open, so the statuses every view shows follow the gateway's."""
        if self.session.active:
            session_sync(self.session, self.tasks).start()

    def password_for(self, profile: Profile, *, team_server: bool = False) -> Secret | None:
        """The gateway's (or the team server's) password: kept for this session, else the
        keyring's (None: none, or no keyring to ask)."""
        passwords = self.passwords
        try:
            if team_server:
                return passwords.store_password(profile)
            return passwords.gateway_password(profile)
        except KeyringUnavailable:
            return None

    async def use_sandbox(self) -> None:
        """Start (once) the embedded sandbox and connect to its demo account."""
        self.window.status.showMessage("Starting the sandbox gateway…")
        if self.sandbox is None or not self.sandbox.running:
            self.sandbox = SandboxProcess(
                self.paths.sandbox_db, "--simulate-delivery", "--auto-reply"
            )
            try:
                await self.sandbox.start()
            except SandboxStartError as exc:
                self.sandbox = None
                self.window.status.showMessage(f"The sandbox gateway did not start: {exc}")
                log.error("sandbox start failed: %s", exc)
                return
            self.tasks.run(
                self._keep_sandbox(self.sandbox),
                key=SANDBOX_WATCH,
                context="watching the sandbox gateway",
            )
        await self._connect_sandbox(self.sandbox)
        self.window.status.showMessage("Connected to the sandbox gateway.", 5000)

    async def _connect_sandbox(self, sandbox: SandboxProcess) -> None:
        assert sandbox.addresses is not None
        await self.session.activate(
            sandbox_profile(sandbox.addresses), Secret(SANDBOX_ACCOUNT.password), sandbox=True
        )
        log.info("connected to the sandbox gateway at %s", sandbox.addresses.rest_url)

    async def _keep_sandbox(self, sandbox: SandboxProcess) -> None:
        """Wait (on a thread of its own) for the child to exit; one that died while the
        console runs is restarted, within the budget, and the status bar says so."""
        while True:
            code = await on_own_thread(sandbox.wait, name="sandbox-watch")
            if sandbox.stopped or self.sandbox is not sandbox or self._closed.is_set():
                return
            what = describe_exit(code)
            log.warning("the sandbox gateway stopped (%s)", what)
            budget = self.restarts
            if not budget.allow():
                self.sandbox = None
                times = f"{budget.limit} restart{'' if budget.limit == 1 else 's'}"
                self.window.status.showMessage(
                    f"The sandbox gateway stopped ({what}) again; after {times} within "
                    f"{budget.window:.0f} s it is not restarted. Choose the sandbox under "
                    "File ▸ Profiles to start it again."
                )
                return
            try:
                moved = await sandbox.restart()
            except SandboxStartError as exc:
                self.sandbox = None
                log.error("sandbox restart failed: %s", exc)
                self.window.status.showMessage(
                    f"The sandbox gateway stopped ({what}) and could not be restarted: {exc}"
                )
                return
            if self._closed.is_set():
                return  # the console closed meanwhile: its shutdown stops the new child
            if moved and self.session.is_sandbox:
                await self._connect_sandbox(sandbox)  # another port: the session follows
            self.window.status.showMessage(
                f"The sandbox gateway stopped ({what}) and was restarted.", RESTART_SAID_MS
            )
            shown = sandbox.addresses.rest_url if sandbox.addresses else "?"
            log.info("the sandbox gateway was restarted at %s", shown)

    def open_profiles(self) -> None:
        from gwdesk.ui.dialogs.profiles import ProfilesDialog

        current = (
            None
            if self.session.is_sandbox or self.session.profile is None
            else (self.session.profile.name)
        )
        dialog = ProfilesDialog(
            self.profiles,
            self.vault,
            current,
            self.window,
            tasks=self.tasks,
            session_passwords=self.passwords.gateway,
            session_store_passwords=self.passwords.store,
        )
        dialog.finished.connect(lambda _code: self._profiles_closed(dialog))
        dialog.open()

    def _profiles_closed(self, dialog: object) -> None:
        from gwdesk.ui.dialogs.profiles import ProfilesDialog

        assert isinstance(dialog, ProfilesDialog)
        if dialog.use_sandbox:
            self.tasks.run(self.use_sandbox(), key="connect", context="connecting to the sandbox")
            return
        if dialog.chosen is None or dialog.password is None:
            return
        kept = []
        if dialog.kept_for_session:
            self.passwords.gateway[dialog.chosen.keyring_key] = dialog.password
            kept.append("password")
        if dialog.store_kept_for_session:
            kept.append("team store's password")
        if kept:
            self.window.status.showMessage(
                f"No system keyring: the {' and the '.join(kept)} of {dialog.chosen.name!r} "
                f"{'are' if len(kept) > 1 else 'is'} kept for this session only.",
                15000,
            )
        self.session.password_kept_for_session = dialog.kept_for_session
        self.tasks.run(
            self.activate(dialog.chosen, dialog.password, dialog.store_password),
            key="connect",
            context=f"connecting profile {dialog.chosen.name}",
        )

    async def shutdown(self) -> None:
        await self.tasks.drain()
        await self.session.close()
        if self.sandbox is not None:
            sandbox, self.sandbox = self.sandbox, None
            await off_thread(sandbox.stop)
