"""The desktop entry and AppStream metainfo: valid by the freedesktop tools, and one app id.

The validators come from Debian's desktop-file-utils and appstream packages, which
packaging/dev installs for the test command; without them these tests skip, saying so.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gwdesk.ui.app import APP_ID

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
REPO_FILES = "https://raw.githubusercontent.com/gwdesk/gwdesk/main/"


def metainfo() -> ET.Element:
    return ET.parse(METAINFO).getroot()  # noqa: S314 - the project's own file


def tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(
            f"{name} is not installed (Debian package {package}; packaging/dev test adds it)"
        )
    return found


def validate(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def desktop_entry() -> dict[str, str]:
    lines = DESKTOP.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:] if "=" in line)


def test_desktop_entry_passes_desktop_file_validate() -> None:
    validate(tool("desktop-file-validate", "desktop-file-utils"), str(DESKTOP))


def test_metainfo_passes_appstreamcli_validate() -> None:
    validate(tool("appstreamcli", "appstream"), "validate", "--no-net", str(METAINFO))


def test_files_laid_out_as_the_wheel_installs_them_pass_validate_tree(tmp_path: Path) -> None:
    """The wheel's shared-data mapping gives a tree where metainfo, entry and icon meet."""
    appstreamcli = tool("appstreamcli", "appstream")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    usr = tmp_path / "usr"
    for source, target in mapping.items():
        if (ROOT / source).is_dir():
            shutil.copytree(ROOT / source, usr / target, dirs_exist_ok=True)
        else:
            (usr / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / source, usr / target)
    assert (usr / "share" / "applications" / DESKTOP.name).is_file()
    assert (usr / "share" / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    validate(appstreamcli, "validate-tree", "--no-net", str(tmp_path))


def test_entry_metainfo_and_icon_use_the_app_id_the_console_announces() -> None:
    entry = desktop_entry()
    assert entry["Icon"] == APP_ID
    assert entry["Exec"].split()[0] == "gwdesk"
    component = metainfo()
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    assert (
        ROOT / "packaging" / "icons" / "hicolor" / "256x256" / "apps" / f"{APP_ID}.png"
    ).is_file()


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_metainfo_screenshots_are_committed_images_of_the_stated_size() -> None:
    images = metainfo().findall("screenshots/screenshot/image")
    assert len(images) >= 2
    for image in images:
        url = (image.text or "").strip()
        assert url.startswith(REPO_FILES), url
        path = ROOT / url.removeprefix(REPO_FILES)
        assert path.is_file(), url
        assert png_size(path) == (int(image.get("width", 0)), int(image.get("height", 0)))
