"""The policy in force: `.ai/repo/policy.yaml`, every key declared once.

Key names, types and defaults come from the proto's `Policy` message, through the generated
allow-list (`schemas/allowlist.v1.json`); an unknown or mistyped key is an error naming the key,
the file and the fix. No jsonschema here: the session-start hook loads the policy.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from majordomus.base import yamlio
from majordomus.base.errors import REFUSED, FatalError
from majordomus.store import allowlist


def declared() -> dict[str, tuple[str, Any]]:
    """key -> (type, default), from the allow-list generated from the proto's `Policy` message."""

    return {key: (str(spec["type"]), spec["default"]) for key, spec in allowlist.policy_keys().items()}


def __getattr__(name: str) -> Any:
    # `DECLARED` was a hard-coded table; it is now read from the generated allow-list.
    if name == "DECLARED":
        return declared()
    raise AttributeError(name)


class Policy:
    """The effective policy: every declared key's value, the keys the file itself declares, and
    the file (a plain class: the hook path builds no dataclass, docs/PERFORMANCE.md)."""

    __slots__ = ("values", "declared", "path")

    def __init__(self, values: dict[str, Any], declared: frozenset[str], path: Path | None = None) -> None:
        self.values = values
        self.declared = declared  # the keys the file itself declares
        self.path = path

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def on(self, key: str) -> bool:
        return bool(self.values[key] == "on")

    def declares(self, key: str) -> bool:
        return key in self.declared


def defaults() -> Policy:
    return Policy({key: default for key, (_, default) in declared().items()}, frozenset())


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
    """`value` as the type the proto declares for `key`; a mistyped value names key, file and fix."""

    spec = allowlist.policy_keys()[key]
    kind, default = spec["type"], spec["default"]
    fix = f"set it to {_yaml(default)} (the default) or remove the line"
    if kind == "switch":
        if value is True or value == "on":
            return "on"
        if value is False or value == "off":
            return "off"
        raise FatalError(f"{where}: {key} is {value!r}, not on|off: {fix}", REFUSED)
    if kind == "integer":
        low = spec.get("minimum")
        if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
            bound = f" >= {low}" if low is not None else ""
            raise FatalError(f"{where}: {key} is {value!r}, not a whole number{bound}: {fix}", REFUSED)
        return value
    if kind == "enum":
        if value not in spec.get("values", ()):
            raise FatalError(f"{where}: {key} is {value!r}, not one of {'|'.join(spec['values'])}: {fix}", REFUSED)
        return value
    if kind == "boolean" and not isinstance(value, bool):
        raise FatalError(f"{where}: {key} is {value!r}, not true|false: {fix}", REFUSED)
    if kind == "string" and not isinstance(value, str):
        raise FatalError(f"{where}: {key} is {value!r}, not a string: {fix}", REFUSED)
    return value


def _yaml(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def unknown_key(key: str, where: str) -> FatalError:
    """An unknown key, named, with the nearest declared one when it looks like a slip."""

    known = sorted(declared())
    import difflib  # only for a key that is not one: every command reads the policy

    near = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {near[0]}? rename or remove it" if near else "remove it"
    return FatalError(f"{where}: unknown policy key {key!r}: {hint} (the keys are declared in "
                      f"schemas/knowledge.v1.proto, message Policy: {', '.join(known)})", REFUSED)


POLICY_LIMIT = 1 << 20  # a policy is a page of keys; a megabyte is not one


def read_policy_text(path: Path) -> tuple[str, os.stat_result]:
    """The policy file's text and the identity of the file it was read from. Only a regular file
    of at most `POLICY_LIMIT` bytes is read: a symbolic link (to `/dev/zero`, say), a pipe or a
    huge file is refused (exit 5) rather than read forever. FileNotFoundError when missing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FatalError(f"policy unreadable: {path}: {_why(exc)}: restore it with `majordomus init`", 5) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FatalError(f"policy unreadable: {path} is not a regular file: restore it with "
                             "`majordomus init`", 5)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(POLICY_LIMIT + 1)
    finally:
        os.close(fd)
    if len(data) > POLICY_LIMIT:
        raise FatalError(f"policy unreadable: {path} holds more than {POLICY_LIMIT} bytes: restore it "
                         "with `majordomus init`", 5)
    try:
        return data.decode("utf-8"), info
    except UnicodeDecodeError:
        raise FatalError(f"policy unreadable: {path} is not UTF-8 text: restore it with "
                         "`majordomus init`", 5) from None


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link, which is never followed"
    return exc.strerror or str(exc)


def load(path: Path) -> Policy:
    """Read and check the policy file; a missing file means the declared defaults."""

    try:
        text, _ = read_policy_text(path)
    except FileNotFoundError:
        return defaults()
    try:
        tree = yamlio.load(text, str(path)) or {}
    except yamlio.YamlError as exc:
        raise FatalError(f"policy unreadable: {exc}: fix the YAML or run `majordomus init` to restore it", REFUSED) from None
    if not isinstance(tree, dict):
        raise FatalError(f"{path}: the policy is not a mapping of keys: restore it with `majordomus init`", REFUSED)
    flat = flatten(tree)
    values = dict(defaults().values)
    for key, value in flat.items():
        if key not in values:
            raise unknown_key(key, str(path))
        values[key] = coerce(key, value, str(path))
    return Policy(values, frozenset(flat), path)
