"""Issue 8: trunk episodes stage their records in the outbox; a branch episode drains them.

Every case runs in real temporary repositories pushed to a real bare remote, so the trunk is
what git records as the remote's default branch (`refs/remotes/origin/HEAD`).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT, Repo, make_repo, published

OUTBOX = Path(".ai/local/state/outbox")
SESSIONS = Path(".ai/repo/sessions")
CANDIDATES = Path(".ai/repo/knowledge/candidates")


def clone(tmp_path: Path, name: str) -> Repo:
    """A second clone of the remote: `git clone` records origin/HEAD itself."""
    subprocess.run(["git", "clone", "-q", str(tmp_path / "remote.git"), str(tmp_path / name)], check=True)
    repo = Repo(tmp_path / name)
    repo.git("config", "user.name", "Test Author")
    repo.git("config", "user.email", "author@example.invalid")
    return repo


def trunk_episode(repo: Repo, episode: str = "e1", decision: str = "Tabs are refused in the parser",
                  task: bool = True) -> None:
    """One episode through the real hooks, with one decision, so it derives one candidate.

    Without a task the decision's record names only its episode, so the same episode and text
    in two clones is the same evidence (a task id carries the second it started)."""
    env = {"MAJORDOMUS_EPISODE": episode}
    start = repo.hook("session-start", {"session_id": episode, "source": "startup"})
    assert start.returncode == 0 and start.stderr == b"", start.stderr
    if task:
        repo.mj("start", "a task", check=True, env=env)
    repo.mj("decision", "add", decision, "--why", "two encodings of one thing", check=True, env=env)
    if task:
        repo.mj("finish", "--outcome", "completed", check=True, env=env)
    end = repo.hook("session-end", {"session_id": episode, "reason": "other"})
    assert end.returncode == 0 and end.stderr == b"", end.stderr


def staged(repo: Repo) -> list[str]:
    return sorted(p.relative_to(repo.root / OUTBOX).as_posix()
                  for p in (repo.root / OUTBOX).rglob("*.md"))


def tracked_records(repo: Repo) -> list[str]:
    return sorted([f"sessions/{p.name}" for p in (repo.root / SESSIONS).glob("*.md") if p.name != "README.md"]
                  + [f"candidates/{p.name}" for p in repo.candidates()])


def test_trunk_episode_leaves_the_trunk_clean(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    assert repo.git("status", "--porcelain") == ""
    held = staged(repo)
    assert len(held) == 2 and "sessions/e1.md" in held
    (candidate,) = [h for h in held if h.startswith("candidates/")]
    assert candidate.startswith("candidates/e1-")
    assert "convention" in (repo.root / OUTBOX / candidate).read_text(encoding="utf-8")
    assert tracked_records(repo) == []
    # A second trunk episode does not drain: the first one's records still wait.
    trunk_episode(repo, "e2", "Spaces are fine")
    assert repo.git("status", "--porcelain") == ""
    assert len(staged(repo)) == 4 and not repo.events("outbox.drained")


def test_next_branch_episode_moves_the_outbox_byte_for_byte(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    before = {name: (repo.root / OUTBOX / name).read_bytes() for name in staged(repo)}
    repo.git("switch", "-q", "-c", "feature")
    start = repo.hook("session-start", {"session_id": "e2", "source": "startup"})
    assert start.returncode == 0 and start.stderr == b"", start.stderr
    assert b"# Majordomus briefing" in start.stdout
    assert staged(repo) == []
    assert {name: (repo.root / ".ai/repo" / ("knowledge/" if name.startswith("candidates") else "")
                   / name).read_bytes() for name in before} == before
    (drained,) = repo.events("outbox.drained")
    assert drained["session"] == "e2" and drained["moved"] == 2 and drained["kept"] == 0
    listed = json.loads(repo.mj("knowledge", "candidates", "--json", check=True).stdout)
    (candidate,) = [n for n in before if n.startswith("candidates/")]
    assert [(c["id"], c["class"], c["branch"], c["episode"]) for c in listed] == [
        (candidate[len("candidates/"):-3], "convention", "main", "e1")]
    status = repo.git("status", "--porcelain")
    assert f"?? {CANDIDATES.as_posix()}/{candidate[len('candidates/'):]}" in status
    assert f"?? {SESSIONS.as_posix()}/e1.md" in status


def test_a_branch_close_drains_what_the_trunk_staged(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    repo.mj("session", "start", "--id", "e2", check=True)  # on main: nothing drains
    assert len(staged(repo)) == 2
    repo.git("switch", "-q", "-c", "feature")
    closed = repo.mj("session", "close", "--id", "e2", "--json", check=True)
    outcome = json.loads(closed.stdout)
    assert outcome["session_record"] == f"{SESSIONS.as_posix()}/e2.md"
    assert sorted(outcome["drained"]["moved"]) == sorted(
        [f"{SESSIONS.as_posix()}/e1.md"] + [f"{CANDIDATES.as_posix()}/{p.name}" for p in repo.candidates()])
    assert staged(repo) == []
    order = [line["event"] for line in repo.ledger() if line["session"] == "e2"]
    assert order.index("outbox.drained") < order.index("session.closed")


def test_a_second_drain_does_nothing_and_says_so(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    repo.git("switch", "-q", "-c", "feature")
    first = repo.mj("drain", check=True)
    assert "moved 2 records" in first.stdout
    moved = {p: (repo.root / ".ai/repo" / p.replace("candidates/", "knowledge/candidates/")).read_bytes()
             for p in tracked_records(repo)}
    second = repo.mj("drain", check=True)
    assert second.stdout == "drain: nothing changed (.ai/local/state/outbox is empty)\n"
    assert json.loads(repo.mj("drain", "--json", check=True).stdout)["nothing_changed"] is True
    assert len(repo.events("outbox.drained")) == 1
    assert {p: (repo.root / ".ai/repo" / p.replace("candidates/", "knowledge/candidates/")).read_bytes()
            for p in tracked_records(repo)} == moved


def test_a_record_tracked_with_the_same_bytes_is_removed_from_the_outbox(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    held = {name: (repo.root / OUTBOX / name).read_bytes() for name in staged(repo)}
    repo.git("switch", "-q", "-c", "feature")
    repo.mj("drain", check=True)
    for name, data in held.items():  # the trunk stages the very same records once more
        (repo.root / OUTBOX / name).write_bytes(data)
    again = json.loads(repo.mj("drain", "--json", check=True).stdout)
    assert again["moved"] == [] and again["kept"] == []
    assert sorted(again["same"]) == sorted(f"{OUTBOX.as_posix()}/{n}" for n in held)
    assert staged(repo) == []
    assert repo.events("outbox.drained")[-1]["same"] == 2


def test_a_record_tracked_with_other_bytes_is_kept_and_reported(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    repo.git("switch", "-q", "-c", "feature")
    theirs = b"---\nid: e1\nkind: session/v1\n---\nanother clone's account of e1\n"
    (repo.root / SESSIONS / "e1.md").write_bytes(theirs)
    first = repo.mj("drain", check=True)
    assert "moved 1 record " in first.stdout
    assert "kept 1 record in the outbox" in first.stdout
    assert f"{OUTBOX.as_posix()}/sessions/e1.md (tracked: {SESSIONS.as_posix()}/e1.md)" in first.stdout
    assert staged(repo) == ["sessions/e1.md"]
    assert (repo.root / SESSIONS / "e1.md").read_bytes() == theirs
    assert repo.events("outbox.drained")[-1]["kept_paths"] == [f"{OUTBOX.as_posix()}/sessions/e1.md"]
    # Re-run: nothing changes, the kept record is named again, no new ledger line.
    second = repo.mj("drain", check=True)
    assert second.stdout.startswith("drain: nothing changed\ndrain: kept 1 record")
    assert len(repo.events("outbox.drained")) == 1
    # Once a person removes the wrong copy, the next drain moves the waiting one.
    (repo.root / SESSIONS / "e1.md").unlink()
    third = json.loads(repo.mj("drain", "--json", check=True).stdout)
    assert third["moved"] == [f"{SESSIONS.as_posix()}/e1.md"] and staged(repo) == []


def test_a_promoted_candidate_is_not_revived_by_the_drain(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    (name,) = [n for n in staged(repo) if n.startswith("candidates/")]
    curated = repo.root / ".ai/repo/knowledge/curated" / Path(name).name
    curated.write_text((repo.root / OUTBOX / name).read_text(encoding="utf-8")
                       .replace("status: candidate", "status: verified"), encoding="utf-8")
    repo.git("switch", "-q", "-c", "feature")
    out = json.loads(repo.mj("drain", "--json", check=True).stdout)
    assert out["settled"] == [f"{OUTBOX.as_posix()}/{name}"]
    assert repo.candidates() == [] and staged(repo) == []


def test_two_clones_holding_the_same_record_write_the_same_bytes(tmp_path: Path) -> None:
    first = published(tmp_path, "first")
    second = clone(tmp_path, "second")
    trunk_episode(first, task=False)
    trunk_episode(second, task=False)
    assert second.git("status", "--porcelain") == ""
    (name,) = [n for n in staged(first) if n.startswith("candidates/")]
    # the same bytes but for the evidence's time, the second each clone recorded it at
    timeless = [re.sub(rb"\nEvidence: decision.recorded at \S+Z\.\n", b"", (r.root / OUTBOX / name).read_bytes())
                for r in (first, second)]
    assert timeless[0] == timeless[1]
    # The first clone carries it on a branch that reaches the trunk.
    first.git("switch", "-q", "-c", "carry")
    first.mj("drain", check=True)
    first.git("add", "-A")
    first.commit("carry e1's records")
    first.git("push", "-q", "origin", "carry:main")
    # The second clone, up to date with the trunk, finds it tracked with the same bytes.
    second.git("pull", "-q", "--ff-only")
    second.git("switch", "-q", "-c", "later")
    out = json.loads(second.mj("drain", "--json", check=True).stdout)
    assert f"{OUTBOX.as_posix()}/{name}" in out["same"]
    assert not (second.root / OUTBOX / name).exists()
    assert second.git("status", "--porcelain", "--", CANDIDATES.as_posix()) == ""


def test_no_remote_or_no_recorded_default_means_no_trunk(tmp_path: Path) -> None:
    alone = make_repo(tmp_path / "alone")  # no remote at all
    trunk_episode(alone)
    assert staged(alone) == [] and "sessions/e1.md" in tracked_records(alone)

    pushed = make_repo(tmp_path / "pushed")  # a remote, but `git push` records no default
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(tmp_path / "pushed.git")], check=True)
    pushed.git("remote", "add", "origin", str(tmp_path / "pushed.git"))
    pushed.git("push", "-q", "-u", "origin", "main")
    assert pushed.git("for-each-ref", "refs/remotes/origin/HEAD") == ""
    trunk_episode(pushed)
    assert staged(pushed) == [] and "sessions/e1.md" in tracked_records(pushed)

    forgot = published(tmp_path, "forgot")  # the default recorded, then deleted
    forgot.git("remote", "set-head", "origin", "--delete")
    trunk_episode(forgot)
    assert staged(forgot) == [] and "sessions/e1.md" in tracked_records(forgot)


def test_drain_is_refused_on_the_trunk_and_on_a_detached_head(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    on_main = repo.mj("drain")
    assert on_main.returncode == 4 and on_main.stdout == ""
    assert "main is the trunk" in on_main.stderr and "git switch -c" in on_main.stderr
    repo.git("switch", "-q", "--detach")
    detached = repo.mj("drain")
    assert detached.returncode == 4 and "detached" in detached.stderr
    assert len(staged(repo)) == 2 and tracked_records(repo) == []


def test_doit_drain_runs_the_same_task(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    repo.git("switch", "-q", "-c", "feature")
    doit = [str(Path(sys.executable).parent / "doit"), "-f", str(PROJECT / "dodo.py"), "-d", str(repo.root)]
    first = subprocess.run([*doit, "drain"], cwd=repo.root, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "moved 2 records" in first.stdout and staged(repo) == []
    second = subprocess.run([*doit, "drain"], cwd=repo.root, capture_output=True, text=True)
    assert second.returncode == 0 and "nothing changed" in second.stdout


def test_the_start_hook_imports_doit_only_to_move_something(tmp_path: Path) -> None:
    repo = published(tmp_path)
    probe = ("import sys\nfrom majordomus.hooks import run as hooks\nfrom majordomus.store.workspace import Workspace\n"
             "hooks.session_start(Workspace(__import__('pathlib').Path('.').resolve()), sys.argv[1], 'startup')\n"
             "sys.stderr.write('doit imported' if 'doit' in sys.modules else 'no doit')\n")

    def start(episode: str) -> str:
        proc = subprocess.run([sys.executable, "-c", probe, episode], cwd=repo.root, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stderr

    assert start("e0") == "no doit"  # empty outbox
    trunk_episode(repo)
    assert start("e2") == "no doit"  # records wait, but this is the trunk
    repo.git("switch", "-q", "-c", "feature")
    assert start("e3") == "doit imported" and staged(repo) == []
    assert start("e4") == "no doit"
    # Only a record a person must settle waits (its name is tracked with other bytes): nothing
    # to move, so no doit either; it stays, and `pending` names it.
    (repo.root / OUTBOX / "sessions/e1.md").write_text("another account of e1\n", encoding="utf-8")
    assert start("e5") == "no doit" and staged(repo) == ["sessions/e1.md"]


def test_pending_names_what_waits(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    probe = ("import json\nfrom pathlib import Path\nfrom majordomus.outbox import staging as outbox\n"
             "from majordomus.store.workspace import Workspace\n"
             "print(json.dumps(outbox.pending(Workspace(Path('.').resolve()))))\n")

    def pending() -> dict[str, object]:
        return json.loads(subprocess.run([sys.executable, "-c", probe], cwd=repo.root, capture_output=True,
                                         text=True, check=True).stdout)

    (name,) = [n for n in staged(repo) if n.startswith("candidates/")]
    assert pending() == {"where": OUTBOX.as_posix(), "total": 2, "sessions": 1, "candidates": 1,
                         "paths": [f"{OUTBOX.as_posix()}/sessions/e1.md", f"{OUTBOX.as_posix()}/{name}"],
                         "conflicts": []}
    (repo.root / SESSIONS / "e1.md").write_text("another account of e1\n", encoding="utf-8")
    assert pending()["conflicts"] == [f"{OUTBOX.as_posix()}/sessions/e1.md"]


def test_each_worktree_answers_for_its_own_branch_and_outbox(tmp_path: Path) -> None:
    repo = published(tmp_path)
    repo.git("worktree", "add", "-q", str(tmp_path / "side"), "-b", "side")
    side = Repo(tmp_path / "side")
    trunk_episode(repo)
    assert repo.git("status", "--porcelain") == "" and len(staged(repo)) == 2
    trunk_episode(side, "e2", "Spaces are fine")  # a branch: tracked at once
    assert staged(side) == [] and "sessions/e2.md" in tracked_records(side)
    # The side worktree's boundaries do not see the main worktree's outbox (it is per checkout).
    assert len(staged(repo)) == 2 and "sessions/e1.md" not in tracked_records(side)


def test_a_failed_drain_never_costs_the_briefing(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    repo.git("switch", "-q", "-c", "feature")
    folder = repo.root / CANDIDATES
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    folder.write_text("not a folder\n", encoding="utf-8")  # the drain cannot write under it
    start = repo.hook("session-start", {"session_id": "e2", "source": "startup"})
    assert start.returncode == 0 and b"# Majordomus briefing" in start.stdout
    (line,) = start.stderr.decode().splitlines()  # one line, no traceback
    assert line.startswith("majordomus: session-start failed: drain failed (NotADirectoryError")
    (failed,) = repo.events("provider.event.failed")
    assert failed["hook"] == "session-start" and failed["session"] == "e2"
    assert len(staged(repo)) == 2 and not repo.events("outbox.drained")
    end = repo.hook("session-end", {"session_id": "e2", "reason": "other"})
    assert end.returncode == 0 and b"drain failed" in end.stderr
    assert repo.events("session.closed")[-1]["episode"] == "e2" and len(staged(repo)) == 2
    by_hand = repo.mj("session", "start", "--id", "e3")
    assert by_hand.returncode == 1 and "# Majordomus briefing" in by_hand.stdout
    assert by_hand.stderr.splitlines()[-1].startswith("majordomus: drain failed (NotADirectoryError")


def test_doctor_names_the_outbox_and_what_a_drain_keeps(tmp_path: Path) -> None:
    repo = published(tmp_path)
    trunk_episode(repo)
    doctor = repo.mj("doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    (note,) = [n for n in json.loads(doctor.stdout)["notes"] if n["rule"] == "doctor.outbox"]
    assert "1 session record(s) and 1 candidate(s)" in note["what"] and "kept" not in note["what"]
    assert note["fix"] == "start a branch and run `majordomus drain`" and note["blocking"] is False
    repo.git("switch", "-q", "-c", "feature")
    (repo.root / SESSIONS / "e1.md").write_text("another account of e1\n", encoding="utf-8")
    repo.mj("drain", check=True)
    (note,) = [n for n in json.loads(repo.mj("doctor", "--json").stdout)["notes"] if n["rule"] == "doctor.outbox"]
    assert note["what"].endswith(f"1 of them kept, a tracked file of the same name holds other bytes: "
                                 f"{OUTBOX.as_posix()}/sessions/e1.md")
    assert "delete the wrong copy" in note["fix"]
