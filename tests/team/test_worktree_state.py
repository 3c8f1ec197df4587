"""What `git worktree add` shares between worktrees and what each keeps: the index, HEAD and
`.ai/local/` are each worktree's own; the refs, the configuration and `info/exclude` are the main
repository's, in its git folder. What the readers keep of git's state in a linked worktree must be
stamped where git reads it: each reader prints what it prints once `.ai/local/state/` is deleted."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

from conftest import Repo, make_repo
from kbstore import RECORD, build

KB = ".ai/repo/knowledge"
READERS = (("knowledge", "candidates"), ("knowledge", "status"), ("knowledge", "search", "scratch"),
           ("knowledge", "candidates", "--json"))


def said(repo: Repo) -> list[tuple[int, str, str]]:
    return [(p.returncode, p.stdout, p.stderr) for p in (repo.mj(*argv) for argv in READERS)]


def test_an_exclude_of_the_main_repository_is_seen_in_a_linked_worktree(tmp_path: Path) -> None:
    """git reads `info/exclude` from the common git folder, not the worktree's own
    (`.git/worktrees/<name>/`): an untracked candidate excluded there leaves git's listing, and
    the listing the index kept must leave with it."""
    main = make_repo(tmp_path / "main")
    build(main)
    main.git("add", "-A")
    main.commit("the store")
    main.git("worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature")
    feature = Repo(tmp_path / "feature")
    (feature.root / KB / "candidates/x-1.md").write_text(RECORD.format(rid="x-1", title="A scratch candidate"),
                                                         encoding="utf-8")
    said(feature)
    time.sleep(0.1)  # past one tick of the file system's clock: the listing is kept
    before = said(feature)
    assert "x-1" in before[0][1] and "A scratch candidate" in before[2][1]
    exclude = Path(feature.git("rev-parse", "--path-format=absolute", "--git-path", "info/exclude").strip())
    assert exclude.parent.parent == main.root / ".git"  # the main repository's, shared
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as handle:
        handle.write(f"{KB}/candidates/x-1.md\n")
    through = said(feature)
    shutil.rmtree(feature.root / ".ai/local/state")
    fresh = said(feature)
    assert through == fresh
    assert "x-1" not in fresh[0][1] and "A scratch candidate" not in fresh[2][1]
