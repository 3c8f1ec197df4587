"""`Workspace.rel` cuts a path under the root as text: the same answer as `relative_to` for every
path, the root's own, a sibling whose name the root's prefixes, a path outside (ValueError), and
a root of `/`."""
from __future__ import annotations

from pathlib import Path

import pytest

from majordomus.store.workspace import Workspace


@pytest.mark.parametrize("root", ["/work/repo", "/", "/work/re po", "relative/repo", "/w/r\u00e9po"])
def test_rel_is_what_relative_to_answers(root: str) -> None:
    ws = Workspace(Path(root))
    for path in (ws.root, ws.root / "a", ws.root / ".ai/repo/knowledge/candidates/x.md", ws.root / "a/b/",
                 Path(str(ws.root) + "x"), Path(str(ws.root) + "x/y"), ws.root.parent, Path("/elsewhere/a"),
                 Path("other/a"), ws.root / "a" / ".." / "b", Path(str(ws.root) + "//a")):
        try:
            expected: object = path.relative_to(ws.root).as_posix()
        except ValueError:
            expected = ValueError
        try:
            got: object = ws.rel(path)
        except ValueError:
            got = ValueError
        assert got == expected, (root, path)
