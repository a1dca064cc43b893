"""`python -m gwdesk.cli COMMAND`: the commands alone (no console)."""

import sys

from gwdesk.cli import main

sys.exit(main())
