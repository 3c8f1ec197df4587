"""`git.branch` reads HEAD's file instead of starting git: in every state a checkout can be in, it
answers what git's own `head` answers."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SCALE
from majordomus.base import git


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _agrees(root: Path) -> str | None:
    answer = git.branch(root)
    assert answer == git.head(root).branch
    return answer


def test_the_branch_read_from_head_is_gits_own_answer(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "trunk")
    assert _agrees(root) == "trunk"  # before the first commit
    _git(root, "commit", "-q", "--allow-empty", "-m", "one")
    _git(root, "switch", "-q", "-c", "feature/ünï")
    assert _agrees(root) == "feature/ünï"
    sha = _git(root, "rev-parse", "HEAD").strip()
    _git(root, "switch", "-q", "--detach", sha)
    assert _agrees(root) is None
    _git(root, "switch", "-q", "trunk")
    _git(root, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    assert _agrees(tmp_path / "side") == "side"  # `.git` is a `gitdir:` file there
    assert _agrees(root) == "trunk"


def test_a_head_file_of_another_shape_is_asked_of_git(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "commit", "-q", "--allow-empty", "-m", "one")
    _git(root, "symbolic-ref", "HEAD", "refs/remotes/origin/main")  # not a branch of ours
    assert git.branch(root) == git.head(root).branch


def _refs_agree(root: Path) -> git.Refs:
    """`refs_from_files` answers what `git.refs` (git's for-each-ref) answers, here."""
    found = git.refs_from_files(root)
    asked = git.refs(root)
    assert found is not None
    assert (found.current, found.head.branch, found.head.sha, found.trunks) == \
        (asked.current, asked.head.branch, asked.head.sha, asked.trunks)
    return found


def test_the_refs_read_from_files_are_gits_own_answer(tmp_path: Path) -> None:
    """Unborn, loose, packed, detached, a remote's default branch (loose and packed, and one
    that names nothing), a linked worktree: the files say what git says."""
    upstream, root = tmp_path / "upstream", tmp_path / "repo"
    upstream.mkdir()
    _git(upstream, "init", "-q", "-b", "trunk")
    _git(upstream, "commit", "-q", "--allow-empty", "-m", "one")
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    unborn = _refs_agree(root)
    assert (unborn.current, unborn.head) == (None, git.Head("main", None))
    _git(root, "commit", "-q", "--allow-empty", "-m", "one")
    assert _refs_agree(root).current == "main"  # a loose ref
    _git(root, "pack-refs", "--all")
    assert not (root / ".git/refs/heads/main").exists()
    sha = _git(root, "rev-parse", "HEAD").strip()
    assert _refs_agree(root).head.sha == sha  # from packed-refs
    _git(root, "commit", "-q", "--allow-empty", "-m", "two")  # a loose ref over a packed one
    assert _refs_agree(root).head.sha == _git(root, "rev-parse", "HEAD").strip() != sha
    _git(root, "remote", "add", "origin", str(upstream))
    _git(root, "fetch", "-q", "origin")
    _git(root, "remote", "set-head", "origin", "trunk")
    assert _refs_agree(root).trunks == {"trunk"}
    _git(root, "pack-refs", "--all")  # the remote's branch packed, its HEAD stays a file
    assert _refs_agree(root).trunks == {"trunk"}
    (root / ".git/refs/remotes/origin/HEAD").write_text("ref: refs/remotes/origin/gone\n")
    assert _refs_agree(root).trunks == frozenset()  # a dangling default branch is none
    _git(root, "remote", "set-head", "origin", "trunk")
    _git(root, "switch", "-q", "--detach", sha)
    detached = _refs_agree(root)
    assert (detached.current, detached.head) == (None, git.Head(None, sha))
    _git(root, "switch", "-q", "main")
    _git(root, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    side = _refs_agree(tmp_path / "side")
    assert side.current == "side" and side.trunks == {"trunk"}
    assert _refs_agree(root).current == "main"


def test_refs_of_an_unusual_shape_are_asked_of_git(tmp_path: Path) -> None:
    """A symbolic ref naming a symbolic ref, a HEAD outside refs/heads, a ref file of another
    shape: no answer from the files (git is asked)."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "commit", "-q", "--allow-empty", "-m", "one")
    _git(root, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    _git(root, "symbolic-ref", "HEAD", "refs/heads/alias")
    assert git.refs_from_files(root) is None
    _git(root, "symbolic-ref", "HEAD", "refs/remotes/origin/main")
    assert git.refs_from_files(root) is None
    _git(root, "symbolic-ref", "HEAD", "refs/heads/main")
    (root / ".git/refs/heads/main").write_text("not a sha\n")
    assert git.refs_from_files(root) is None
    assert git.refs_from_files(tmp_path) is None  # no repository at all


def test_the_tracked_names_are_gits_bytes_decoded_name_by_name(tmp_path: Path) -> None:
    """Names that are not UTF-8, and names of several bytes a character, read from one listing
    decoded whole are the names decoded one by one (a byte that is not UTF-8 kept as a surrogate)."""
    root = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    names = [b"plain.md", "caf\u00e9.md".encode(), b"bad-\xff\xfe.md", b"cut-\xe2\x82.md", "\U0001f600.md".encode(),
             b"sub/\xc3.md"]
    for name in names:
        path = bytes(root) + b"/" + name
        subprocess.run(["mkdir", "-p", path.rpartition(b"/")[0]], check=True)
        with open(path, "wb") as handle:
            handle.write(b"x\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True).stdout
    expected = [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
    assert len(expected) == len(names)
    assert git.tracked(root) == expected
    assert git.Listing(root).under("sub") == [n for n in expected if n.startswith("sub/")]


_HEAD_PIECES = ["ref: refs/heads/", "ref: refs/heads", "main", "feature/ünï", "\n", " ", "\t", "\r", "\x0b",
                "\x1c", "\x85", "\xa0", "\u2028", "\u3000", ".invalid", "ref: ", "a"]


@settings(max_examples=300 * SCALE)
@given(parts=st.lists(st.one_of(st.sampled_from(_HEAD_PIECES), st.text(max_size=3)), max_size=5))
def test_the_branch_is_read_from_heads_text_as_the_pattern_reads_it(parts: list[str]) -> None:
    """`git._branch_ref` answers what `ref: refs/heads/([^\\s]+)\\n?` matched whole answers, for any
    text (Unicode whitespace included), without compiling it."""
    for text in ("".join(parts), "ref: refs/heads/" + "".join(parts)):
        whole = re.fullmatch(r"ref: refs/heads/([^\s]+)\n?", text)
        assert git._branch_ref(text) == (whole.group(1) if whole else None), repr(text)
