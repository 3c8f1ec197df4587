"""The start briefing: each section, the shared budget, the unattributed line, the ceiling."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import Repo

HEADINGS = ["## Active task", "## Open questions", "## Candidates awaiting review on this branch",
            "## Last handover"]

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
    assert text.startswith("# Majordomus briefing: episode e1 (startup)\n")
    positions = [text.index(h) for h in HEADINGS]
    assert positions == sorted(positions)
    assert section(text, "## Active task") == ["none: `majordomus start \"TITLE\"` starts one"]
    assert section(text, "## Open questions") == ["none: `majordomus question add \"TEXT\"` asks one"]
    assert section(text, "## Candidates awaiting review") == ["none await review on main"]
    assert section(text, "## Last handover") == ["none: `majordomus handover --next \"…\"` records one"]
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
    assert section(text, "## Active task") == [f"{task}: Teach the parser tabs (scope src)"]
    assert section(text, "## Open questions") == [f"- {qid}: Are tabs ever legal?"]
    assert section(text, "## Candidates awaiting review") == [
        "1 candidate awaits review on main: `majordomus knowledge candidates` lists them with their titles",
        f"- {rid}"]
    (handover,) = section(text, "## Last handover")
    assert re.fullmatch(r"Next Action: write the tab test \(\S+Z, episode e1\)", handover)


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
    assert on_feature[0].startswith("2 candidates await review on feature:")
    assert on_feature[1:] == [f"- {feature_rid}", "- f2-000000000001"]

    repo.git("checkout", "-q", "main")
    assert section(start(repo, "m1"), "## Candidates awaiting review") == ["none await review on main"]


def test_a_candidate_this_checkout_cannot_place_is_named_unattributed(repo: Repo) -> None:
    candidate(repo, "ghost-00000000000a", "ghost")
    orphan = candidate(repo, "orphan-00000000000b", "x")
    orphan.write_text(orphan.read_text(encoding="utf-8").replace('    - "session:x"\n', '    - "task:t-1"\n'),
                      encoding="utf-8")
    body = section(start(repo), "## Candidates awaiting review")
    assert body[0].startswith("2 candidates await review on main (2 unattributed):")
    assert body[1:] == ["- ghost-00000000000a (unattributed: this checkout cannot place its episode ghost)",
                        "- orphan-00000000000b (unattributed: it names no episode)"]


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
    # two candidates need two lines; the questions get the other four, their cut line included
    assert candidates[1:] == [f"- ghost-{n:012x} (unattributed: this checkout cannot place its episode ghost)"
                              for n in range(2)]
    assert len(questions) == 4
    assert questions[-1] == "… 7 more open questions not shown: `majordomus question list` shows them all"
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
    positions = [text.index(h) for h in HEADINGS]
    assert positions == sorted(positions)
    assert re.search(r"^… \d+ more open questions not shown: `majordomus question list` shows them all$",
                     text, re.M)
    assert re.search(r"^… \d+ more candidates not shown: `majordomus knowledge candidates` shows them all$",
                     text, re.M)
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
    assert lead < text.index("## Active task")
    assert "### Decisions (1)" in text and "Compaction keeps the decision in view" in text
    assert f"  - {sha[:12]} halfway" in text
    assert "### Checkpoints (1)" in text and ": compaction (auto)" in text
    assert section(text, "## Candidates awaiting review")[0].startswith("1 candidate awaits review on main")


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
        assert proc.returncode == 0 and "## Active task" in proc.stdout
        imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                    if line.startswith("import time:")}
        heavy = {name for name in imported if name.split(".")[0] in ("jinja2", "jsonschema", "doit", "yaml", "git")}
        assert heavy == set(), f"{source}: the start hook imported {sorted(heavy)}"
