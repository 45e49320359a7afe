"""``python -m sapwood.cli``: the same as the ``sapwood`` command."""

import sys

from . import command

sys.exit(command())
