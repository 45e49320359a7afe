"""``python -m sapwood.cli``: the same as the ``sapwood`` command."""

import sys

from . import main

sys.exit(main())
