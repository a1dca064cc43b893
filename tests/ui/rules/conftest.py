"""The keyword rules window's tests: a real profile file and the test's keyring.

A profile's store is opened on a file of the test's own (as the console opens it), its
`RulesFlow` made as `ui.rules.opener` makes it, over the in-memory keyring every test
gets (`tests/keyrings.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gwdesk.app.rule_editing import RulesFlow, rule_secrets
from gwdesk.profiles import PasswordVault
from gwdesk.store.local import LocalStore, open_local
from tests.ui.rules.support import PROFILE


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[LocalStore]:
    """A profile's file of this test's own, opened as the console opens it."""
    opened = await asyncio.to_thread(open_local, tmp_path / "profile.db", "demo")
    yield opened
    await asyncio.to_thread(opened.close)


@pytest.fixture
def vault() -> PasswordVault:
    return PasswordVault()  # the in-memory keyring the test installed


@pytest.fixture
def flow(store: LocalStore, vault: PasswordVault) -> RulesFlow:
    return RulesFlow(store.settings, rule_secrets(vault, PROFILE), store.rule_runs)
