"""The policy in force: `.ai/repo/policy.yaml`, every key declared once.

Key names, types and defaults come from the proto's `Policy` message, through the generated
allow-list (`schemas/allowlist.v1.json`). A bad key or value costs that key only: its default
stands in, and the policy carries the problem (naming the key, the file and the fix) for the
briefing to mention and `doctor` to block on. A file that cannot be read as YAML (a syntax
error, named by its line) or at all (a pipe, a link, a huge file) leaves every key at its
default, with one problem saying so: a typo never empties the briefing or stops a hook. No
jsonschema here: the session-start hook loads the policy.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from majordomus.base.errors import REFUSED, FatalError
from majordomus.base.lean import TYPE_CHECKING
from majordomus.store import allowlist

if TYPE_CHECKING:
    from typing import Any


def declared() -> dict[str, tuple[str, Any]]:
    """key -> (type, default), from the allow-list generated from the proto's `Policy` message."""

    return {key: (str(spec["type"]), spec["default"]) for key, spec in allowlist.policy_keys().items()}


def __getattr__(name: str) -> Any:
    # `DECLARED` was a hard-coded table; it is now read from the generated allow-list.
    if name == "DECLARED":
        return declared()
    raise AttributeError(name)


class Policy:
    """The effective policy: every declared key's value, the keys the file itself declares, the
    file, and what was wrong with it (a plain class: the hook path builds no dataclass,
    docs/PERFORMANCE.md)."""

    __slots__ = ("values", "declared", "path", "problems")

    def __init__(self, values: dict[str, Any], declared: frozenset[str], path: Path | None = None,
                 problems: tuple[tuple[str, str], ...] = ()) -> None:
        self.values = values
        self.declared = declared  # the keys the file itself declares
        self.path = path
        # (the key at fault, or "" for the whole file; one line: what, and the fix); its default stands in
        self.problems = problems

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def on(self, key: str) -> bool:
        return bool(self.values[key] == "on")

    def declares(self, key: str) -> bool:
        return key in self.declared

    def summary(self, rel: str) -> str | None:
        """One line naming what is wrong with the policy file (`rel`, as the repository names it)
        and that defaults stand in, or None when nothing is."""
        if not self.problems:
            return None
        keys = [key for key, _ in self.problems if key]
        if len(keys) < len(self.problems):
            cause = self.problems[0][1].replace(str(self.path), rel) if self.path else self.problems[0][1]
            cause = cause.split(": fix ", 1)[0].split(": remove it", 1)[0]
            return f"{cause}: every policy key has its default; `majordomus doctor` names the fix"
        return (f"{rel} has {len(keys)} bad key{'s' if len(keys) != 1 else ''} ({', '.join(keys)}): "
                f"{'their defaults stand' if len(keys) != 1 else 'its default stands'} in; "
                "`majordomus doctor` names the fix")


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
        raise FatalError(f"policy unreadable: {path}: {_why(exc)}: {_replace(path)}", 5) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FatalError(f"policy unreadable: {path} is not a regular file: {_replace(path)}", 5)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(POLICY_LIMIT + 1)
    finally:
        os.close(fd)
    if len(data) > POLICY_LIMIT:
        raise FatalError(f"policy unreadable: {path} holds more than {POLICY_LIMIT} bytes: "
                         f"{_replace(path)}", 5)
    try:
        return data.decode("utf-8"), info
    except UnicodeDecodeError:
        raise FatalError(f"policy unreadable: {path} is not UTF-8 text: {_replace(path)}", 5) from None


def _replace(path: Path) -> str:
    # `init` lays only what is missing: the file goes first
    return f"remove it, then `majordomus init` lays the skeleton's ({path.name})"


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link, which is never followed"
    return exc.strerror or str(exc)


def load(path: Path) -> Policy:
    """Read and check the policy file; a missing file means the declared defaults. Never refuses:
    what is wrong is in `Policy.problems`, and each bad key keeps its default."""

    try:
        text, _ = read_policy_text(path)
    except FileNotFoundError:
        return defaults()
    except FatalError as exc:
        return Policy(defaults().values, frozenset(), path, (("", exc.message),))
    return parse(text, path)


def parse(text: str, path: Path) -> Policy:
    """The policy `text` (read from `path`) means: see `load`."""
    # imported only when the policy cache does not hold the file's text (the hooks' usual case)
    from majordomus.base import yamlio

    restore = _restore(path)
    try:
        tree = yamlio.load(text, str(path))
    except yamlio.YamlError as exc:
        return Policy(defaults().values, frozenset(), path, (("", f"{exc} (not valid YAML): fix that line; "
                                                               f"{restore}"),))
    if tree is None:
        tree = {}
    if not isinstance(tree, dict):
        return Policy(defaults().values, frozenset(), path, (("", f"{path}: the policy is not a mapping of "
                                                               f"keys: fix it; {restore}"),))
    flat = flatten(tree)
    values = dict(defaults().values)
    problems: list[tuple[str, str]] = []
    for key, value in flat.items():
        try:
            if key not in values:
                raise unknown_key(key, str(path))
            values[key] = coerce(key, value, str(path))
        except FatalError as exc:  # this key keeps its default; the rest of the file stands
            problems.append((key, exc.message))
    return Policy(values, frozenset(k for k in flat if k in values), path, tuple(problems))


def _restore(path: Path) -> str:
    """How a person sees what changed and gets the committed file back (`init` lays only what is
    missing, so it would not)."""
    rel = f".ai/repo/{path.name}" if path.parent.name == "repo" else str(path)
    return f"`git diff -- {rel}` shows the edit, `git checkout -- {rel}` restores the committed file"
