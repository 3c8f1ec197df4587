"""Two `git worktree`s of one repository, an agent in each (issue 27): each keeps its own open
episode and task, the hooks find the worktree they run in, records derived in either land in the
one store without collision, and doctor in either reports the truth (docs/TEAM.md)."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import Repo, make_repo


def test_an_agent_in_each_worktree_keeps_its_own_episode_and_lands_in_one_store(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    main.git("add", "-A")
    main.commit("majordomus init and capture install")
    main.git("worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature")
    feature = Repo(tmp_path / "feature")

    for repo, sid, title in ((main, "m1", "Work on main"), (feature, "f1", "Work on the feature")):
        proc = repo.hook("session-start", {"session_id": sid, "source": "startup", "cwd": str(repo.root)})
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
        repo.mj("start", title, check=True)
        repo.mj("decision", "add", f"{title} keeps one writer", "--why", "two writers raced", check=True)
    # each worktree has its own local state: its own open episode and active task
    for repo, sid, title in ((main, "m1", "Work on main"), (feature, "f1", "Work on the feature")):
        context = json.loads(repo.mj("session", "context", "--json", check=True).stdout)
        assert context["episode"] == sid and title in json.dumps(context)
        other = "Work on the feature" if sid == "m1" else "Work on main"
        assert other not in json.dumps(context)
        ledger = (repo.root / ".ai/local/ledger.jsonl").read_text(encoding="utf-8")
        assert f'"session":"{sid}"' in ledger.replace(" ", "")
        assert f'"session":"{"f1" if sid == "m1" else "m1"}"' not in ledger.replace(" ", "")
    assert (main.root / ".ai/local") != (feature.root / ".ai/local")

    # a hook run from a folder inside the worktree belongs to that worktree
    (feature.root / "src").mkdir()
    proc = feature.hook("session-end", {"session_id": "f1", "reason": "other", "cwd": str(feature.root / "src")})
    assert proc.returncode == 0, proc.stderr
    assert main.hook("session-end", {"session_id": "m1", "reason": "other", "cwd": str(main.root)}).returncode == 0
    assert [p.name for p in feature.candidates()] and [p.name for p in main.candidates()]
    assert not {p.name for p in feature.candidates()} & {p.name for p in main.candidates()}  # no collision

    feature.git("add", "-A", "--", ".ai/repo")
    feature.commit("feature episode")
    main.git("add", "-A", "--", ".ai/repo")
    main.commit("main episode")
    merged = main.git("merge", "--no-edit", "feature", check=False)
    assert "CONFLICT" not in merged
    names = {p.name for p in main.candidates()}
    assert len(names) == 2 and any(n.startswith("f1-") for n in names) and any(n.startswith("m1-") for n in names)
    for repo in (main, feature):
        doctor = repo.mj("doctor")
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert main.mj("knowledge", "check").returncode == 0
    # the merge driver is registered once, for both worktrees (their configuration is shared)
    assert main.git("config", "--get", "merge.majordomus.driver") == feature.git("config", "--get",
                                                                                  "merge.majordomus.driver")
