"""A string that must never be printed: passwords and access tokens.

Exceptions, log lines and reprs are read by people and pasted into tickets, so a
secret is only reachable through `reveal()`, which callers use exactly where the
value goes on the wire or into the keyring.
"""

from __future__ import annotations

import hmac
from typing import Any, Final

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

REDACTED: Final = "********"


class Secret:
    """Holds a secret string; `repr`, `str` and serialisation show only asterisks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("a Secret holds a string")
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self) -> Any:
        raise TypeError("a Secret is not pickled: it would leave the process in the clear")

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """Validate from a string; serialise as asterisks, never as the value."""
        return core_schema.no_info_after_validator_function(
            cls._from_wire,
            core_schema.union_schema(
                [core_schema.is_instance_schema(cls), core_schema.str_schema()]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(lambda _value: REDACTED),
        )

    @classmethod
    def _from_wire(cls, value: Secret | str) -> Secret:
        return value if isinstance(value, Secret) else cls(value)
