"""Every row of the derivation table (seed 001, "What is derivable without a model…"), through the
real command in real repositories, with whole records compared byte for byte."""
from __future__ import annotations

import time

import json
from pathlib import Path
from typing import Any

from conftest import Repo

from majordomus.store import records


def derive(repo: Repo, *args: str) -> Any:
    proc = repo.mj("knowledge", "derive", *args)
    assert proc.returncode == 0, proc.stderr
    return proc


def load(path: Path) -> tuple[dict[str, Any], str]:
    record = records.load(path)
    return record.meta, record.body


def day(repo: Repo, event: str) -> str:
    return str(repo.events(event)[-1]["ts"][:10])


def only_record(repo: Repo) -> Path:
    found = repo.candidates()
    assert len(found) == 1, [p.name for p in found]
    return found[0]


def test_decision_under_a_task_is_a_decided_convention(episode: Repo) -> None:
    task = episode.mj("start", "parser work", check=True).stdout.strip()
    episode.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings of one thing",
               check=True)
    derive(episode)
    path = only_record(episode)
    rid = path.stem
    ts = episode.events("decision.recorded")[-1]["ts"]
    assert path.read_text(encoding="utf-8") == f"""---
id: {rid}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "Tabs are refused in the parser"
date: "{day(episode, 'decision.recorded')}"
provenance:
  origin: extracted
  derived_from:
    - "session:e1"
    - "decision:{task}"
---
Tabs are refused in the parser

Why: two encodings of one thing

Evidence: decision.recorded at {ts}.
"""


def test_decision_outside_any_task_derives_from_the_session_alone(episode: Repo) -> None:
    said = episode.mj("decision", "add", "We never store transcripts", check=True)
    assert "session alone" in said.stderr
    derive(episode)
    meta, body = load(only_record(episode))
    assert meta["provenance"]["derived_from"] == ["session:e1"]
    ts = episode.events("decision.recorded")[-1]["ts"]
    assert body == f"We never store transcripts\n\nEvidence: decision.recorded at {ts}.\n"


def test_the_class_is_never_read_from_the_wording(episode: Repo) -> None:
    for text in ("We must never use tabs", "It is a fact that CI always passes", "Lesson: do not deploy on Friday"):
        episode.mj("decision", "add", text, check=True)
    derive(episode)
    metas = [load(p)[0] for p in episode.candidates()]
    assert len(metas) == 3
    assert {(m["class"], m["epistemics"]) for m in metas} == {("convention", "decided")}


def test_question_resolved_under_its_task_is_an_observed_fact(episode: Repo) -> None:
    task = episode.mj("start", "find the encoding", check=True).stdout.strip()
    added = episode.mj("question", "add", "Which encoding does the parser read?", check=True)
    qid = added.stdout.strip()
    assert qid.startswith("q-") and "\n" not in qid
    listed = json.loads(episode.mj("question", "list", "--json", check=True).stdout)
    assert [(q["question"], q["task"]) for q in listed] == [(qid, task)]
    assert qid in episode.mj("question", "list", check=True).stdout
    episode.mj("question", "resolve", qid, "UTF-8 only", check=True)
    assert json.loads(episode.mj("question", "list", "--json", check=True).stdout) == []
    derive(episode)
    path = only_record(episode)
    ts = episode.events("question.resolved")[-1]["ts"]
    # titled by the answer, which stands alone; the question is in the body
    assert path.read_text(encoding="utf-8") == f"""---
id: {path.stem}
kind: knowledge/v1
class: fact
status: candidate
epistemics: observed
title: "UTF-8 only"
date: "{day(episode, 'question.resolved')}"
provenance:
  origin: extracted
  derived_from:
    - "session:e1"
    - "task:{task}"
---
UTF-8 only

Question: Which encoding does the parser read?

Evidence: question.resolved at {ts}.
"""
    assert not any(r.startswith("question:") for r in load(path)[0]["provenance"]["derived_from"])


def test_a_question_asked_in_a_task_belongs_to_it_even_when_resolved_after(episode: Repo) -> None:
    task = episode.mj("start", "t", check=True).stdout.strip()
    qid = episode.mj("question", "add", "Is it cached?", check=True).stdout.strip()
    episode.mj("finish", "--outcome", "completed", check=True)
    episode.mj("question", "resolve", qid, "no", check=True)
    assert episode.events("question.resolved")[-1]["task"] == task
    derive(episode)
    assert load(only_record(episode))[0]["provenance"]["derived_from"] == ["session:e1", f"task:{task}"]


def test_question_outside_any_task_derives_from_the_session_alone(episode: Repo) -> None:
    qid = episode.mj("question", "add", "Where do logs go?", check=True).stdout.strip()
    episode.mj("question", "resolve", qid, "stderr", check=True)
    derive(episode)
    meta, _ = load(only_record(episode))
    assert meta["provenance"]["derived_from"] == ["session:e1"]
    assert (meta["class"], meta["epistemics"]) == ("fact", "observed")


def test_unknown_question_is_exit_3_and_a_bad_id_exit_4(episode: Repo) -> None:
    assert episode.mj("question", "resolve", "q-00000000", "x").returncode == 3
    assert episode.mj("question", "resolve", "../q", "x").returncode == 4


def test_blocked_task_with_a_two_line_reason_gives_a_lesson_with_the_first(episode: Repo) -> None:
    task = episode.mj("start", "upgrade the parser", check=True).stdout.strip()
    episode.mj("finish", "--outcome", "blocked", "--reason", "the vendored lexer is pinned\nsee the ADR",
               check=True)
    note = (episode.root / f".ai/local/state/completed/{task}.md").read_text(encoding="utf-8")
    assert "## Reason\n\nthe vendored lexer is pinned\nsee the ADR\n" in note
    derive(episode)
    path = only_record(episode)
    ts = episode.events("task.finished")[-1]["ts"]
    # titled with its subject (the task); the whole reason is in the body
    assert path.read_text(encoding="utf-8") == f"""---
id: {path.stem}
kind: knowledge/v1
class: lesson
status: candidate
epistemics: observed
title: "upgrade the parser: the vendored lexer is pinned"
date: "{day(episode, 'task.finished')}"
provenance:
  origin: extracted
  derived_from:
    - "session:e1"
    - "task:{task}"
---
upgrade the parser: the vendored lexer is pinned

Task upgrade the parser finished blocked.

see the ADR

Evidence: task.finished at {ts}.
"""


def test_failed_and_no_match_are_lessons_too_and_the_note_is_what_is_read(episode: Repo) -> None:
    first = episode.mj("start", "a", check=True).stdout.strip()
    episode.mj("finish", "--outcome", "failed", "--reason", "## the build broke\nmore", check=True)
    second = episode.mj("start", "b", check=True).stdout.strip()
    episode.mj("finish", "--outcome", "no_match", "--reason", "nothing matched", check=True)
    # A person edits the note's reason: the note is the source the table names.
    note = episode.root / f".ai/local/state/completed/{second}.md"
    note.write_text(note.read_text(encoding="utf-8").replace("nothing matched", "no file matched the glob"),
                    encoding="utf-8")
    derive(episode)
    titles = {load(p)[0]["provenance"]["derived_from"][1]: load(p)[0]["title"] for p in episode.candidates()}
    assert titles == {f"task:{first}": "a: ## the build broke", f"task:{second}": "b: no file matched the glob"}
    assert {load(p)[0]["class"] for p in episode.candidates()} == {"lesson"}


def test_a_passing_verification_alone_is_no_record(episode: Repo) -> None:
    """A passing test run is evidence, not knowledge: a task with nothing else to say and nothing
    to point at (no scope, no commit) leaves no "`CMD` passes" record (docs/KNOWLEDGE.md)."""
    episode.mj("start", "make it pass", check=True)
    done = episode.mj("finish", "--verify", "test -f README.md", check=True)
    assert "finished completed" in done.stderr
    (line,) = episode.events("task.finished")
    assert (line["outcome"], line["verify"]) == ("completed", "test -f README.md")
    assert line["head"] == episode.git("rev-parse", "HEAD").strip()
    derive(episode)
    assert episode.candidates() == []


def test_a_verification_strengthens_the_task_records_and_cites_scope_and_commits(episode: Repo) -> None:
    episode.commit("the parser", {"src/parser.py": "x = 1\n"})
    task = episode.mj("start", "Refuse tabs", "--scope", str(episode.root / "src/parser.py"),
                      check=True).stdout.strip()
    episode.mj("decision", "add", "Tabs are refused in the parser", check=True)
    sha = episode.commit("Refuse tabs in the parser", {"src/parser.py": "x = 2\n"})
    episode.mj("finish", "--verify", "true", check=True)
    episode.mj("start", "Refuse tabs again", "--scope", "src/parser.py", check=True)
    episode.mj("finish", "--verify", "true", check=True)  # the same command, its own task: no record
    derive(episode)
    path = only_record(episode)
    ts = episode.events("decision.recorded")[-1]["ts"]
    authored = episode.git("log", "-1", "--format=%at", sha).strip()
    authored = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(authored)))
    assert path.read_text(encoding="utf-8") == f"""---
id: {path.stem}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "Tabs are refused in the parser"
date: "{ts[:10]}"
provenance:
  origin: extracted
  derived_from:
    - "session:e1"
    - "decision:{task}"
    - "test:true"
    - "commit:{sha}"
  commits:
    - sha: {sha}
      subject: "Refuse tabs in the parser"
      authored: "{authored}"
relations:
  - type: relates_to
    target: "file:src/parser.py"
anchors:
  - "src/parser.py"
---
Tabs are refused in the parser

Verified: `true` passed at commit {sha[:12]} when task Refuse tabs completed.
Commits of the task:
- {sha[:12]} Refuse tabs in the parser
Scope: `src/parser.py`

Evidence: decision.recorded at {ts}.
"""
    assert episode.mj("knowledge", "check").returncode == 0


def test_a_verification_with_pointers_is_one_record_titled_by_its_task(episode: Repo) -> None:
    episode.mj("start", "Extract the max_age check", "--scope", "src", check=True)
    sha = episode.commit("Extract max_age", {"src/age.py": "MAX = 1\n"})
    episode.mj("finish", "--verify", "true", check=True)
    derive(episode)
    meta, body = load(only_record(episode))
    assert (meta["title"], meta["class"]) == ("Extract the max_age check", "fact")
    assert "`true` checks this task's work." in body and f"- {sha[:12]} Extract max_age" in body
    assert meta["relations"] == [{"type": "relates_to", "target": "file:src"}]


def test_a_decision_and_the_same_lesson_of_one_task_are_one_record(episode: Repo) -> None:
    episode.mj("start", "Swap the hash", check=True)
    episode.mj("decision", "add", "SHA-1 stays the default", "--why", "every issued token would break",
               check=True)
    episode.mj("finish", "--outcome", "no_match", "--reason", "SHA-1 stays the default: tokens in the wild",
               check=True)
    derive(episode)
    meta, body = load(only_record(episode))
    assert meta["title"] == "SHA-1 stays the default" and meta["class"] == "convention"
    assert "Why: every issued token would break" in body
    assert "Swap the hash: SHA-1 stays the default: tokens in the wild\n\nTask Swap the hash finished no_match." in body


def test_paths_of_the_authors_machine_never_reach_a_record(episode: Repo) -> None:
    home = str(Path.home())
    episode.mj("decision", "add", f"The fixture lives in {episode.root}/tests/data, not in {home}/scratch/x",
               check=True)
    derive(episode)
    meta, body = load(only_record(episode))
    assert meta["title"] == "The fixture lives in tests/data, not in <outside>"
    assert str(episode.root) not in body and home not in body


def test_completed_without_verify_and_checkpoints_and_handovers_derive_nothing(episode: Repo) -> None:
    episode.mj("start", "plain", check=True)
    episode.mj("checkpoint", "--note", "we decided to use tabs", check=True)
    episode.mj("handover", "--next", "Ship the parser; it is settled that tabs are refused", check=True)
    episode.mj("finish", "--outcome", "completed", check=True)
    assert [e["next"] for e in episode.events("handover.recorded")] == \
        ["Ship the parser; it is settled that tabs are refused"]
    assert len(episode.events("checkpoint.recorded")) == 1
    proc = derive(episode)
    assert episode.candidates() == []
    assert "no evidence to derive" in proc.stdout
    (derived,) = episode.events("knowledge.derived")
    assert (derived["episode"], derived["written"], derived["paths"]) == ("e1", 0, [])


def test_commits_touching_rules_or_adrs_join_every_record_of_the_episode(episode: Repo) -> None:
    # A commit before the episode opened is not the episode's.
    episode.mj("session", "close", "--id", "e1", check=True)
    episode.commit("older adr", {".ai/repo/adrs/0000-old.md": "# old\n"})
    episode.mj("session", "start", "--id", "e2", check=True)
    task = episode.mj("start", "record the ADR", check=True).stdout.strip()
    episode.mj("decision", "add", "Records are one assertion each", check=True)
    sha = episode.commit("adr", {".ai/repo/adrs/0001-x.md": "# x\n", "src/other.py": "x = 1\n"})
    episode.commit("unrelated", {"src/more.py": "y = 2\n"})
    rule = episode.commit("rule", {".ai/repo/rules/project/r.yaml": "id: r\n",
                                   ".ai/repo/adrs/0002-gone.md": "# gone\n"})
    episode.git("rm", "-q", ".ai/repo/adrs/0002-gone.md")
    episode.git("commit", "-q", "-m", "remove 0002")
    gone = episode.git("rev-parse", "HEAD").strip()
    qid = episode.mj("question", "add", "Is 0001 binding?", check=True).stdout.strip()
    episode.mj("question", "resolve", qid, "yes", check=True)
    episode.mj("finish", "--outcome", "blocked", "--reason", "waiting on review", check=True)
    derive(episode)
    metas = [load(p)[0] for p in episode.candidates() if load(p)[0]["id"].startswith("e2-")]
    assert sorted(m["class"] for m in metas) == ["convention", "fact", "lesson"]
    unrelated = episode.git("rev-parse", "HEAD~2").strip()
    for meta in metas:
        refs = meta["provenance"]["derived_from"]
        # the task's own commits (all four), then the span's that touched a rule or an ADR (cited already)
        assert refs[-4:] == [f"commit:{sha}", f"commit:{unrelated}", f"commit:{rule}", f"commit:{gone}"], refs
        assert len([r for r in refs if r.startswith("commit:")]) == 4
        assert meta["relations"] == [
            {"type": "relates_to", "target": "file:.ai/repo/adrs/0001-x.md"},
            {"type": "relates_to", "target": "file:.ai/repo/rules/project/r.yaml"},
        ]
    assert task in json.dumps(metas)
    e1 = [load(p)[0] for p in episode.candidates() if load(p)[0]["id"].startswith("e1-")]
    assert e1 == []


def test_a_record_of_an_episode_without_such_commits_has_no_relations(episode: Repo) -> None:
    episode.commit("code only", {"src/a.py": "a = 1\n"})
    episode.mj("decision", "add", "Code lives in src", check=True)
    derive(episode)
    meta, _ = load(only_record(episode))
    assert "relations" not in meta
    assert meta["provenance"]["derived_from"] == ["session:e1"]


def test_the_adr_commit_of_the_issue_done_when(episode: Repo) -> None:
    """Done when: a commit touching .ai/repo/adrs/0001-x.md puts commit:<sha> and relates_to in
    every record of that episode."""
    episode.mj("decision", "add", "one", check=True)
    sha = episode.commit("adr", {".ai/repo/adrs/0001-x.md": "# x\n"})
    episode.mj("start", "t", check=True)
    episode.mj("decision", "add", "two", check=True)
    episode.mj("finish", "--verify", "true", check=True)
    derive(episode)
    assert len(episode.candidates()) == 2  # the verification is evidence on "two", not a record
    for path in episode.candidates():
        text = path.read_text(encoding="utf-8")
        assert f'    - "commit:{sha}"\n' in text
        assert 'relations:\n  - type: relates_to\n    target: "file:.ai/repo/adrs/0001-x.md"\n' in text


def test_an_episode_whose_opening_line_was_trimmed_claims_no_older_commit(episode: Repo) -> None:
    episode.commit("adr", {".ai/repo/adrs/0001-x.md": "# x\n"})
    episode.mj("session", "close", "--id", "e1", check=True)
    ledger = episode.root / ".ai/local/ledger.jsonl"
    kept = [l for l in ledger.read_text(encoding="utf-8").splitlines(keepends=True)
            if '"session.opened"' not in l]
    kept.append(json.dumps({"ts": "2026-01-02T03:04:05Z", "event": "decision.recorded", "session": "e1",
                            "task": None, "text": "late", "why": None}) + "\n")
    ledger.write_text("".join(kept), encoding="utf-8")
    derive(episode, "--episode", "e1")
    meta, _ = load(only_record(episode))
    assert meta["provenance"]["derived_from"] == ["session:e1"] and "relations" not in meta


def test_a_command_no_reference_can_name_is_said_in_words_only(episode: Repo) -> None:
    episode.mj("start", "Tabs", check=True)
    episode.mj("decision", "add", "Commands may hold tabs", check=True)
    episode.mj("finish", "--verify", "true\t# a tab", check=True)
    derive(episode)
    meta, body = load(only_record(episode))
    assert not any(r.startswith("test:") for r in meta["provenance"]["derived_from"])
    assert "Verified: `true\t# a tab` passed" in body
    assert episode.mj("knowledge", "check").returncode == 0
