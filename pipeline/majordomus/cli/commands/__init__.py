"""One module per top-level command: `add_parsers(subparsers)` and the implementations."""
from __future__ import annotations

from majordomus.base.lean import TYPE_CHECKING

# What each command module's `add_parsers` is given: the top-level subparsers of `majordomus`.
if TYPE_CHECKING:
    import argparse
    from typing import TypeAlias

    Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
else:  # a name the command modules import for their annotations, never evaluated: `typing` not imported
    Subparsers = "argparse._SubParsersAction[argparse.ArgumentParser]"
