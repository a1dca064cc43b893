"""gwdesk: a desktop operator console for the messaging gateway."""

# A literal (tests check it is pyproject's version and the installed one), since
# asking importlib.metadata costs ~30 ms of the console's start before its first paint.
__version__ = "0.1.0"

__all__ = ["__version__"]
