from __future__ import annotations

import sys

from majordomus.cli.main import main

sys.exit(main())
