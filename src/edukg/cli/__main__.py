"""`python -m edukg.cli`: the same as the `edukg` command."""

import sys

from edukg.cli import main

sys.exit(main())
