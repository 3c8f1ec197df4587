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
