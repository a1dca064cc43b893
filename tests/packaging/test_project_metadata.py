"""What the project says about itself agrees everywhere: releases, links, licence."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

from gwdesk import __version__
from gwdesk.ui.dialogs.about import LICENCE, PROJECT_LINKS

ROOT = Path(__file__).resolve().parents[2]
METAINFO = ROOT / "packaging" / "linux" / "io.github.gwdesk.Gwdesk.metainfo.xml"


def metainfo() -> ET.Element:
    return ET.parse(METAINFO).getroot()  # noqa: S314 - the project's own file


def project() -> dict[str, object]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    table: dict[str, object] = data["project"]
    return table


def changelog_releases() -> list[tuple[str, str]]:
    """(version, date) of each dated `## [x.y.z] - YYYY-MM-DD` heading, newest first."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## \[(\d+\.\d+\.\d+[^\]]*)\] - (\d{4}-\d{2}-\d{2})$", text, re.MULTILINE)


def test_metainfo_releases_are_the_changelog_releases() -> None:
    releases = metainfo().findall("releases/release")
    listed = [(r.get("version"), r.get("date")) for r in releases]
    assert listed == changelog_releases()
    assert listed, "the changelog has no dated release"


def test_package_version_is_the_newest_changelog_release() -> None:
    assert project()["version"] == changelog_releases()[0][0]


def test_the_code_says_the_version_pyproject_and_the_installed_metadata_say() -> None:
    assert __version__ == project()["version"] == importlib.metadata.version("gwdesk")


def test_about_dialog_fallback_links_are_the_project_urls() -> None:
    urls = project()["urls"]
    assert isinstance(urls, dict)
    assert list(PROJECT_LINKS) == list(urls.items())


def test_licence_file_about_dialog_and_metadata_name_the_same_licence() -> None:
    assert project()["license"] == LICENCE == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    assert metainfo().findtext("project_license") == LICENCE


def test_the_script_and_the_frozen_app_start_at_the_one_launcher() -> None:
    scripts = project()["scripts"]
    assert isinstance(scripts, dict)
    assert scripts["gwdesk"] == "gwdesk.launcher:main"
    spec = (ROOT / "packaging" / "gwdesk.spec").read_text(encoding="utf-8")
    assert '[str(ROOT / "src" / "gwdesk" / "launcher.py")]' in spec
