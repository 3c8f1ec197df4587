from __future__ import annotations

import sys

from pipeline.main import main

sys.exit(main())
