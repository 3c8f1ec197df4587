"""The vendored standard package: `.ai/repo/rules/vendor/`, a copy of the rules shipped in the
wheel. `majordomus init` lays it, `majordomus rules vendor update` refreshes it, and nobody edits
it by hand (its README says so); `doctor` notes a copy that differs from the installed package.
"""
from __future__ import annotations

from pathlib import Path

from majordomus.base.fsio import read_bytes, remove, write_if_changed
from majordomus.base.resources import data_dir
from majordomus.rules.ruleset import vendor_dir
from majordomus.store.workspace import Workspace


def _held(path: Path) -> bytes | None:
    """A vendored file's bytes, None when it is not a regular file of ours (a link, a pipe)."""
    try:
        return read_bytes(path)
    except OSError:
        return None


def shipped() -> dict[str, bytes]:
    """The standard package as installed: file name -> bytes (README.md and the rule files)."""
    folder = data_dir("rules")
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.is_file() and (p.suffix == ".yaml" or p.name == "README.md")}


def _vendored(ws: Workspace) -> dict[str, Path]:
    folder = vendor_dir(ws)
    if not folder.is_dir():
        return {}
    return {p.name: p for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.startswith(".tmp.")}


class Refreshed:
    """What `update` wrote, left and removed (a plain class: no `dataclasses` import for doctor)."""

    __slots__ = ("written", "unchanged", "removed")

    def __init__(self) -> None:
        self.written: list[str] = []
        self.unchanged: list[str] = []
        self.removed: list[str] = []


def update(ws: Workspace) -> Refreshed:
    """Make the vendored copy equal the installed package: write what differs, remove what the
    package no longer ships. Atomic per file."""

    done = Refreshed()
    package = shipped()
    folder = vendor_dir(ws)
    for name, data in package.items():
        target = folder / name
        (done.written if write_if_changed(target, data, root=ws.root) else done.unchanged).append(ws.rel(target))
    for name, path in _vendored(ws).items():
        if name not in package:
            remove(path, root=ws.root, missing_ok=False)
            done.removed.append(ws.rel(path))
    return done


def drift(ws: Workspace) -> list[str]:
    """How the vendored copy differs from the installed package, one phrase a file."""
    package = shipped()
    present = _vendored(ws)
    out = []
    for name, data in package.items():
        if name not in present:
            out.append(f"{name} missing")
        elif _held(present[name]) != data:
            out.append(f"{name} differs")
    out += [f"{name} not shipped" for name in present if name not in package]
    return out
