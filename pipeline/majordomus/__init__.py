"""Majordomus: a repository-local continuity layer for coding agents, built on doit."""
from __future__ import annotations

__version__ = "0.1.0"

import gc
import sys

from majordomus.base.lean import pathlib_alone

if sys.argv[1:3] == ["hook", "session-start"]:
    # The start hook's usual run (imports, then a prebuilt briefing checked and printed) makes
    # little garbage the cycle collector could free, yet its passes over every module's objects
    # were a tenth of the run's instructions: off until the start does more (`session/start.py`
    # turns it on before it closes an orphan, drains or composes).
    gc.disable()
pathlib_alone()  # before any module of ours imports pathlib
