"""The console's test scaffolding (tests/ui/conftest.py), for resilience tests on real widgets.

pytest applies a conftest's hooks only to the tests below it, and refuses
`pytest_plugins` in a conftest that is not at the root, so the tests/ui hooks are
re-exported here instead. Only tests that use the `ui` bundle are affected: they
run on the qasync loop (Qt events and asyncio tasks both progress, as in the
console); every other test here keeps a plain asyncio loop. (The collector is kept
on the main thread for every test, by tests/conftest.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from tests.ui import conftest as ui_conftest
from tests.ui.conftest import (  # noqa: F401 - re-exported: the fixture and the hook wrapper
    pytest_runtest_call,
    ui,
)


def pytest_asyncio_loop_factories(config: Any, item: Any) -> Mapping[str, Callable[[], Any]]:
    if "ui" in getattr(item, "fixturenames", ()):
        return ui_conftest.pytest_asyncio_loop_factories(config, item)
    return {"asyncio": asyncio.new_event_loop}
