"""Heavy libraries load when they are first needed, not when gwdesk is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest


def imported_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` a fresh interpreter holds after running `statement`."""
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.split()


@pytest.mark.parametrize(
    "statement",
    [
        "import gwdesk.gateway.service",
        "import gwdesk.cli",
        "import gwdesk.ui.console",
    ],
)
def test_zeep_is_not_imported_until_a_soap_port_is_used(statement: str) -> None:
    assert imported_after(statement, ("zeep", "requests", "gwdesk.gateway.lodge.zeep_client")) == []


def test_loading_a_wsdl_brings_zeep_in() -> None:
    statement = (
        "import httpx\n"
        "from gwdesk.gateway.lodge.soap import SoapPorts\n"
        "from gwdesk.gateway.retry import Retrier\n"
        "SoapPorts(httpx.AsyncClient(), 'http://127.0.0.1/', 'urn:x', Retrier()).transport"
    )
    assert imported_after(statement, ("zeep",)) == ["zeep"]
