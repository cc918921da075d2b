from __future__ import annotations

import sys

from corral.cli import main

sys.exit(main())
