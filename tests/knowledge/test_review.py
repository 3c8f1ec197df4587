"""The review acts: promote and reject, their refusals, and that nothing undoes them; several ids at once,
staged as git mv would; the person's, not the open episode's."""
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


def review_of(text: str) -> dict[str, str]:
    """The last review item of a record's text, as its lines state it."""
    block = text.split("reviews:\n", 1)[1].split("---\n", 1)[0]
    last = block.split("  - ")[-1]
    pairs = (line.strip().split(": ", 1) for line in last.splitlines() if ": " in line)
    return {k: v.strip('"') for k, v in pairs}


def test_promote_moves_the_candidate_to_curated_as_verified(episode: Repo) -> None:
    rid, task = derive_decision(episode)
    candidate = (episode.root / CANDIDATES / f"{rid}.md").read_bytes()
    head = episode.git("rev-parse", "HEAD").strip()
    proc = episode.mj("knowledge", "promote", rid, "--class", "constraint", "--about", "README.md",
                      input="the parser tests refuse tabs since the first commit\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{CURATED}/{rid}.md\n"
    assert "staged" in proc.stderr and "by Test Author" in proc.stderr
    # the candidate's file stays as it was (so two clones' acts never delete what the other changed),
    # and no reader takes it for a candidate any more
    assert (episode.root / CANDIDATES / f"{rid}.md").read_bytes() == candidate
    assert rid not in episode.mj("knowledge", "candidates").stdout
    text = (episode.root / CURATED / f"{rid}.md").read_text(encoding="utf-8")
    ts = episode.events("decision.recorded")[-1]["ts"]
    day = ts[:10]
    review = review_of(text)
    at, digest = review["at"], review["digest"]
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
        "anchors:\n"
        "  - \"README.md\"\n"
        "reviews:\n"
        "  - act: promoted\n"
        f"    at: \"{at}\"\n"
        "    by: \"Test Author\"\n"
        f"    commit: {head}\n"
        "    seen: 0\n"
        "    class: constraint\n"
        f"    digest: {text.split('    digest: ', 1)[1].split(chr(10), 1)[0]}\n"
        "---\n"
        "Tabs are refused in the parser\n\n"
        "Why: two encodings of one thing\n\n"
        f"Evidence: decision.recorded at {ts}.\n\n"
        f"# Evidence (promoted by Test Author, {at}, {digest})\n\n"
        "the parser tests refuse tabs since the first commit\n"
    )
    (line,) = episode.events("knowledge.promoted")
    assert (line["id"], line["class"], line["session"], line["by"], line["evidence_lines"], line["path"]) == (
        rid, "constraint", None, "Test Author", 1, f"{CURATED}/{rid}.md")
    assert episode.mj("knowledge", "check").returncode == 0


def test_a_promotion_is_the_person_s_not_the_open_episode_s(episode: Repo) -> None:
    rid, task = derive_decision(episode)
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert episode.hook("session-start", {"session_id": "e2", "source": "startup"}).returncode == 0
    episode.mj("knowledge", "promote", rid, input="reviewed while e2 is open\n", check=True)
    text = (episode.root / CURATED / f"{rid}.md").read_text(encoding="utf-8")
    assert f'  derived_from:\n    - "session:e1"\n    - "decision:{task}"\n' in text
    assert "session:e2" not in text and "class: convention\n" in text
    (line,) = episode.events("knowledge.promoted")
    assert (line["session"], line["by"]) == (None, "Test Author")
    assert episode.mj("knowledge", "check").returncode == 0


def test_acts_take_several_ids_and_stage_only_what_they_moved(episode: Repo) -> None:
    first, _ = derive_decision(episode)
    second, _ = derive_decision(episode, "Spaces are the indentation")
    episode.git("add", "-A")
    episode.commit("candidates")
    (episode.root / "unrelated.txt").write_text("mine\n")
    proc = episode.mj("knowledge", "reject", first, second, "nope-000000000000", "--reason", "noise")
    assert proc.returncode == 3, proc.stderr  # the unknown id, said on its own line; the others acted
    assert "nope-000000000000: reject nope-000000000000: no record has that id" in proc.stderr
    status = sorted(episode.git("status", "--porcelain", "--no-renames").splitlines())
    assert status == sorted([f"A  {CURATED}/{first}.md", f"A  {CURATED}/{second}.md", "?? unrelated.txt"])
    assert len(episode.events("knowledge.rejected")) == 2


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


def test_an_unknown_id_exits_3_and_names_the_listing(episode: Repo) -> None:
    derive_decision(episode)
    before = snapshot(episode)
    proc = episode.mj("knowledge", "promote", "nope-000000000000", input="evidence\n")
    assert proc.returncode == 3 and "`majordomus knowledge candidates` lists" in proc.stderr
    assert snapshot(episode) == before


def test_promote_refuses_what_is_not_a_candidate(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    other, _ = derive_decision(episode, "Spaces are the indentation")
    episode.mj("knowledge", "promote", rid, input="evidence\n", check=True)
    episode.mj("knowledge", "reject", other, "--reason", "not true any more", check=True)
    before = snapshot(episode)
    again = episode.mj("knowledge", "promote", rid, input="other evidence\n")
    assert again.returncode == 4 and "its status is verified, not candidate" in again.stderr
    assert "knowledge reverify" in again.stderr
    rejected = episode.mj("knowledge", "promote", other, input="evidence\n")
    assert rejected.returncode == 4 and "its status is superseded, not candidate" in rejected.stderr
    assert snapshot(episode) == before
    assert len(episode.events("knowledge.promoted")) == 1


def test_reject_moves_the_candidate_to_curated_as_superseded(episode: Repo) -> None:
    rid, task = derive_decision(episode)
    proc = episode.mj("knowledge", "reject", rid, "--reason", "the parser accepts tabs again")
    assert proc.returncode == 0, proc.stderr
    text = (episode.root / CURATED / f"{rid}.md").read_text(encoding="utf-8")
    assert "status: superseded\n" in text and "superseded_by" not in text
    review = review_of(text)
    ts = episode.events("decision.recorded")[-1]["ts"]
    assert review["act"] == "rejected" and "commit" in review
    assert text.endswith(f"Why: two encodings of one thing\n\nEvidence: decision.recorded at {ts}.\n\n"
                         f"# Rejected (rejected by Test Author, {review['at']}, {review['digest']})\n\n"
                         "the parser accepts tabs again\n")
    assert f'    - "decision:{task}"\n' in text
    (line,) = episode.events("knowledge.rejected")
    assert (line["id"], line["superseded_by"], line["reason"], line["by"]) == (
        rid, None, "the parser accepts tabs again", "Test Author")
    assert episode.mj("knowledge", "check").returncode == 0
    assert rid not in episode.mj("knowledge", "candidates").stdout


def test_an_act_killed_before_its_ledger_line_is_finished_by_running_it_again(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    episode.mj("knowledge", "reject", rid, "--reason", "tabs are back", check=True)
    ledger = episode.root / ".ai/local/ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    assert '"knowledge.rejected"' in lines[-1]
    ledger.write_text("".join(lines[:-1]), encoding="utf-8")  # the state a kill -9 leaves
    written = (episode.root / CURATED / f"{rid}.md").read_bytes()
    other = episode.mj("knowledge", "reject", rid, "--reason", "a different reason")
    assert other.returncode == 4 and "its status is superseded" in other.stderr
    again = episode.mj("knowledge", "reject", rid, "--reason", "tabs are back")
    assert again.returncode == 0, again.stderr
    (line,) = episode.events("knowledge.rejected")
    assert (line["id"], line["reason"]) == (rid, "tabs are back")
    assert (episode.root / CURATED / f"{rid}.md").read_bytes() == written
    third = episode.mj("knowledge", "reject", rid, "--reason", "tabs are back")
    assert third.returncode == 0 and len(episode.events("knowledge.rejected")) == 1  # done: nothing more


def test_reject_by_another_record(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    newer, _ = derive_decision(episode, "Tabs are refused everywhere")
    episode.mj("knowledge", "reject", rid, "--by", newer, check=True)
    text = (episode.root / CURATED / f"{rid}.md").read_text(encoding="utf-8")
    assert "status: superseded\n" in text and f"superseded_by: {newer}\n" in text
    assert f"replaced_by: {newer}" in text and f"Superseded by {newer}." in text
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
    for rid, code, why in (("x/../y", 4, "refused: an id is"), ("e1-ffffffffffff", 3, "no record has that id")):
        proc = episode.mj("knowledge", "reject", rid, "--reason", "no")
        assert proc.returncode == code and why in proc.stderr
    assert snapshot(episode) == before


def test_derive_after_promote_leaves_the_curated_record_alone(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    candidate = (episode.root / CANDIDATES / f"{rid}.md").read_bytes()
    episode.mj("knowledge", "promote", rid, input="checked\n", check=True)
    curated = (episode.root / CURATED / f"{rid}.md").read_bytes()
    proc = episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "1 kept (promoted or rejected)" in proc.stdout
    assert (episode.root / CANDIDATES / f"{rid}.md").read_bytes() == candidate
    assert (episode.root / CURATED / f"{rid}.md").read_bytes() == curated
    assert episode.events("knowledge.derived")[-1]["kept"] == 1
    # The close path derives too, and leaves it alone as well.
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert (episode.root / CANDIDATES / f"{rid}.md").read_bytes() == candidate
    assert (episode.root / CURATED / f"{rid}.md").read_bytes() == curated


def test_derive_after_reject_leaves_the_rejection_alone(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    episode.mj("knowledge", "reject", rid, "--reason", "wrong", check=True)
    path = episode.root / CURATED / f"{rid}.md"
    rejected = path.read_bytes()
    # New evidence for the episode (a commit touching a decision record) changes every draft.
    episode.commit("adr", {".ai/repo/adrs/0001-tabs.md": "# Tabs\n"})
    episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert path.read_bytes() == rejected
    assert rid not in episode.mj("knowledge", "candidates").stdout
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


def test_doctor_names_review_acts_nobody_committed_with_the_commit_command(episode: Repo) -> None:
    rid, _ = derive_decision(episode)
    episode.git("add", "-A")
    episode.commit("the candidate")
    episode.mj("knowledge", "promote", rid, input="checked\n", check=True)
    doctor = episode.mj("doctor")
    assert doctor.returncode == 0, doctor.stdout  # advisory: a review not yet committed blocks nothing
    assert f"1 review act(s) staged and not committed ({rid})" in doctor.stdout
    assert f'git commit -m "knowledge: review" -- {CURATED}/' in doctor.stdout
    status = episode.mj("knowledge", "status")
    assert "tracked by git but missing" not in status.stdout + status.stderr
    episode.git("commit", "-q", "-m", "knowledge: review")
    assert "staged and not committed" not in episode.mj("doctor").stdout
