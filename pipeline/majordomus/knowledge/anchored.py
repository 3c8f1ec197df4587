"""What changed an anchored path since a base commit: the walk behind `knowledge/currency.py`,
and its compact form, which the currency cache keeps.

One `git.history` (every commit HEAD has and the walk's base has not, parents first) is read once;
each commit that touches an anchored path gets one bit (the others get none). A commit's ancestry
is the union of its parents' bits (a commit that touches nothing shares its parent's), and a path's
touches are one integer of bits; what changed a path since commit C is then `touches &
~ancestry(C)`, a few integer operations per record whatever the length of the history. Renames
are followed: once `a` is renamed to `b`, a later change to `b` is a change to what was anchored
as `a`.

The compact form (`kept`) holds the touching commits, each anchored path's changes, the names an
anchored path now goes by, and the ancestry of the commits records were verified at and of HEAD:
a few hundred kilobytes at 20,000 records and 10,000 commits, whatever the number of records that
may be stale. When HEAD moves forward, `extend` adds the new commits alone (`git log old..new`).
"""
from __future__ import annotations

from collections.abc import Iterable

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.git import Logged
from majordomus.base.lean import pattern

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

_WORDS = {"M": "modified", "A": "added", "D": "deleted", "T": "modified"}
_SHA = pattern(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_HEX = pattern(r"[0-9a-f]{1,100000}")


def then(before: str | None, after: str) -> str:
    """What happened to a path, `before` and then `after`, said so that a rename is never lost:
    `renamed to b.py, then modified`."""
    if not before or after.startswith("renamed to ") or "renamed to " not in before:
        return after
    return f"{before.split(', then ')[0]}, then {after.split(', then ')[-1]}"


class Since(NamedTuple):
    """What changed a record's anchors after its base: the anchored paths changed (each with what
    happened to it last, e.g. `renamed to src/b.py`), how many commits, and the newest of them
    (sha, subject)."""

    how: dict[str, str]
    commits: int
    newest: tuple[str, str] | None


def _mask(value: int) -> int | str:
    """A mask as the cache writes it: k for the first k bits (a straight history's ancestry), else hex."""
    return value.bit_length() if value & (value + 1) == 0 else format(value, "x")


def _unmask(value: Any) -> int:
    if type(value) is int and 0 <= value <= 1 << 24:
        return (1 << value) - 1
    if isinstance(value, str) and _HEX().fullmatch(value):
        return int(value, 16)
    raise ValueError("not a mask")


class Walk:
    """The commits after `base` up to `head`, read for the anchored `paths`."""

    __slots__ = ("base", "head", "log", "names", "touches", "renames", "what", "ancestry")

    def __init__(self, base: str, paths: Iterable[str]) -> None:
        self.base = self.head = base
        self.log: list[tuple[str, str]] = []  # bit j -> (sha, subject) of the j-th touching commit
        self.names: dict[str, set[str]] = {p: {p} for p in paths}  # a name now -> the anchors it stands for
        self.touches: dict[str, int] = {}  # anchor -> bit j set when touching commit j changed it
        self.renames: dict[str, int] = {}  # anchor -> bits of the commits that renamed it
        self.what: dict[tuple[str, int], str] = {}  # (anchor, j) -> what commit j did to it
        self.ancestry: dict[str, int] = {base: 0}  # sha -> bits of the touching commits it contains

    def extend(self, commits: list[Logged], outside: bool = True) -> bool:
        """Add `commits` (parents first, none of them in the walk yet). A parent the walk does not
        hold is outside it (an ancestor of the base) when `outside`; else it cannot be placed and
        False is returned (the walk is then unusable)."""
        names = self.names
        for commit in commits:
            j = len(self.log)
            touched = False
            for status, path, new in commit.changes:
                if status == "C":  # a copy leaves its source as it was
                    touched |= self._touch(names.get(new or ""), j, "replaced by a copy of " + path)
                    continue
                word = f"renamed to {new}" if status == "R" else _WORDS.get(status, "changed")
                touched |= self._touch(names.get(path), j, word)
                if status == "R":
                    for anchor in names.get(path, ()):
                        self.renames[anchor] = self.renames.get(anchor, 0) | (1 << j)
                if status == "R" and new is not None:
                    touched |= self._touch(names.get(new), j, f"replaced by {path}, renamed")
                    if path in names:
                        names.setdefault(new, set()).update(names[path])
            mask = 0
            for parent in commit.parents:
                known = self.ancestry.get(parent)
                if known is None and not outside:
                    return False
                mask |= known or 0
            if touched:
                self.log.append((commit.sha, commit.subject))
                mask |= 1 << j
            self.ancestry[commit.sha] = mask
        return True

    def _touch(self, anchors: set[str] | None, j: int, word: str) -> bool:
        if not anchors:
            return False
        for anchor in anchors:
            self.touches[anchor] = self.touches.get(anchor, 0) | (1 << j)
            self.what[(anchor, j)] = word
        return True

    def holds(self, commit: str) -> bool:
        """Whether changes since `commit` can be read from this walk: its base, or a commit it
        listed and kept (any other commit is outside HEAD's history since the base)."""
        return commit in self.ancestry

    def since(self, base: str, anchors: Iterable[str]) -> Since:
        """What changed `anchors` in the commits after `base` (which `holds`) up to the walk's head."""
        seen = self.ancestry[base]
        how: dict[str, str] = {}
        union = 0
        for anchor in anchors:
            mask = self.touches.get(anchor, 0) & ~seen
            if mask:
                renamed = self.renames.get(anchor, 0) & mask
                last = self.what[(anchor, mask.bit_length() - 1)]
                how[anchor] = then(self.what[(anchor, renamed.bit_length() - 1)], last) if renamed else last
                union |= mask
        newest = self.log[union.bit_length() - 1] if union else None
        return Since(dict(sorted(how.items())) if len(how) > 1 else how, union.bit_count(), newest)

    def kept(self, keep: set[str]) -> dict[str, Any]:
        """The compact form: the ancestry of `keep` (the commits records are verified at) and of the
        base and head only."""
        what: dict[str, list[list[Any]]] = {}
        for (anchor, j), word in sorted(self.what.items()):
            what.setdefault(anchor, []).append([j, word, 1 if self.renames.get(anchor, 0) >> j & 1 else 0])
        return {"base": self.base, "head": self.head, "log": [list(c) for c in self.log],
                "names": {name: sorted(anchors) for name, anchors in sorted(self.names.items())},
                "what": what,
                "at": {sha: _mask(mask) for sha, mask in sorted(self.ancestry.items())
                       if sha in keep or sha == self.base or sha == self.head}}

    @classmethod
    def from_kept(cls, data: Any) -> Walk:
        """The walk of a `kept` form; ValueError (or a KeyError, TypeError) when it is not one."""
        walk = cls(str(data["base"]), ())
        walk.head = str(data["head"])
        if not (_SHA().fullmatch(walk.base) and _SHA().fullmatch(walk.head)):
            raise ValueError("not a commit")
        walk.log = [(str(sha), str(subject)) for sha, subject in data["log"]]
        walk.names = {str(name): {str(a) for a in anchors} for name, anchors in data["names"].items()}
        for anchor, changes in data["what"].items():
            for j, word, renamed in changes:
                if type(j) is not int or not 0 <= j < len(walk.log):
                    raise ValueError("not a commit of the walk")
                walk.what[(anchor, j)] = str(word)
                walk.touches[anchor] = walk.touches.get(anchor, 0) | (1 << j)
                if renamed:
                    walk.renames[anchor] = walk.renames.get(anchor, 0) | (1 << j)
        walk.ancestry = {str(sha): _unmask(mask) for sha, mask in data["at"].items()}
        if walk.head not in walk.ancestry or walk.base not in walk.ancestry:
            raise ValueError("no ancestry of its head")
        return walk
