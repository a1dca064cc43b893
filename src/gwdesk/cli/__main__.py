"""`python -m gwdesk.cli`: the command line, as the `gwdesk` script runs it."""

from gwdesk.cli import main

raise SystemExit(main())
