"""Tens of thousands of qasync callbacks must not abort the process.

PySide6 6.12.0 on Python < 3.12 drops a reference to None in `killTimer`, which
qasync calls for every scheduled callback; the interpreter then dies with
`Fatal Python error: none_dealloc`. pyproject pins PySide6 below 6.12 there; this
test keeps the pin honest by running the real workload in a child process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

WORKLOAD = textwrap.dedent(
    """
    import asyncio, sys
    from PySide6.QtWidgets import QApplication
    import qasync

    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def churn():
        for _ in range(30_000):
            await asyncio.sleep(0)
        for _ in range(3_000):
            loop.call_later(0.0001, lambda: None)
        await asyncio.sleep(0.05)

    with loop:
        loop.run_until_complete(churn())
    print("clean exit", flush=True)
    """
)


def test_qasync_survives_thirty_thousand_callbacks() -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-c", WORKLOAD],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "clean exit" in result.stdout
