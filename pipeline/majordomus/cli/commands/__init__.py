"""One module per top-level command: `add_parsers(subparsers)` and the implementations."""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import argparse

# What each command module's `add_parsers` is given: the top-level subparsers of `majordomus`.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
