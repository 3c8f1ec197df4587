"""The start briefing: each section, the shared budget, the unattributed line, the ceiling; what
the repository knows (verified records only, constraints first, those relating to what this
branch or the working tree changed before the newest), far under Claude Code's 10,000-character
cut with a long title, 500 records and 20,000 ledger lines; statements, not orders."""
from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import Repo, published
from kbstore import CURATED_DIR as CURATED
from kbstore import curated

HEADINGS = ["## What this repository knows", "## Active task", "## Open questions",
            "## Candidates awaiting review", "## Last handover"]
NOTHING_YET = ("Nothing yet: no verified record (a person promotes a reviewed candidate); no active task "
               "(`majordomus start \"TITLE\" --scope PATH`); no open question; no candidate awaits review on "
               "main; no handover to act on.")

RECORD = """---
id: {rid}
kind: knowledge/v1
class: convention
status: {status}
epistemics: decided
title: "A synthetic decision"
date: "2026-01-02"
provenance:
  origin: extracted
  derived_from:
    - "session:{episode}"
---
A synthetic decision
"""


def start(repo: Repo, episode: str = "e1", source: str = "startup") -> str:
    proc = repo.hook("session-start", {"session_id": episode, "source": source})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout.decode("utf-8")


def section(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(heading))
    body = []
    for line in lines[at + 1:]:
        if line.startswith("#"):
            break
        if line.strip():
            body.append(line)
    return body


def candidate(repo: Repo, rid: str, episode: str, status: str = "candidate") -> Path:
    path = repo.root / ".ai/repo/knowledge/candidates" / f"{rid}.md"
    path.write_text(RECORD.format(rid=rid, episode=episode, status=status), encoding="utf-8")
    return path


def set_budget(repo: Repo, lines: int) -> None:
    policy = repo.root / ".ai/repo/policy.yaml"
    text = re.sub(r"briefing_budget_lines: \d+", f"briefing_budget_lines: {lines}",
                  policy.read_text(encoding="utf-8"))
    policy.write_text(text, encoding="utf-8")


def workspace(repo: Repo):  # noqa: ANN201 - the real Workspace, for bulk set-up in-process
    from majordomus.store.workspace import Workspace

    return Workspace(repo.root)


def test_sections_in_order_and_absence_printed(repo: Repo) -> None:
    text = start(repo)
    # a short header, and every empty section folded into one line that still says it is empty
    header, recording, blank, nothing = text.splitlines()
    assert header == "# Majordomus briefing: episode e1 (startup)" and blank == ""
    assert len(recording) < 260 and "`majordomus finish --verify CMD`" in recording
    assert nothing == NOTHING_YET
    assert not any(h in text for h in HEADINGS)
    assert "Working context" not in text  # only a compaction leads with the episode's context


def test_each_section_when_it_holds_something(repo: Repo) -> None:
    start(repo)
    task = repo.mj("start", "Teach the parser tabs", "--scope", "src", check=True).stdout.strip()
    qid = repo.mj("question", "add", "Are tabs ever legal?", check=True).stdout.strip()
    repo.mj("decision", "add", "Tabs are refused", check=True)
    repo.mj("handover", "--next", "write the tab test", check=True)
    end = repo.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0, end.stderr
    (rid,) = [p.stem for p in repo.candidates()]

    text = start(repo, "e2")
    positions = [text.index(h) for h in HEADINGS[1:]]
    assert positions == sorted(positions)
    assert task not in text  # no act of the agent's needs the task's id
    assert section(text, "## Active task") == ["Teach the parser tabs (scope src)"]
    assert section(text, "## Open questions") == [f"- {qid}: Are tabs ever legal?"]
    assert section(text, "## Candidates awaiting review") == [
        "1 candidate awaits review on main, newest first; a person promotes or rejects each "
        "(`majordomus knowledge candidates` lists them)",
        f"- Tabs are refused ({rid})"]
    (handover,) = section(text, "## Last handover")
    assert re.fullmatch(r"Next Action: write the tab test \(\S+Z\)", handover)
    assert "\n\nNothing yet: no verified record (a person promotes a reviewed candidate).\n" in text


def test_candidates_are_placed_on_their_episode_branch(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    start(repo, "f1")
    repo.mj("decision", "add", "Feature decision", check=True)
    assert repo.hook("session-end", {"session_id": "f1", "reason": "other"}).returncode == 0
    (feature_rid,) = [p.stem for p in repo.candidates()]
    start(repo, "f2")  # not closed: its branch comes from the ledger's session.opened line
    candidate(repo, "f2-000000000001", "f2")
    candidate(repo, "f2-000000000002", "f2", status="superseded")

    on_feature = section(start(repo, "f3"), "## Candidates awaiting review")
    assert on_feature[0].startswith("2 candidates await review on feature, newest first;")
    # newest first: the derived record carries today's date, the synthetic one 2026-01-02
    assert on_feature[1:] == [f"- Feature decision ({feature_rid})", "- A synthetic decision (f2-000000000001)"]

    # what is in the tree counts, wherever it came from: the untracked files stay on checkout
    repo.git("checkout", "-q", "main")
    on_main = section(start(repo, "m1"), "## Candidates awaiting review")
    assert on_main[0].startswith("2 candidates await review on main (2 from branch feature), newest first;")
    assert on_main[1:] == [f"- Feature decision ({feature_rid}; from branch feature)",
                           "- A synthetic decision (f2-000000000001; from branch feature)"]


def test_a_candidate_this_checkout_cannot_place_is_named_unattributed(repo: Repo) -> None:
    candidate(repo, "ghost-00000000000a", "ghost")
    orphan = candidate(repo, "orphan-00000000000b", "x")
    orphan.write_text(orphan.read_text(encoding="utf-8").replace('    - "session:x"\n', '    - "task:t-1"\n'),
                      encoding="utf-8")
    body = section(start(repo), "## Candidates awaiting review")
    assert body[0].startswith("2 candidates await review on main (2 unattributed), newest first;")
    assert body[1:] == [
        "- A synthetic decision (ghost-00000000000a; unattributed: this checkout cannot place its episode ghost)",
        "- A synthetic decision (orphan-00000000000b; unattributed: it names no episode)"]


def test_the_lists_share_the_budget_and_say_what_they_cut(repo: Repo) -> None:
    set_budget(repo, 6)
    ws = workspace(repo)
    from majordomus.evidence import work

    for n in range(10):
        work.question_add(ws, f"question number {n}")
    for n in range(2):
        candidate(repo, f"ghost-{n:012x}", "ghost")
    text = start(repo)
    questions = section(text, "## Open questions")
    candidates = section(text, "## Candidates awaiting review")
    # unattributed candidates are never cut by the budget, and take none of it: the questions get
    # all six lines, their cut line included
    assert candidates[1:] == [f"- A synthetic decision (ghost-{n:012x}; unattributed: this checkout cannot "
                              "place its episode ghost)" for n in range(2)]
    assert len(questions) == 6
    assert questions[-1] == "… 5 more open questions not shown: `majordomus question list` shows them all"
    assert "trimmed to stay under 10,000 characters" not in text

    set_budget(repo, 40)
    assert len(section(start(repo, "e2"), "## Open questions")) == 10


def test_never_over_10000_characters_whatever_the_budget(repo: Repo) -> None:
    set_budget(repo, 100_000)
    ws = workspace(repo)
    from majordomus.evidence import work

    for n in range(200):
        work.question_add(ws, f"question {n}: " + "why is this so long " * 12)
    for n in range(600):
        candidate(repo, f"ghost-{n:012x}", "ghost")
    work.handover(ws, "next " * 5_000)
    text = start(repo)
    assert len(text) <= 10_000
    positions = [text.index(h) for h in HEADINGS if h not in ("## What this repository knows", "## Active task")]
    assert positions == sorted(positions)
    assert re.search(r"^… \d+ more open questions not shown: `majordomus question list` shows them all$",
                     text, re.M)
    assert re.search(r"^… \d+ more unattributed candidates not shown: `majordomus knowledge candidates` "
                     r"shows them all$", text, re.M)
    assert section(text, "## Candidates awaiting review")[0].startswith("600 candidates await review on main")
    handover, note = section(text, "## Last handover")
    assert handover.startswith("Next Action: next next") and len(handover) <= 1_000
    assert handover.endswith(" … (cut: `majordomus context` shows it whole)")
    assert note.startswith("(trimmed to stay under 10,000 characters")
    assert note.endswith("`majordomus context` shows the repository context whole)")


def test_a_compaction_leads_with_the_episodes_own_context(repo: Repo) -> None:
    start(repo)
    sha = repo.commit("halfway", {"h.txt": "h\n"})
    repo.mj("decision", "add", "Compaction keeps the decision in view", check=True)
    pre = repo.hook("pre-compact", {"session_id": "e1", "trigger": "auto"})  # as Claude Code orders them
    assert pre.returncode == 0 and pre.stderr == b"", pre.stderr
    text = start(repo, "e1", source="compact")
    assert text.startswith("# Majordomus briefing: episode e1 (compact)\n")
    lead = text.index("## Working context of episode e1 (open)")
    assert lead < text.index("## Candidates awaiting review")
    assert "### Decisions (1)" in text and "Compaction keeps the decision in view" in text
    assert f"  - {sha[:12]} halfway" in text
    assert "### Checkpoints (1)" in text and ": compaction (auto)" in text
    # the decision is in the working context: its candidate is counted, not listed a second time
    assert section(text, "## Candidates awaiting review") == [
        "1 candidate awaits review on main, newest first; a person promotes or rejects each (`majordomus "
        "knowledge candidates` lists them); 1 of them this episode's own, recorded above"]
    assert text.count("Compaction keeps the decision in view") == 1
    assert ".ai/repo/knowledge/candidates/" not in text  # the derivation's file is not the worker's work


def test_the_start_hook_imports_nothing_heavy(repo: Repo) -> None:
    """The hook path stays fast: no jinja2, jsonschema, doit or YAML once the policy is cached."""
    import json
    import subprocess
    import sys

    start(repo, "warm")  # builds the policy cache from the YAML once
    for source in ("startup", "compact", "resume"):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "majordomus", "hook", "session-start",
                               "--hook-root", str(repo.root)], cwd=repo.root, capture_output=True, text=True,
                              input=json.dumps({"session_id": "e9", "source": source}))
        assert proc.returncode == 0 and "# Majordomus briefing" in proc.stdout
        imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                    if line.startswith("import time:")}
        heavy = {name for name in imported if name.split(".")[0] in ("jinja2", "jsonschema", "doit", "yaml", "git")}
        assert heavy == set(), f"{source}: the start hook imported {sorted(heavy)}"


# --- What this repository knows ------------------------------------------------------------

KNOWS = "## What this repository knows"

def knows(text: str) -> list[str]:
    heading = next(line for line in text.splitlines() if line.startswith(KNOWS))
    return section(text, heading)


def test_the_next_session_reads_what_a_person_verified(repo: Repo) -> None:
    """The loop, closed with the real commands: a decision, its candidate, a person's promotion to
    a constraint, and the next briefing names it."""
    start(repo)
    repo.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings", check=True)
    assert repo.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    (rid,) = [p.stem for p in repo.candidates()]
    repo.mj("knowledge", "promote", rid, "--class", "constraint", input="the parser test fails on a tab\n",
            check=True)
    text = start(repo, "e2")
    assert "## What this repository knows (1 verified record)" in text
    # the reason travels with it: without it the next agent may "fix" what binds
    assert knows(text) == ["- constraint: Tabs are refused in the parser (because two encodings)"]
    assert rid not in text and "no candidate awaits review on main" in text


def test_constraints_first_then_conventions_lessons_facts_newest_first(repo: Repo) -> None:
    curated(repo, "a-fact", "fact", "An old fact", "2026-01-01")
    curated(repo, "b-lesson", "lesson", "A lesson", "2026-03-01")
    curated(repo, "c-convention-old", "convention", "An old convention", "2026-01-01")
    curated(repo, "d-convention-new", "convention", "A new convention", "2026-05-01")
    curated(repo, "e-constraint", "constraint", "A constraint", "2026-01-01")
    curated(repo, "f-fact-new", "fact", "A new fact", "2026-06-01")
    curated(repo, "g-memory", "memory", "A memory", "2026-07-01")
    curated(repo, "h-gone", "constraint", "A superseded constraint", "2026-08-01", status="superseded")
    curated(repo, "i-claimed", "constraint", "A candidate in the wrong folder", status="candidate")
    text = start(repo)
    assert "## What this repository knows (7 verified records)" in text
    assert knows(text) == ["- constraint: A constraint",
                           "- convention: A new convention",
                           "- convention: An old convention",
                           "- lesson: A lesson",
                           "- fact: A new fact",
                           "- fact: An old fact",
                           "- memory: A memory"]
    assert "superseded" not in text.lower() and "wrong folder" not in text


def test_within_a_class_what_the_working_tree_changed_comes_first(repo: Repo) -> None:
    repo.commit("sources", {"src/lexer.py": "x = 1\n", "docs/guide.md": "guide\n"})
    curated(repo, "new-one", "convention", "The newest convention", "2026-09-01")
    curated(repo, "lexer", "convention", "The lexer keeps one encoding", "2026-01-01", relates=("src/lexer.py",))
    curated(repo, "docs", "convention", "Docs are prose", "2026-02-01", relates=("docs",))
    plain = knows(start(repo))
    names = {"The newest convention": "new-one)", "The lexer keeps one encoding": "lexer)", "Docs are prose": "docs)"}
    plain = [names[line.split(": ", 1)[1]] for line in plain]
    assert plain == ["new-one)", "docs)", "lexer)"]  # newest first

    (repo.root / "src/lexer.py").write_text("x = 2\n", encoding="utf-8")  # dirty, not committed
    dirty = [names[line.split(": ", 1)[1]] for line in knows(start(repo, "e2"))]
    assert dirty == ["lexer)", "new-one)", "docs)"]

    repo.git("checkout", "-q", "--", "src/lexer.py")
    (repo.root / "docs/new.md").write_text("new\n", encoding="utf-8")  # an untracked file in a named folder
    untracked = [names[line.split(": ", 1)[1]] for line in knows(start(repo, "e3"))]
    assert untracked == ["docs)", "new-one)", "lexer)"]


def test_within_a_class_what_this_branch_changed_comes_first(tmp_path: Path) -> None:
    repo = published(tmp_path)
    for rid, date, path in (("a-new", "2026-09-01", "lib/a.py"), ("b-old", "2026-01-01", "lib/b.py")):
        curated(repo, rid, "constraint", f"Constraint on {path}", date, relates=(path,))
    repo.git("add", "--", CURATED)
    repo.commit("records", {"lib/a.py": "a\n", "lib/b.py": "b\n"})
    repo.git("push", "-q", "origin", "main")
    assert knows(start(repo)) == ["- constraint: Constraint on lib/a.py", "- constraint: Constraint on lib/b.py"]

    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("touch b", {"lib/b.py": "b2\n"})  # committed on the branch, not on the trunk
    assert repo.git("status", "--porcelain") == ""
    assert knows(start(repo, "f1")) == ["- constraint: Constraint on lib/b.py", "- constraint: Constraint on lib/a.py"]


def test_a_record_edited_by_hand_is_read_whole(repo: Repo) -> None:
    """Outside the form the tools write (a folded title, relations inline) the full reader takes over."""
    (repo.root / CURATED / "folded.md").write_text(
        "---\nid: folded\nkind: knowledge/v1\nclass: constraint\nstatus: verified\nepistemics: decided\n"
        "title: >-\n  A title folded\n  over two lines\ndate: 2026-01-05\nprovenance: {origin: authored, "
        "derived_from: [\"session:e0\"]}\nrelations: [{type: relates_to, target: \"file:src/x.py\"}]\n---\nbody\n",
        encoding="utf-8")
    curated(repo, "newer", "constraint", "A newer constraint", "2026-06-01")
    (repo.root / "src").mkdir()
    (repo.root / "src/x.py").write_text("x\n", encoding="utf-8")  # untracked: the folded record relates to it
    assert knows(start(repo)) == ["- constraint: A title folded over two lines (because body)",
                                  "- constraint: A newer constraint"]


def test_the_records_share_the_budget_and_name_the_command_that_lists_them(repo: Repo) -> None:
    set_budget(repo, 10)
    for n in range(30):
        curated(repo, f"rec-{n:02d}", "convention" if n % 3 else "constraint", f"Record number {n}",
                f"2026-01-{n + 1:02d}")
    from majordomus.evidence import work
    from majordomus.store.workspace import Workspace

    for n in range(20):
        work.question_add(Workspace(repo.root), f"question {n}")
    text = start(repo)
    lines = knows(text)
    assert len(lines) == 5 and len(section(text, "## Open questions")) == 5  # ten lines, shared evenly
    assert lines[:4] == [f"- constraint: Record number {n}" for n in (27, 24, 21, 18)]
    assert lines[-1] == ("… 26 more verified records not shown: "
                         "`majordomus knowledge search --status verified` shows them all")
    listed = json.loads(repo.mj("knowledge", "search", "--status", "verified", "--json", check=True).stdout)
    assert len(listed) == 30 and [h["id"] for h in listed[:4]] == ["rec-27", "rec-24", "rec-21", "rec-18"]


def test_far_under_the_cap_with_a_long_title_500_records_and_20000_ledger_lines(repo: Repo) -> None:
    ledger = repo.root / ".ai/local/ledger.jsonl"
    lines = [json.dumps({"ts": "2026-01-01T00:00:00Z", "event": "decision.recorded", "session": f"old{i // 40}",
                         "task": None, "text": f"synthetic line {i}"}) if i % 40 else
             json.dumps({"ts": "2026-01-01T00:00:00Z", "event": "session.opened", "session": f"old{i // 40}",
                         "episode": f"old{i // 40}", "branch": "main"}) for i in range(20_000)]
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")
    long_title = "A constraint whose title goes on " + "and on " * 700
    curated(repo, "long-title", "constraint", long_title.strip(), "2026-12-31")
    for n in range(399):
        curated(repo, f"rec-{n:03d}", ("constraint", "convention", "lesson", "fact")[n % 4],
                f"Synthetic verified record number {n} with a title of ordinary length", "2026-01-02")
    folder = repo.root / ".ai/repo/knowledge/candidates"
    for n in range(100):
        (folder / f"cand-{n:03d}.md").write_text(
            "---\nid: cand-%03d\nkind: knowledge/v1\nclass: convention\nstatus: candidate\nepistemics: decided\n"
            'title: "Synthetic candidate %d awaiting review"\ndate: "2026-01-03"\nprovenance:\n  origin: extracted\n'
            '  derived_from:\n    - "session:old%d"\n---\nbody\n' % (n, n, n), encoding="utf-8")
    text = start(repo)
    assert len(text) < 7_000, len(text)
    assert "trimmed to stay under" not in text  # the budget alone kept it there: nothing was cut for size
    first = knows(text)[0]
    assert first.startswith("- constraint: A constraint whose title goes on and on") and first.endswith(
        " … (cut)") and len(first) < 200
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert [h.split(" (")[0] for h in headings] == ["## What this repository knows", "## Candidates awaiting review"]
    assert "## What this repository knows (400 verified records)" in text
    assert section(text, "## Candidates awaiting review")[0].startswith("100 candidates await review on main")


def test_statements_not_orders(repo: Repo) -> None:
    """What the briefing says in its own words describes; it does not command (the client warns
    that imperative text in hook output can trip the model's prompt-injection defences)."""
    curated(repo, "one", "constraint", "Tabs are refused in the parser")
    text = start(repo)
    own = [line for line in text.splitlines() if line and not line.startswith("- ")]
    for line in own:
        assert not re.match(r"^(Run|Use|Record|Always|Never|Do|Don't|Remember|Make sure|Please|You|IMPORTANT)\b",
                            line), line
        assert not re.search(r"\b(you must|you should|must always|do not|don't|ignore)\b", line, re.I), line
    assert "`majordomus decision add" in text and "`majordomus finish --verify CMD`" in text


def test_a_handover_is_current_until_later_work_does_what_it_asked(repo: Repo) -> None:
    start(repo)
    repo.mj("handover", "--next", "Extract the max_age check", check=True)
    assert "Next Action: Extract the max_age check (" in start(repo, "e2")
    repo.mj("start", "Extract the max_age check", check=True)
    repo.mj("finish", "--outcome", "blocked", "--reason", "the store is shared", check=True)
    assert "Next Action: Extract the max_age check (" in start(repo, "e3")  # blocked: not done
    repo.mj("start", "extract the max_age check.", check=True)
    repo.mj("finish", "--outcome", "completed", check=True)
    text = start(repo, "e4")
    assert "Next Action" not in text and "no handover to act on" in text
    repo.mj("handover", "--next", "Write the changelog", check=True)  # a newer handover is current again
    assert "Next Action: Write the changelog (" in start(repo, "e5")


def test_a_failed_verification_is_said_on_the_active_task(repo: Repo) -> None:
    start(repo)
    repo.mj("start", "Make it pass", "--scope", "src", check=True)
    assert repo.mj("finish", "--verify", "exit 3").returncode == 4
    (line,) = section(start(repo, "e2"), "## Active task")
    assert re.fullmatch(r"Make it pass \(scope src\); its last verification failed: `exit 3` exited 3 at \S+Z", line)


def test_the_queue_counted_from_the_index_is_the_queue_of_the_files(repo: Repo, monkeypatch) -> None:  # noqa: ANN001
    """The briefing's queue counts, places and orders its entries from the index's columns and reads
    the front matter of those it shows: its section is the one composed from the files (the index
    unusable), whatever the entries (placed on another branch, unattributed, naming no episode,
    superseded, reviewed beside a curated record, unreadable, evidence times tied, a cut)."""
    from majordomus.store import index as store_index

    set_budget(repo, 8)
    repo.git("checkout", "-q", "-b", "feature")
    start(repo, "f1")
    repo.mj("decision", "add", "Feature decision", check=True)
    assert repo.hook("session-end", {"session_id": "f1", "reason": "other"}).returncode == 0
    repo.git("checkout", "-q", "main")
    start(repo, "m1")
    for n in range(6):
        candidate(repo, f"m1-00000000000{n}", "m1")  # the same date: ordered by id
    candidate(repo, "f1-000000000009", "f1")
    candidate(repo, "ghost-00000000000a", "ghost")
    orphan = candidate(repo, "orphan-00000000000b", "x")
    orphan.write_text(orphan.read_text(encoding="utf-8").replace('    - "session:x"\n', '    - "task:t-1"\n'),
                      encoding="utf-8")
    candidate(repo, "old-00000000000c", "m1", status="superseded")
    candidate(repo, "kept-00000000000d", "m1")
    curated(repo, "kept-00000000000d", "convention", "Kept")  # reviewed: in no queue
    (repo.root / ".ai/repo/knowledge/candidates/bad-00000000000e.md").write_text("no front matter\n")
    with_index = start(repo, "m2")
    assert section(with_index, "## Candidates awaiting review")[0].startswith(
        "10 candidates await review on main (6 from this branch, 2 from branch feature, 2 unattributed)")
    store_index.Index.close(store_index.of(workspace(repo)))
    monkeypatch.setattr(store_index.Index, "db", lambda self: None)
    from majordomus.context import briefing

    def shown(episode: str, compacted: bool) -> list[tuple[object, ...]]:
        return [(b.heading, b.lines, list(b.items))
                for b in briefing._candidates(workspace(repo), "main", None, episode, compacted)]

    files = [shown("m2", False), shown("m1", True)]
    monkeypatch.undo()
    assert [shown("m2", False), shown("m1", True)] == files
    assert len(files[0][0][2]) == 8 and len(files[0][1][2]) == 2 and len(files[1][0][2]) == 2
