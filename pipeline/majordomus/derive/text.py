"""What a derived record's text may carry: repository-relative paths only, and one line of title.

The ledger is local, and what a person typed there may name paths of their machine (the repository
root, their home, a scratch folder); a record is tracked and pushed. So before a text reaches a
record's title or body, the repository root becomes a relative path and any other absolute path
becomes `<outside>` (`scrub`). The digest that names a record is still over the text as written
(seed 001), so scrubbing never changes an id.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from majordomus.base.lean import pattern

OUTSIDE = "<outside>"
# an absolute path of two folders or more (`/home/me/x`), or `~/…`, that starts a token: not inside a
# word, a URL or a relative path, and not one segment (`</script>`, `and /or`, `/tmp`)
_STOP = r"[^\s`'\"()\[\]{}<>,;|/]"
_ABSOLUTE = pattern(rf"(?<![\w/.:~<-])(?:~/{_STOP}*|/{_STOP}+/{_STOP}+)(?:/{_STOP}*)*")  # (a text with no `/` compiles none)
_KEPT = ("/dev/null",)  # no one's machine: a shell idiom


def roots(root: Path) -> tuple[str, ...]:
    """The spellings of the repository root a text may carry (as opened, and resolved)."""
    found = {os.fspath(root), os.path.realpath(root)}
    return tuple(sorted((r.rstrip("/") for r in found if r and r != "/"), key=len, reverse=True))


def scrub(text: str, root: Path | tuple[str, ...]) -> str:
    """`text` with the repository root made relative and every other absolute path `<outside>`."""
    if not text or ("/" not in text and "~" not in text):
        return text
    spellings = roots(root) if isinstance(root, Path) else root
    for spelling in spellings:
        text = re.sub(re.escape(spelling) + r"(?:/|(?=[\s`'\"),;:]|\.(?:\s|$)|$))",
                      lambda m: "" if m.group(0).endswith("/") else ".", text)

    def outside(match: re.Match[str]) -> str:
        return match.group(0) if match.group(0) in _KEPT else OUTSIDE

    return _ABSOLUTE().sub(outside, text)


def relative_path(path: str, root: Path | tuple[str, ...]) -> str | None:
    """`path` (a task's scope) as a repository-relative path, or None when it is outside the
    repository, empty or not a plain path."""
    path = (path or "").strip()
    if not path or "\n" in path:
        return None
    spellings = roots(root) if isinstance(root, Path) else root
    if path.startswith(("/", "~")):
        for spelling in spellings:
            if path == spelling:
                return "."
            if path.startswith(spelling + "/"):
                path = path[len(spelling) + 1:]
                break
        else:
            return None
    path = os.path.normpath(path).replace(os.sep, "/")
    if path.startswith("../") or path == ".." or path.startswith("/"):
        return None
    return path


def norm(text: str) -> str:
    """A text compared for sameness: case folded, every run of non-word characters one space."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def same_finding(a: str, b: str) -> bool:
    """Two one-line statements that say the same thing: equal once normalised, or one the start of
    the other (a lesson's reason that repeats the decision and adds a clause)."""
    x, y = norm(a), norm(b)
    if not x or not y:
        return False
    short, long = sorted((x, y), key=len)
    return short == long or (len(short) >= 16 and long.startswith(short))
