"""The sdist and wheel as `python -m build` makes them, the wheel installed in a fresh venv.

The wheel is built from the sdist (build's default), so a file missing from the
sdist shows up as one missing from the wheel too. The fresh venv gets the wheel
with `--no-deps`; its dependencies come from this test environment through a
plain path line in a .pth file, which adds that site-packages directory without
processing its .pth files, so the editable gwdesk there stays invisible.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "io.github.gwdesk.Gwdesk"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Dists:
    wheel: Path
    sdist: Path

    @property
    def version(self) -> str:
        return self.wheel.name.split("-")[1]


@dataclass(frozen=True)
class Installed:
    venv: Path
    home: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self) -> dict[str, str]:
        """The environment of an operator's shell: nothing pointing back at the checkout."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GWDESK_", "PYTHON", "VIRTUAL_ENV"))
        }
        return {
            **env,
            "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            "QT_QPA_PLATFORM": "offscreen",
            "GWDESK_CONFIG_DIR": str(self.home / "config"),
            "GWDESK_DATA_DIR": str(self.home / "data"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }

    def run(self, program: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / program), *args],
            capture_output=True,
            text=True,
            env={**self.env(), **env},
            cwd=self.home,
            timeout=60,
        )


def one(paths: Iterator[Path]) -> Path:
    [path] = list(paths)
    return path


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return Dists(one(out.glob("*.whl")), one(out.glob("*.tar.gz")))


@pytest.fixture(scope="session")
def installed(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dependencies = sysconfig.get_path("purelib")
    Path(purelib, "zz_gwdesk_test_dependencies.pth").write_text(dependencies + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--disable-pip-version-check", "--quiet", str(dists.wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    home = base / "home"
    home.mkdir()
    return Installed(venv, home)


def wheel_names(dists: Dists) -> set[str]:
    with zipfile.ZipFile(dists.wheel) as archive:
        return set(archive.namelist())


def resource_files() -> list[str]:
    base = ROOT / "resources"
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file())


def test_wheel_carries_every_resource_file(dists: Dists) -> None:
    names = wheel_names(dists)
    wanted = resource_files()
    assert {
        "icons/gwdesk.svg",
        "style/gwdesk.qss",
        "style/indicators.qss",
        "wsdl/lodge.wsdl.tmpl",
    } <= set(wanted)
    missing = [f for f in wanted if f"gwdesk/resources/{f}" not in names]
    assert missing == []


def test_wheel_carries_the_desktop_metadata_icons_and_licence(dists: Dists) -> None:
    names = wheel_names(dists)
    data = f"gwdesk-{dists.version}.data/data/share"
    wanted = [
        f"{data}/applications/{APP_ID}.desktop",
        f"{data}/metainfo/{APP_ID}.metainfo.xml",
        f"{data}/icons/hicolor/scalable/apps/{APP_ID}.svg",
        *(f"{data}/icons/hicolor/{s}x{s}/apps/{APP_ID}.png" for s in ICON_SIZES),
        f"gwdesk-{dists.version}.dist-info/licenses/LICENSE",
    ]
    assert [name for name in wanted if name not in names] == []


def test_sdist_carries_sources_tests_docs_and_packaging(dists: Dists) -> None:
    with tarfile.open(dists.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    wanted = [
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "src/gwdesk/__init__.py",
        "src/gwdesk/launcher.py",
        "tests/conftest.py",
        "tests/packaging/test_wheel.py",
        "docs/architecture.md",
        "packaging/gwdesk.spec",
        "packaging/build-linux",
        "packaging/render-icons",
        f"packaging/linux/{APP_ID}.desktop",
        f"packaging/linux/{APP_ID}.metainfo.xml",
        "packaging/icons/gwdesk.ico",
        "packaging/icons/gwdesk.icns",
        *(f"resources/{f}" for f in resource_files()),
    ]
    assert [name for name in wanted if name not in names] == []


def test_installed_gwdesk_is_the_wheel_and_names_its_version(
    dists: Dists, installed: Installed
) -> None:
    done = installed.run("gwdesk", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"gwdesk {dists.version}"
    where = installed.run(
        "python",
        "-c",
        "import gwdesk, gwdesk.resources as r; "
        "print(gwdesk.__file__); print(r.resource_path('style', 'gwdesk.qss'))",
    )
    assert where.returncode == 0, where.stderr
    module, stylesheet = (Path(line) for line in where.stdout.split())
    assert module.is_relative_to(installed.venv)
    assert stylesheet.is_relative_to(installed.venv)
    assert stylesheet.read_bytes() == (ROOT / "resources" / "style" / "gwdesk.qss").read_bytes()


def test_installed_wheel_puts_desktop_files_under_share(installed: Installed) -> None:
    share = installed.venv / "share"
    assert (share / "applications" / f"{APP_ID}.desktop").is_file()
    assert (share / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    assert (share / "icons" / "hicolor" / "256x256" / "apps" / f"{APP_ID}.png").is_file()


def test_installed_desktop_metadata_passes_appstream_validate_tree(
    installed: Installed, tmp_path: Path
) -> None:
    appstreamcli = shutil.which("appstreamcli")
    if appstreamcli is None:
        pytest.skip("appstreamcli is not installed (Debian package appstream)")
    (tmp_path / "usr").symlink_to(installed.venv)  # the venv as a /usr: share/ is where it looks
    done = subprocess.run(
        [appstreamcli, "validate-tree", "--no-net", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{APP_ID}.metainfo.xml" in done.stdout


@pytest.fixture
def installed_sandbox(installed: Installed, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The installed `gwdesk-sandbox serve`, as a child that dies with its stdin."""
    process = subprocess.Popen(
        [str(installed.bin / "gwdesk-sandbox"), "serve", "--port", "0",
         "--db", str(tmp_path / "sandbox.sqlite3"), "--exit-with-parent"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=installed.env(),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        fields = dict(part.split("=", 1) for part in banner.split() if "=" in part)
        assert {"rest", "lodge"} <= fields.keys(), banner
        yield fields
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_installed_commands_send_and_read_status_through_the_installed_sandbox(
    installed: Installed, installed_sandbox: dict[str, str]
) -> None:
    where = ["--base-url", installed_sandbox["rest"], "--username", "demo", "--json"]
    sent = installed.run(
        "gwdesk", "send", *where, "--to", "0412 345 678", "--external-id", "PKG-1",
        "Hello from the wheel", GWDESK_PASSWORD="demo",
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    assert json.loads(sent.stdout)["lodged"] == 1
    status = installed.run(
        "gwdesk", "status", *where, "--external-id", "PKG-1", GWDESK_PASSWORD="demo"
    )
    assert status.returncode == 0, status.stderr
    [message] = json.loads(status.stdout)["messages"]
    assert message["PhoneNumber"] == "61412345678"


def test_installed_sandbox_serves_the_wsdl_from_the_wheel(
    installed_sandbox: dict[str, str],
) -> None:
    with urllib.request.urlopen(installed_sandbox["lodge"] + "?WSDL", timeout=10) as answer:  # noqa: S310 - loopback
        wsdl = answer.read().decode("utf-8")
    assert "<wsdl:definitions" in wsdl or "<definitions" in wsdl
    assert installed_sandbox["lodge"] in wsdl


def test_installed_console_opens_on_its_sandbox_and_quits(installed: Installed) -> None:
    done = installed.run("gwdesk", "--sandbox", "--quit-after", "0.5")
    log = installed.home / "data" / "gwdesk.log"
    assert done.returncode == 0, log.read_text() if log.exists() else done.stderr
    assert (installed.home / "data" / "sandbox" / "sandbox.sqlite3").is_file()
    assert " ERROR " not in log.read_text()
