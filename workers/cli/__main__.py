"""`python -m workers.cli`: the `iui` command."""

import sys

from .main import main

sys.exit(main())
