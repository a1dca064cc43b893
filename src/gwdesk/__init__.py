"""gwdesk: a desktop operator console for the messaging gateway."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gwdesk")
except PackageNotFoundError:  # running from a checkout without installing
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
