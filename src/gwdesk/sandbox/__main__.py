import sys

from gwdesk.sandbox.cli import main

sys.exit(main())
