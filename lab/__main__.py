"""`python -m lab <command> ...`: the course's lab guide in executable form."""

import sys

from lab.cli import main

sys.exit(main())
