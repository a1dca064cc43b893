"""The reply listener's package loads its modules when their names are asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys

import gwdesk.replies


def test_the_reply_template_loads_without_the_listeners_web_server() -> None:
    probe = "import sys, gwdesk.replies.template; print('aiohttp' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"


def test_every_name_the_package_offers_is_there() -> None:
    for name in gwdesk.replies.__all__:
        assert getattr(gwdesk.replies, name) is not None


def test_a_name_the_package_does_not_offer_is_an_attribute_error() -> None:
    assert not hasattr(gwdesk.replies, "NoSuchThing")


def test_the_listeners_names_are_the_listeners_once_loaded() -> None:
    importlib.import_module(
        "gwdesk.replies.backfill"
    )  # the package's `backfill` stays the function
    from gwdesk.replies import ReplyListener, backfill
    from gwdesk.replies.listener import ReplyListener as FromModule

    assert ReplyListener is FromModule
    assert callable(backfill)  # the function, not the module of the same name
