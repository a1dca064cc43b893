"""What every handler of one sandbox instance shares, reachable as `app[STATE]`."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web

from gwdesk.sandbox.auth import Authenticator
from gwdesk.sandbox.config import SandboxConfig
from gwdesk.sandbox.engine import Engine


@dataclass
class SandboxState:
    config: SandboxConfig
    conn: sqlite3.Connection
    zone: ZoneInfo
    rng: random.Random
    engine: Engine
    auth: Authenticator
    batch_wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    rest_url: str = ""
    lodge_url: str = ""

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Run a background coroutine that is cancelled when the sandbox stops."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task


STATE: web.AppKey[SandboxState] = web.AppKey("gwdesk_sandbox_state", SandboxState)
