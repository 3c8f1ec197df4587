"""Two clones review one candidate before either pushes: the pull merges without a person, no act
is lost, and a disagreement stays visible (docs/TEAM.md). Real clones through a bare remote."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import Repo, published

KB = ".ai/repo/knowledge"


def clone(remote: Path, where: Path, name: str) -> Repo:
    subprocess.run(["git", "clone", "-q", str(remote), str(where)], check=True)
    repo = Repo(where)
    repo.git("config", "user.name", name)
    repo.git("config", "user.email", f"{name.lower()}@example.invalid")
    repo.mj("init", check=True)  # registers the merge driver in this clone's configuration
    return repo


@pytest.fixture
def team(tmp_path: Path) -> tuple[Repo, Repo, str]:
    """Clones `ada` and `bob` of one remote whose main holds one committed candidate."""
    origin = published(tmp_path, "origin")
    origin.git("checkout", "-q", "-b", "work")
    origin.hook("session-start", {"session_id": "e1", "source": "startup", "cwd": str(origin.root)})
    origin.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings of one thing",
              check=True)
    origin.hook("session-end", {"session_id": "e1", "reason": "other", "cwd": str(origin.root)})
    origin.git("add", "-A")
    origin.commit("episode e1")
    origin.git("checkout", "-q", "main")
    origin.git("merge", "-q", "--no-ff", "-m", "merge work", "work")
    origin.git("push", "-q", "origin", "main")
    [candidate] = origin.candidates()
    remote = tmp_path / "remote.git"
    return clone(remote, tmp_path / "ada", "Ada"), clone(remote, tmp_path / "bob", "Bob"), candidate.stem


def pull(repo: Repo) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"], cwd=repo.root,
                          capture_output=True, text=True)


def conflicts(repo: Repo) -> list[str]:
    return [ln for ln in repo.git("diff", "--name-only", "--diff-filter=U").splitlines() if ln]


def test_promote_here_reject_there_merges_as_a_disagreement_for_a_person(team: tuple[Repo, Repo, str]) -> None:
    ada, bob, rid = team
    ada.mj("knowledge", "promote", rid, input="the parser test fails on a tab\n", check=True)
    staged = ada.git("status", "--porcelain", "--no-renames").splitlines()
    assert staged == [f"A  {KB}/curated/{rid}.md"]  # staged; the candidate's file is left as it was
    ada.git("commit", "-q", "-m", "promote")
    ada.git("push", "-q", "origin", "main")
    bob.mj("knowledge", "reject", rid, "--reason", "tabs are accepted since 2.0", check=True)
    bob.git("commit", "-q", "-m", "reject")

    proc = pull(bob)
    assert proc.returncode == 0, proc.stderr
    assert conflicts(bob) == []
    text = (bob.root / KB / "curated" / f"{rid}.md").read_text()
    assert "status: candidate" in text  # nobody settled it: back in a person's hands
    assert "act: promoted" in text and "act: rejected" in text
    assert "the parser test fails on a tab" in text and "tabs are accepted since 2.0" in text
    queue = bob.mj("knowledge", "candidates", "--json").stdout
    assert rid in queue  # back in the queue, from curated/, for a person to settle
    record = bob.mj("knowledge", "check")
    assert "disagree" in record.stdout + record.stderr

    # one more act, which saw both, settles it; and the same merge on the other clone is the same bytes
    bob.mj("knowledge", "promote", rid, "--class", "constraint", input="checked again: tabs refused\n",
           check=True)
    bob.git("commit", "-q", "-m", "settle")
    bob.git("push", "-q", "origin", "main")
    assert pull(ada).returncode == 0 and conflicts(ada) == []
    settled = (ada.root / KB / "curated" / f"{rid}.md").read_text()
    assert settled == (bob.root / KB / "curated" / f"{rid}.md").read_text()
    assert "status: verified" in settled and "class: constraint" in settled and "seen: 2" in settled


def test_two_promotions_keep_both_reviewers_evidence_in_either_merge_order(team: tuple[Repo, Repo, str]) -> None:
    ada, bob, rid = team
    ada.mj("knowledge", "promote", rid, input="Ada ran the parser tests\n", check=True)
    ada.git("commit", "-q", "-m", "ada promotes")
    bob.mj("knowledge", "promote", rid, "--about", "README.md", input="Bob read the parser\n", check=True)
    bob.git("commit", "-q", "-m", "bob promotes")
    ada.git("push", "-q", "origin", "main")
    assert pull(bob).returncode == 0 and conflicts(bob) == []
    bob_text = (bob.root / KB / "curated" / f"{rid}.md").read_text()
    # the other order: Ada merges Bob's commit into hers
    ada.git("fetch", "-q", str(bob.root), "main")
    ada.git("merge", "-q", "--no-edit", "FETCH_HEAD")
    assert conflicts(ada) == []
    assert (ada.root / KB / "curated" / f"{rid}.md").read_text() == bob_text
    assert "Ada ran the parser tests" in bob_text and "Bob read the parser" in bob_text
    assert "status: verified" in bob_text and "README.md" in bob_text.split("anchors:")[1]


def test_a_rebase_over_the_other_review_completes_without_a_person(team: tuple[Repo, Repo, str]) -> None:
    ada, bob, rid = team
    ada.mj("knowledge", "reject", rid, "--reason", "duplicate of the style guide", check=True)
    ada.git("commit", "-q", "-m", "ada rejects")
    ada.git("push", "-q", "origin", "main")
    bob.mj("knowledge", "reject", rid, "--reason", "not about this repository", check=True)
    bob.git("commit", "-q", "-m", "bob rejects")
    proc = subprocess.run(["git", "pull", "-q", "--rebase", "origin", "main"], cwd=bob.root,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = (bob.root / KB / "curated" / f"{rid}.md").read_text()
    assert "status: superseded" in text
    assert "duplicate of the style guide" in text and "not about this repository" in text


def test_a_fresh_clone_s_first_close_registers_the_merge_driver(tmp_path: Path) -> None:
    published(tmp_path, "origin")
    subprocess.run(["git", "clone", "-q", str(tmp_path / "remote.git"), str(tmp_path / "fresh")], check=True)
    fresh = Repo(tmp_path / "fresh")
    assert fresh.git("config", "--get", "merge.majordomus.driver", check=False) == ""
    fresh.git("checkout", "-q", "-b", "work")
    fresh.hook("session-start", {"session_id": "f1", "source": "startup", "cwd": str(fresh.root)})
    fresh.hook("session-end", {"session_id": "f1", "reason": "other", "cwd": str(fresh.root)})
    driver = fresh.git("config", "--get", "merge.majordomus.driver").strip()
    assert driver.endswith("-m majordomus merge-driver %O %A %B %P")
    assert "merge=majordomus" in (fresh.root / ".gitattributes").read_text()
