"""Where the console keeps its files; environment overrides make tests hermetic.

Imported before the console's first paint, so it stays free of the settings and
gateway stack (keyring, pydantic).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from platformdirs import user_config_dir, user_data_dir

CONFIG_ENV: Final = "GWDESK_CONFIG_DIR"
DATA_ENV: Final = "GWDESK_DATA_DIR"


def config_dir() -> Path:
    override = os.environ.get(CONFIG_ENV)
    return Path(override) if override else Path(user_config_dir("gwdesk", appauthor=False))


@dataclass(frozen=True, slots=True)
class AppPaths:
    config: Path
    data: Path

    @classmethod
    def default(cls) -> AppPaths:
        override = os.environ.get(DATA_ENV)
        data = Path(override) if override else Path(user_data_dir("gwdesk", appauthor=False))
        return cls(config=config_dir(), data=data)

    def profile_db(self, slug: str) -> Path:
        return self.data / "profiles" / f"{slug}.sqlite3"

    @property
    def sandbox_db(self) -> Path:
        return self.data / "sandbox" / "sandbox.sqlite3"

    @property
    def log_file(self) -> Path:
        return self.data / "gwdesk.log"
