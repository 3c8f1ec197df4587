"""The policy in force: `.ai/repo/policy.yaml`, every key declared once.

Key names, types and defaults come from the policy declaration; an unknown or mistyped key is an
error naming the key, the file and the fix.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import FatalError

# key -> (type, default). "switch" is on|off (YAML 1.1 also reads a bare on/off as a boolean).
DECLARED: dict[str, tuple[str, Any]] = {
    "session.knowledge_on_end": ("switch", "on"),
    "session.knowledge_on_compact": ("switch", "on"),
    "session.checkpoint_on_compact": ("switch", "on"),
    "session.briefing_budget_lines": ("integer", 40),
    "session.freshness.stale_minutes": ("integer", 30),
    "knowledge.candidates_max_files": ("integer", 25),
    "knowledge.candidate_max_age_minutes": ("integer", 10080),
    "ledger.retention_lines": ("integer", 50000),
}


@dataclass(frozen=True)
class Policy:
    values: dict[str, Any]
    declared: frozenset[str]  # the keys the file itself declares
    path: Path | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def on(self, key: str) -> bool:
        return bool(self.values[key] == "on")

    def declares(self, key: str) -> bool:
        return key in self.declared


def defaults() -> Policy:
    return Policy({key: default for key, (_, default) in DECLARED.items()}, frozenset())


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    if isinstance(tree, dict):
        for key, value in tree.items():
            name = f"{prefix}{key}"
            if isinstance(value, dict):
                flat.update(flatten(value, name + "."))
            else:
                flat[name] = value
    return flat


def coerce(key: str, value: Any, where: str) -> Any:
    kind = DECLARED[key][0]
    if kind == "switch":
        if value is True or value == "on":
            return "on"
        if value is False or value == "off":
            return "off"
        raise FatalError(f"{where}: {key} is {value!r}, not on|off: set it to on or off", 5)
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise FatalError(f"{where}: {key} is {value!r}, not a whole number >= 0: set a number", 5)
        return value
    return value


def load(path: Path) -> Policy:
    """Read and check the policy file; a missing file means the declared defaults."""
    from pipeline import yamlio

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return defaults()
    try:
        tree = yamlio.load(text, str(path)) or {}
    except yamlio.YamlError as exc:
        raise FatalError(f"policy unreadable: {exc}: fix the YAML or run `majordomus init` to restore it", 5) from None
    if not isinstance(tree, dict):
        raise FatalError(f"{path}: the policy is not a mapping of keys: restore it with `majordomus init`", 5)
    flat = flatten(tree)
    values = dict(defaults().values)
    for key, value in flat.items():
        if key not in DECLARED:
            known = ", ".join(sorted(DECLARED))
            raise FatalError(f"{path}: unknown policy key {key!r}: remove it (known keys: {known})", 5)
        values[key] = coerce(key, value, str(path))
    return Policy(values, frozenset(flat), path)
