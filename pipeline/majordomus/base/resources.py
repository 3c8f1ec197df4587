"""Where the shipped data lives: inside the wheel, or beside the package in a source checkout."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # the majordomus package
_NAMES = {"templates": "templates", "schemas": "schemas", "skeleton": ".ai-skeleton", "rules": "rules"}
_WHEEL = {"templates": "templates", "schemas": "schemas", "skeleton": "ai-skeleton", "rules": "rules"}


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """The folder of shipped data `name` (templates, schemas, skeleton, rules)."""
    installed = _PACKAGE / "_data" / _WHEEL[name]
    if installed.is_dir():
        return installed
    source = _PACKAGE.parent.parent / _NAMES[name]  # pipeline/majordomus/ in a checkout
    if source.is_dir():
        return source
    raise FileNotFoundError(f"majordomus is installed without its {name} data: reinstall it")


_FILES = {"mcp-tools": ("docs/mcp-tools.json", "mcp-tools.json")}  # name -> (in a checkout, in the wheel)


def data_file(name: str) -> Path:
    """The shipped file `name` (mcp-tools: the MCP tool list `majordomus mcp` answers with); in a
    checkout, the committed copy (`docs/`), in the wheel its copy under `_data/`."""
    source, wheel = _FILES[name]
    installed = _PACKAGE / "_data" / wheel
    return installed if installed.is_file() else _PACKAGE.parent.parent / source
