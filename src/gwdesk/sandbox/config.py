"""Settings of one sandbox gateway instance."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_USERNAME = "demo"
DEFAULT_PASSWORD = "demo"  # noqa: S105 - the sandbox's public demo account, not a secret
DEFAULT_NAMESPACE = "http://sandbox.gwdesk.local/Lodge"
DEFAULT_TIMEZONE = "Australia/Sydney"
DEFAULT_TOKEN_TTL = 3599
LODGE_PATH = "/dotnet/Lodge.asmx"


@dataclass(slots=True)
class SandboxConfig:
    """Everything `gwdesk-sandbox serve` can be told; defaults give a working demo."""

    host: str = "127.0.0.1"
    port: int = 0
    db: str = ":memory:"
    """A SQLite file path, or `:memory:` for a throw-away gateway."""
    username: str = DEFAULT_USERNAME
    password: str = DEFAULT_PASSWORD
    account_type: str | None = None
    """`prepaid` or `postpaid` for the main account; None keeps the stored type (a new
    account is prepaid)."""
    token_ttl: float = DEFAULT_TOKEN_TTL
    namespace: str = DEFAULT_NAMESPACE
    timezone: str = DEFAULT_TIMEZONE
    simulate_delivery: bool = False
    faults: str = ""
    seed: int | None = None
    auto_reply: bool = False
    auto_reply_delay: float = 3.0
    """Seconds after a two-way send before the auto-reply customer answers."""
    batch_step: int = 25
    """Messages a background batch creates per step; a pause follows each step."""
    batch_step_delay: float = 0.02
    delivery_delay: tuple[float, float] = (1.0, 5.0)
    """Seconds after sending before a simulated delivery receipt arrives."""
    delivery_failure_rate: float = 0.05
    webhook_retry_base: float = 1.0
    """First retry interval for reply webhooks; later ones double (contract: 1, 2, 4, 8, 16 s)."""
    webhook_timeout: float = 10.0
    rest_body_limit: int = 1024 * 1024
    lodge_body_limit: int = 48 * 1024 * 1024
    """A 10 MB fax, base64- then form-encoded for the HTTP POST port, can need about 3x."""
    extra_accounts: list[tuple[str, str]] = field(default_factory=list)
    tls_cert: Path | None = None
    """A PEM certificate (chain); with `tls_key` the sandbox serves https instead of http."""
    tls_key: Path | None = None
    """The PEM private key of `tls_cert`, unencrypted."""

    @property
    def db_path(self) -> Path | None:
        return None if self.db == ":memory:" else Path(self.db)
