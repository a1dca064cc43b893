"""The names of the Lodge SOAP bindings (light: no zeep here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

SoapVersion = Literal["soap11", "soap12"]
BINDINGS: Final[Mapping[SoapVersion, str]] = {"soap11": "LodgeSoap", "soap12": "LodgeSoap12"}
