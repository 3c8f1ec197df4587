"""The review acts: promote and reject, their refusals, and that nothing undoes them."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Repo

CANDIDATES = ".ai/repo/knowledge/candidates"
CURATED = ".ai/repo/knowledge/curated"


def derive_decision(repo: Repo, text: str = "Tabs are refused in the parser") -> tuple[str, str]:
    """Record a decision under a task in the open episode and derive it: (record id, task id)."""
    if not repo.events("task.started"):
        repo.mj("start", "parser work", check=True)
    repo.mj("decision", "add", text, "--why", "two encodings of one thing", check=True)
    task = repo.events("decision.recorded")[-1]["task"]
    before = {p.name for p in repo.candidates()}
    repo.mj("knowledge", "derive", check=True)
    (new,) = [p for p in repo.candidates() if p.name not in before]
    return new.stem, task


def snapshot(repo: Repo) -> dict[str, bytes]:
    """Every file under the knowledge store, by path."""
    root = repo.root / ".ai/repo/knowledge"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_promote_moves_the_candidate_to_curated_as_verified(episode: Repo) -> None:
    rid, task = derive_decision(episode)
    proc = episode.mj("knowledge", "promote", rid, "--class", "constraint",
                      input="the parser tests refuse tabs since the first commit\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{CURATED}/{rid}.md\n"
    assert not (episode.root / CANDIDATES / f"{rid}.md").exists()
    text = (episode.root / CURATED / f"{rid}.md").read_text(encoding="utf-8")
    ts = episode.events("decision.recorded")[-1]["ts"]
    day = ts[:10]
    assert text == (
        "---\n"
        f"id: {rid}\n"
        "kind: knowledge/v1\n"
        "class: constraint\n"
        "status: verified\n"
        "epistemics: decided\n"
        "title: \"Tabs are refused in the parser\"\n"
        f"date: \"{day}\"\n"
        "provenance:\n"
        "  origin: extracted\n"
        "  derived_from:\n"
        "    - \"session:e1\"\n"
        f"    - \"decision:{task}\"\n"
        "---\n"
        "Tabs are refused in the parser\n\n"
        "Why: two encodings of one thing\n\n"
        f"Evidence: decision.recorded at {ts}.\n\n"
        "# Evidence\n\n"
        "the parser tests refuse tabs since the first commit\n"
    )
    (line,) = episode.events("knowledge.promoted")
    assert (line["id"], line["class"], line["session"], line["by"], line["evidence_lines"], line["path"]) == (
        rid, "constraint", "e1", "episode", 1, f"{CURATED}/{rid}.md")
    assert episode.mj("knowledge", "check").returncode == 0


def test_promote_adds_the_promoting_episode(episode: Repo) -> None:
    rid, task = derive_decision(episode)
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert episode.hook("session-start", {"session_id": "e2", "source": "startup"}).returncode == 0
    episode.mj("knowledge", "promote", rid, input="reviewed in e2\n", check=True)
    text = (episode.root / CURATED / f"{rid}.md").read_text(encoding="utf-8")
    assert f'  derived_from:\n    - "session:e1"\n    - "decision:{task}"\n    - "session:e2"\n---\n' in text
    assert "class: convention\n" in text
    assert episode.events("knowledge.promoted")[0]["session"] == "e2"
    assert episode.mj("knowledge", "check").returncode == 0


def test_promote_at_a_terminal_with_no_episode_open(episode: Repo) -> None:
    rid, task = derive_decision(episode)
    episode.mj("session", "close", check=True)
    proc = episode.mj("knowledge", "promote", rid, input="read it myself\n")
    assert proc.returncode == 0, proc.stderr
    assert "under terminal (no episode open)" in proc.stderr
    text = (episode.root / CURATED / f"{rid}.md").read_text(encoding="utf-8")
    assert f'  derived_from:\n    - "session:e1"\n    - "decision:{task}"\n---\n' in text
    (line,) = episode.events("knowledge.promoted")
    assert (line["session"], line["by"]) == (None, "terminal")


@pytest.mark.parametrize("evidence, why", [
    ("", "it is empty"),
    ("  \n\n", "it is empty"),
    ("Human: is this right?\nAssistant: yes\n", "transcript marker 'Human:'"),
    ("as shown <system-reminder>x</system-reminder>\n", "transcript marker '<system-reminder'"),
])
def test_promote_refuses_evidence(episode: Repo, evidence: str, why: str) -> None:
    rid, _ = derive_decision(episode)
    before = snapshot(episode)
    proc = episode.mj("knowledge", "promote", rid, input=evidence)
    assert proc.returncode == 4
    assert why in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert "majordomus knowledge promote" in proc.stderr
    assert snapshot(episode) == before
    assert episode.events("knowledge.promoted") == []


@pytest.mark.parametrize("args, why", [
    (["nope-000000000000"], "no candidate has that id"),
    (["../curated/x"], "refused: an id is"),
    (["a/b"], "refused: an id is"),
    ([""], "refused: an id is"),
    (["--", "-rf"], "refused: an id is"),
    (["a..b"], "refused: an id is"),
])
def test_promote_refuses_ids(episode: Repo, args: list[str], why: str) -> None:
    derive_decision(episode)
    before = snapshot(episode)
    proc = episode.mj("knowledge", "promote", *args, input="evidence\n")
    assert proc.returncode == 4, proc.stderr
    assert why in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert snapshot(episode) == before
    assert episode.events("knowledge.promoted") == []


def test_promote_refuses_what_is_not_a_candidate(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    other, _ = derive_decision(episode, "Spaces are the indentation")
    episode.mj("knowledge", "promote", rid, input="evidence\n", check=True)
    episode.mj("knowledge", "reject", other, "--reason", "not true any more", check=True)
    before = snapshot(episode)
    again = episode.mj("knowledge", "promote", rid, input="evidence\n")
    assert again.returncode == 4 and "verified already" in again.stderr
    rejected = episode.mj("knowledge", "promote", other, input="evidence\n")
    assert rejected.returncode == 4 and "'superseded', not candidate" in rejected.stderr
    assert snapshot(episode) == before
    assert len(episode.events("knowledge.promoted")) == 1


def test_reject_with_a_reason_rewrites_in_place(episode: Repo) -> None:
    rid, task = derive_decision(episode)
    path = episode.root / CANDIDATES / f"{rid}.md"
    original = path.read_text(encoding="utf-8")
    proc = episode.mj("knowledge", "reject", rid, "--reason", "the parser accepts tabs again")
    assert proc.returncode == 0, proc.stderr
    text = path.read_text(encoding="utf-8")
    assert "status: superseded\n" in text and "superseded_by" not in text
    ts = episode.events("decision.recorded")[-1]["ts"]
    assert text.endswith(f"Why: two encodings of one thing\n\nEvidence: decision.recorded at {ts}.\n\n"
                         "# Rejected\n\nthe parser accepts tabs again\n")
    assert f'    - "decision:{task}"\n' in text and original.count("\n") < text.count("\n")
    (line,) = episode.events("knowledge.rejected")
    assert (line["id"], line["superseded_by"], line["reason"], line["by"]) == (
        rid, None, "the parser accepts tabs again", "episode")
    assert episode.mj("knowledge", "check").returncode == 0
    assert rid not in episode.mj("knowledge", "candidates").stdout


def test_a_rejection_killed_before_its_ledger_line_is_finished_by_running_it_again(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    episode.mj("knowledge", "reject", rid, "--reason", "tabs are back", check=True)
    ledger = episode.root / ".ai/local/ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    assert '"knowledge.rejected"' in lines[-1]
    ledger.write_text("".join(lines[:-1]), encoding="utf-8")  # the state a kill -9 leaves
    written = (episode.root / CANDIDATES / f"{rid}.md").read_bytes()
    other = episode.mj("knowledge", "reject", rid, "--reason", "a different reason")
    assert other.returncode == 4 and "'superseded', not candidate" in other.stderr
    again = episode.mj("knowledge", "reject", rid, "--reason", "tabs are back")
    assert again.returncode == 0, again.stderr
    (line,) = episode.events("knowledge.rejected")
    assert (line["id"], line["reason"], line["finished"]) == (rid, "tabs are back", "an interrupted rejection")
    assert (episode.root / CANDIDATES / f"{rid}.md").read_bytes() == written
    third = episode.mj("knowledge", "reject", rid, "--reason", "tabs are back")
    assert third.returncode == 4 and len(episode.events("knowledge.rejected")) == 1


def test_reject_by_another_record(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    newer, _ = derive_decision(episode, "Tabs are refused everywhere")
    episode.mj("knowledge", "reject", rid, "--by", newer, check=True)
    text = (episode.root / CANDIDATES / f"{rid}.md").read_text(encoding="utf-8")
    assert "status: superseded\n" in text and f"superseded_by: {newer}\n" in text
    assert "# Rejected" not in text
    assert episode.events("knowledge.rejected")[0]["superseded_by"] == newer
    assert episode.mj("knowledge", "check").returncode == 0


@pytest.mark.parametrize("args, code, why", [
    ([], 2, "--reason"),
    (["--reason", ""], 4, "it is empty"),
    (["--reason", "User: drop it"], 4, "transcript marker 'User:'"),
    (["--by", "e1-000000000000"], 3, "names no record"),
    (["--by", "SELF"], 4, "cannot supersede itself"),
    (["--by", "REJECTED"], 4, "is superseded itself"),
    (["--by", "../x"], 4, "refused: an --by id is"),
])
def test_reject_refusals(episode: Repo, args: list[str], code: int, why: str) -> None:
    rid, _ = derive_decision(episode)
    gone, _ = derive_decision(episode, "An older rule")
    episode.mj("knowledge", "reject", gone, "--reason", "obsolete", check=True)
    args = [{"SELF": rid, "REJECTED": gone}.get(a, a) for a in args]
    before = snapshot(episode)
    proc = episode.mj("knowledge", "reject", rid, *args)
    assert proc.returncode == code, proc.stderr
    assert why in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert snapshot(episode) == before
    assert len(episode.events("knowledge.rejected")) == 1


def test_reject_refuses_a_bad_or_unknown_id(episode: Repo) -> None:
    derive_decision(episode)
    before = snapshot(episode)
    for rid, why in (("x/../y", "refused: an id is"), ("e1-ffffffffffff", "no candidate has that id")):
        proc = episode.mj("knowledge", "reject", rid, "--reason", "no")
        assert proc.returncode == 4 and why in proc.stderr
    assert snapshot(episode) == before


def test_derive_after_promote_leaves_the_curated_record_alone(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    episode.mj("knowledge", "promote", rid, input="checked\n", check=True)
    curated = (episode.root / CURATED / f"{rid}.md").read_bytes()
    proc = episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "1 kept (promoted or rejected)" in proc.stdout
    assert not (episode.root / CANDIDATES / f"{rid}.md").exists()
    assert (episode.root / CURATED / f"{rid}.md").read_bytes() == curated
    assert episode.events("knowledge.derived")[-1]["kept"] == 1
    # The close path derives too, and leaves it alone as well.
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert not (episode.root / CANDIDATES / f"{rid}.md").exists()
    assert (episode.root / CURATED / f"{rid}.md").read_bytes() == curated


def test_derive_after_reject_leaves_the_rejection_alone(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    episode.mj("knowledge", "reject", rid, "--reason", "wrong", check=True)
    path = episode.root / CANDIDATES / f"{rid}.md"
    rejected = path.read_bytes()
    # New evidence for the episode (a commit touching a decision record) changes every draft.
    episode.commit("adr", {".ai/repo/adrs/0001-tabs.md": "# Tabs\n"})
    episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert path.read_bytes() == rejected
    assert episode.events("knowledge.derived")[-1]["kept"] == 1


def _edit(path: Path) -> bytes:
    text = path.read_text(encoding="utf-8").replace("title: \"Tabs are refused in the parser\"",
                                                     "title: \"Tabs are refused by the parser\"")
    path.write_text(text, encoding="utf-8")
    return text.encode("utf-8")


def test_a_candidate_edited_by_hand_is_not_overwritten(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    path = episode.root / CANDIDATES / f"{rid}.md"
    edited = _edit(path)
    assert b"by the parser" in edited
    episode.commit("adr", {".ai/repo/adrs/0001-tabs.md": "# Tabs\n"})
    proc = episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert path.read_bytes() == edited
    assert f"left {CANDIDATES}/{rid}.md alone: it was edited by hand" in proc.stderr
    assert "1 edited by hand, left alone" in proc.stdout
    assert episode.events("knowledge.derived")[-1]["edited"] == 1
    # Deleting the file hands it back to the deriver.
    path.unlink()
    episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert b"commit:" in path.read_bytes() and b"by the parser" not in path.read_bytes()


def test_an_untouched_candidate_is_rewritten_when_its_evidence_changes(episode: Repo) -> None:
    """The control for the test above: the same steps without the edit do rewrite the file."""
    rid, _ = derive_decision(episode)
    path = episode.root / CANDIDATES / f"{rid}.md"
    before = path.read_bytes()
    sha = episode.commit("adr", {".ai/repo/adrs/0001-tabs.md": "# Tabs\n"})
    episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert path.read_bytes() != before and f"commit:{sha}".encode() in path.read_bytes()
    assert "edited" not in episode.events("knowledge.derived")[-1]
