"""What changed an anchored path since a base commit: the walk behind `knowledge/currency.py`.

One `git.history` (every commit HEAD has and the oldest base has not, parents first) is read
once; each commit that touches a path of interest gets one bit. A commit's ancestry is the union
of its parents' (a single-parent commit that touches nothing shares its parent's, so a long
history of unrelated commits costs one reference each), and a path's touches are one integer of
bits; what changed a path since base B is then `touches & ~ancestry(B)`, a few integer
operations per record whatever the length of the history. Renames are followed: once `a` is
renamed to `b`, a later change to `b` is a change to what was anchored as `a`.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from majordomus.base.git import Logged

_WORDS = {"M": "modified", "A": "added", "D": "deleted", "T": "modified"}


def then(before: str | None, after: str) -> str:
    """What happened to a path, `before` and then `after`, said so that a rename is never lost:
    `renamed to b.py, then modified`."""
    if not before or after.startswith("renamed to ") or "renamed to " not in before:
        return after
    return f"{before.split(', then ')[0]}, then {after.split(', then ')[-1]}"


class Since(NamedTuple):
    """What changed a record's anchors after its base: the anchored paths changed (each with what
    happened to it last, e.g. `renamed to src/b.py`), how many commits, and the newest of them."""

    how: dict[str, str]
    commits: int
    newest: Logged | None


class Walk:
    """The commits of one `git.history` since `base`, read for the anchored `paths`."""

    def __init__(self, base: str, commits: list[Logged], paths: Iterable[str]) -> None:
        self.base = base
        self.commits = commits
        self.position = {c.sha: i for i, c in enumerate(commits)}
        names: dict[str, set[str]] = {p: {p} for p in paths}  # a name now -> the anchors it stands for
        self.touches: dict[str, int] = {}  # anchor -> bit i set when commit i changed it
        self.what: dict[tuple[str, int], str] = {}  # (anchor, i) -> what commit i did to it
        self.renames: dict[str, int] = {}  # anchor -> bits of the commits that renamed it
        self.ancestry: dict[str, int] = {}  # sha -> bits of the touching commits it contains
        for i, commit in enumerate(commits):
            touched = False
            for status, path, new in commit.changes:
                if status == "C":  # a copy leaves its source as it was
                    touched |= self._touch(names.get(new or ""), i, "replaced by a copy of " + path)
                    continue
                word = f"renamed to {new}" if status == "R" else _WORDS.get(status, "changed")
                touched |= self._touch(names.get(path), i, word)
                if status == "R":
                    for anchor in names.get(path, ()):
                        self.renames[anchor] = self.renames.get(anchor, 0) | (1 << i)
                if status == "R" and new is not None:
                    touched |= self._touch(names.get(new), i, f"replaced by {path}, renamed")
                    if path in names:
                        names.setdefault(new, set()).update(names[path])
            mask = 0
            for parent in commit.parents:
                mask |= self.ancestry.get(parent, 0)
            self.ancestry[commit.sha] = mask | (1 << i) if touched else mask

    def _touch(self, anchors: set[str] | None, i: int, word: str) -> bool:
        if not anchors:
            return False
        for anchor in anchors:
            self.touches[anchor] = self.touches.get(anchor, 0) | (1 << i)
            self.what[(anchor, i)] = word
        return True

    def holds(self, base: str) -> bool:
        """Whether changes since `base` can be read from this walk: the walk's own base, or a commit
        it listed (any other commit is outside HEAD's history since the walk's base)."""
        return base == self.base or base in self.position

    def since(self, base: str, anchors: Iterable[str]) -> Since:
        """What changed `anchors` in the commits after `base` (which `holds`) up to the walk's end."""
        seen = self.ancestry.get(base, 0)
        how: dict[str, str] = {}
        union = 0
        for anchor in anchors:
            mask = self.touches.get(anchor, 0) & ~seen
            if mask:
                renamed = self.renames.get(anchor, 0) & mask
                last = self.what[(anchor, mask.bit_length() - 1)]
                how[anchor] = then(self.what[(anchor, renamed.bit_length() - 1)], last) if renamed else last
                union |= mask
        newest = self.commits[union.bit_length() - 1] if union else None
        return Since(dict(sorted(how.items())), union.bit_count(), newest)
