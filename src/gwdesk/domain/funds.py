"""What the account has to send with, and which of the gateway's resources said so.

Two resources describe the account, differently: the spec's balance endpoint
(`POST /v2/account/balance`: money, perhaps credits) and the real service's
`GET /v2/Account/Info` (an account type, with message credits for prepaid accounts
only). `Funds` holds either answer so the console and `gwdesk balance` say the same
words, always naming the source: a figure means money from one and credits from the
other. Text from the gateway is shown cleaned (hidden characters made visible,
shortened), never as it came.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from gwdesk.domain.hidden_chars import visible
from gwdesk.domain.models.wire import AccountInfo, Balance

ACCOUNT_INFO: Final = "account_info"
BALANCE: Final = "balance"
PREPAID: Final = "prepaid"
POSTPAID: Final = "postpaid"
#: Gateway text (account type, name, currency) is shown at most this long.
MAX_SHOWN: Final = 40


def shown(text: str | None) -> str:
    """Gateway text fit for a label: one line, hidden characters visible, bounded."""
    if text is None:
        return ""
    flat = visible(" ".join(text.split()))
    return flat if len(flat) <= MAX_SHOWN else flat[: MAX_SHOWN - 1] + "…"


def _listed(parts: list[str]) -> str:
    return ", ".join(part for part in parts if part)


@dataclass(frozen=True, slots=True)
class Funds:
    answer: AccountInfo | Balance
    """The gateway's answer as read, unknown fields included."""
    note: str = ""
    """Why this resource was asked when it was not the first choice."""

    @property
    def source(self) -> str:
        """`account_info` or `balance`."""
        return ACCOUNT_INFO if isinstance(self.answer, AccountInfo) else BALANCE

    @property
    def credits(self) -> int | None:
        return self.answer.message_credits

    @property
    def kind(self) -> str:
        """`prepaid`, `postpaid`, the gateway's own word for another type, or ""."""
        if not isinstance(self.answer, AccountInfo):
            return ""
        word = "".join(c for c in self.answer.account_type.lower() if c not in " -_")
        if word in (PREPAID, POSTPAID):
            return word
        return shown(self.answer.account_type) or "no account type"

    def summary(self) -> str:
        """One line: `Credits 1,234 (Account/Info, prepaid)`, `Balance 12.34 AUD (account
        balance)`, `Postpaid: no credits to show (Account/Info)`."""
        answer = self.answer
        if isinstance(answer, Balance):
            credits = f", {answer.message_credits:,} credits" if self.credits is not None else ""
            return f"Balance {self._money(answer)}{credits} (account balance)"
        if self.credits is not None:
            return f"Credits {self.credits:,} (Account/Info, {self.kind})"
        if self.kind == POSTPAID:
            return "Postpaid: no credits to show (Account/Info)"
        return f"No credits to show (Account/Info, {self.kind})"

    def details(self) -> str:
        """A sentence or two for a tooltip: where the figure comes from and what it means."""
        answer = self.answer
        credits = f"{self.credits:,} message credits" if self.credits is not None else ""
        if isinstance(answer, Balance):
            parts = [self._money(answer), credits]
            text = f"From the balance endpoint (POST /v2/account/balance): {_listed(parts)}."
        else:
            parts = [
                f"account {shown(answer.account_name) or '(no name)'}",
                f"status {shown(answer.account_status) or '(not given)'}",
                f"type {shown(answer.account_type) or '(not given)'}",
                credits or "no message credits (the gateway gives them for prepaid accounts only)",
            ]
            text = f"From the account resource (GET /v2/Account/Info): {_listed(parts)}."
        return f"{text} {self.note}" if self.note else text

    def to_json(self) -> dict[str, Any]:
        """`source`, `summary`, then the answer's own fields under the gateway's names."""
        fields = self.answer.model_dump(mode="json", by_alias=True)
        note = {"note": self.note} if self.note else {}
        return {"source": self.source, "summary": self.summary(), **note, **fields}

    @staticmethod
    def _money(balance: Balance) -> str:
        return f"{balance.balance:,.2f} {shown(balance.currency)}".rstrip()
