"""Majordomus: a repository-local continuity layer for coding agents, built on doit."""
from __future__ import annotations

__version__ = "0.1.0"

from majordomus.base.lean import pathlib_alone

pathlib_alone()  # before any module of ours imports pathlib
