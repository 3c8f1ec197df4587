"""Currency of verified knowledge on real git histories: a rename, a deletion, an amended anchor
commit, a shallow clone, a dispute, and the cache (docs/CURRENCY.md)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import Repo
from kbstore import anchored

from majordomus.knowledge import currency, known
from majordomus.store.workspace import Workspace


def judge(repo: Repo) -> dict[str, currency.Currency]:
    ws = Workspace(repo.root)
    return currency.of(ws, known.verified(ws.curated, ws))


def base(repo: Repo) -> str:
    return repo.commit("code", {"src/a.py": "a = 1\n", "src/b.py": "b = 1\n", "src/c.py": "c = 1\n"})


def test_modified_path_may_be_stale_and_others_current(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-a", ("src/a.py",), at)
    anchored(repo, "r-b", ("src/b.py",), at)
    anchored(repo, "r-none", (), at)
    repo.commit("touch a once", {"src/a.py": "a = 2\n"})
    repo.commit("unrelated", {"docs.txt": "x\n"})
    newest = repo.commit("touch a twice", {"src/a.py": "a = 3\n"})
    got = judge(repo)
    a = got["r-a"].as_dict()
    assert a["state"] == "may_be_stale"
    assert a["changed"] == ["src/a.py"] and a["commits_since"] == 2
    assert a["newest"] == {"sha": newest, "subject": "touch a twice"}
    assert a["anchor_commit"] == at
    assert a["reason"] == (f'may be stale: src/a.py modified in 2 commits since {at[:7]}, the newest '
                           f'{newest[:7]} "touch a twice"')
    assert got["r-b"].state == "current"
    assert got["r-b"].reason == f"current: none of its 1 anchored file changed since it was verified at {at[:7]}"
    assert got["r-none"].reason == "current (no anchored files)"



def test_rename_is_followed_and_names_the_new_path(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-a", ("src/a.py",), at)
    repo.git("mv", "src/a.py", "src/renamed.py")
    repo.commit("rename a")
    newest = repo.commit("edit the renamed file", {"src/renamed.py": "a = 1\nmore = 2\n"})
    a = judge(repo)["r-a"]
    assert a.stale and a.how == {"src/a.py": "renamed to src/renamed.py, then modified"}
    assert a.commits_since == 2 and a.newest == (newest, "edit the renamed file")


def test_deletion(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-ab", ("src/a.py", "src/b.py"), at)
    repo.git("rm", "-q", "src/b.py")
    sha = repo.commit("drop b")
    d = judge(repo)["r-ab"].as_dict()
    assert d["state"] == "may_be_stale" and d["changed"] == ["src/b.py"] and d["how"] == {"src/b.py": "deleted"}
    assert d["newest"] == {"sha": sha, "subject": "drop b"}


def test_amended_anchor_commit_is_unknown_in_words(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-a", ("src/a.py",), at)
    repo.git("commit", "-q", "--amend", "-m", "code, amended")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    a = judge(repo)["r-a"]
    assert a.state == "unknown"
    assert a.reason == (f"unknown: verified at {at[:7]}, which this clone does not have "
                        "(rebased away or a shallow clone)")


def test_older_verification_still_here_anchors_the_record(repo: Repo) -> None:
    first = base(repo)
    anchored(repo, "r-a", ("src/a.py",), first, more=({"act": "reverified", "at": "2026-12-03T10:00:00Z",
                                                         "by": "Ada", "commit": "f" * 40, "seen": 1,
                                                         "digest": "0a1b2c3d4e5f"},))
    repo.commit("touch a", {"src/a.py": "a = 5\n"})
    a = judge(repo)["r-a"]
    assert a.stale and a.anchor_commit == first


def test_shallow_clone_is_unknown_not_an_error(repo: Repo, tmp_path: Path) -> None:
    at = base(repo)
    repo.commit("touch a", {"src/a.py": "a = 2\n"})
    anchored(repo, "r-a", ("src/a.py",), at)
    repo.git("add", "-A")
    repo.commit("the record")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)], check=True)
    shallow = Repo(clone)
    shallow.mj("init", check=True)
    assert judge(shallow)["r-a"].reason == (f"unknown: verified at {at[:7]}, which this clone does not have "
                                            "(rebased away or a shallow clone)")
    out = shallow.mj("knowledge", "stale", "--json")
    assert out.returncode == 0 and json.loads(out.stdout) == []


def test_dispute_after_the_newest_review_marks_the_record(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-a", ("src/a.py",), at, at="2026-01-02T10:00:00Z")
    anchored(repo, "r-b", ("src/b.py",), at, at="2999-01-01T00:00:00Z")  # reviewed after the dispute
    ws = Workspace(repo.root)
    ws.ledger.append("knowledge.disputed", None, id="r-a", reason="tokens moved to lexer.py", by="agent-7")
    ws.ledger.append("knowledge.disputed", None, id="r-b", reason="old news", by="agent-7")
    got = judge(repo)
    d = got["r-a"].as_dict()
    assert d["state"] == "disputed" and d["dispute"]["reason"] == "tokens moved to lexer.py"
    assert d["reason"].startswith("disputed by agent-7 at ") and d["reason"].endswith(
        f": tokens moved to lexer.py (and current: none of its 1 anchored file changed since it was "
        f"verified at {at[:7]})")
    assert got["r-b"].as_dict()["state"] == "current"


def _tamper(repo: Repo, path: str, word: str) -> None:
    """Rewrite what the cache says the first walked change of `path` was: a read that says `word`
    read the cache instead of walking git."""
    cache = repo.root / ".ai/local/state/currency.cache.json"
    data = json.loads(cache.read_text())
    data["walks"][0]["what"][path][0][1] = word
    cache.write_text(json.dumps(data))


def test_cache_is_one_for_all_records_and_extends_after_new_commits(repo: Repo) -> None:
    at = base(repo)
    for rid, path in (("r-a", "src/a.py"), ("r-b", "src/b.py"), ("r-c", "src/c.py")):
        anchored(repo, rid, (path,), at)
    repo.commit("touch a", {"src/a.py": "a = 2\n"})
    first = judge(repo)
    cache = repo.root / ".ai/local/state/currency.cache.json"
    data = json.loads(cache.read_text())
    assert data["head"] == repo.git("rev-parse", "HEAD").strip()
    assert "r-a" not in cache.read_text()  # what git said, once: no entry per record
    assert data["paths"] == ["src/a.py", "src/b.py", "src/c.py"] and len(data["walks"][0]["log"]) == 1
    _tamper(repo, "src/a.py", "from the cache")
    assert judge(repo)["r-a"].how == {"src/a.py": "from the cache"}  # read, not walked
    # a record promoted at HEAD about a path already followed: answered from the cache too
    anchored(repo, "r-new", ("src/b.py",), repo.git("rev-parse", "HEAD").strip())
    warm = judge(repo)
    assert warm["r-new"].state == "current" and warm["r-a"].how == {"src/a.py": "from the cache"}
    repo.commit("touch b", {"src/b.py": "b = 2\n"})
    repo.git("mv", "src/c.py", "src/z.py")
    repo.commit("move c")
    newest = repo.commit("touch z", {"src/z.py": "c = 2\n"})
    extended = judge(repo)
    assert extended["r-a"].how == {"src/a.py": "from the cache"}  # the new commits alone were walked
    assert json.loads(cache.read_text())["head"] == newest
    cache.unlink()
    afresh = judge(repo)
    assert first["r-a"].commits_since == 1 and afresh["r-a"].how == {"src/a.py": "modified"}
    for rid in ("r-b", "r-c", "r-new"):
        assert extended[rid].as_dict() == afresh[rid].as_dict()
    assert extended["r-c"].how == {"src/c.py": "renamed to src/z.py, then modified"}
    assert extended["r-c"].commits_since == 2 and extended["r-c"].newest == (newest, "touch z")
    assert extended["r-b"].stale and extended["r-new"].stale


def test_a_path_or_commit_the_cache_has_not_seen_is_walked_for(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-a", ("src/a.py",), at)
    middle = repo.commit("touch c", {"src/c.py": "c = 2\n"})
    repo.commit("touch a", {"src/a.py": "a = 2\n"})
    assert judge(repo)["r-a"].stale
    anchored(repo, "r-c", ("src/c.py",), at)  # a path the cache does not follow
    anchored(repo, "r-m", ("src/a.py",), middle)  # a verification commit it kept no ancestry of
    got = judge(repo)
    assert got["r-c"].how == {"src/c.py": "modified"} and got["r-m"].how == {"src/a.py": "modified"}
    assert got["r-m"].commits_since == 1 and got["r-c"].commits_since == 1


def test_reset_below_the_cached_head_is_judged_afresh(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-a", ("src/a.py",), at)
    repo.commit("touch a", {"src/a.py": "a = 2\n"})
    assert judge(repo)["r-a"].stale
    repo.git("reset", "-q", "--hard", at)
    anchored(repo, "r-a", ("src/a.py",), at)
    assert judge(repo)["r-a"].state == "current"


def test_a_tampered_cache_is_not_trusted_and_never_reaches_git_as_an_option(repo: Repo) -> None:
    at = base(repo)
    anchored(repo, "r-a", ("src/a.py",), at)
    repo.commit("touch a", {"src/a.py": "a = 2\n"})
    assert judge(repo)["r-a"].stale
    cache = repo.root / ".ai/local/state/currency.cache.json"
    data = json.loads(cache.read_text())
    data["head"] = "--output=/tmp/owned"
    data["walks"][0]["what"] = ["not", "a", "mapping"]
    cache.write_text(json.dumps(data))
    assert judge(repo)["r-a"].as_dict()["changed"] == ["src/a.py"]
    assert json.loads(cache.read_text())["head"] == repo.git("rev-parse", "HEAD").strip()
