"""`majordomus context`: the repository context, the one definition of it."""
from __future__ import annotations

import json
import re

from conftest import Repo
from test_briefing import candidate, section


def test_a_fresh_repository_says_what_is_absent(repo: Repo) -> None:
    text = repo.mj("context", check=True).stdout
    assert text.startswith("# Repository context\n")
    assert "- session.briefing_budget_lines: 40\n" in text
    assert section(text, "## Rules in effect") == [
        "- majordomus.agents-fired (vendor, advisory; from doctor)",
        "- majordomus.candidates-reviewed (vendor, advisory; from doctor)",
        "- majordomus.knowledge-integrity (vendor, blocking; from check, doctor)",
        "- majordomus.knowledge-observed (vendor, blocking; from doctor, watch)",
        "- majordomus.knowledge-stale (vendor, advisory; from doctor, watch)"]
    assert section(text, "## Knowledge by status") == ["- candidates/: none", "- curated/: none"]
    assert section(text, "## Active task") == ["none: `majordomus start \"TITLE\"` starts one"]
    assert section(text, "## Open questions") == ["none: `majordomus question add \"TEXT\"` asks one"]
    assert section(text, "## Last handover") == ["none: `majordomus handover --next \"…\"` records one"]
    assert section(text, "## Outbox") == ["empty (.ai/local/state/outbox/ holds nothing)"]
    assert section(text, "## Episode") == ["none open: `majordomus session start` opens one"]


def test_every_part_of_the_repository_context(episode: Repo) -> None:
    root = episode.root
    policy = root / ".ai/repo/policy.yaml"
    text = policy.read_text(encoding="utf-8")
    text = re.sub(r"briefing_budget_lines: \d+", "briefing_budget_lines: 12", text)
    policy.write_text(text.split("ledger:")[0], encoding="utf-8")
    (root / ".ai/repo/rules/vendor/majordomus.knowledge-observed.yaml").unlink()
    (root / ".ai/repo/rules/project/project.local.yaml").write_text(
        "id: project.local\nclass: advisory\nvalidator: knowledge_accumulation\ndispatch: [doctor]\n"
        "category: knowledge\nexit: 11\nmessage: a project rule\n", encoding="utf-8")
    (root / ".ai/repo/rules/project/broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    episode.mj("decision", "add", "One decision", check=True)
    episode.mj("knowledge", "derive", check=True)
    candidate(episode, "e1-00000000000f", "e1", status="superseded")
    curated = root / ".ai/repo/knowledge/curated/e0-000000000001.md"
    curated.write_text(candidate(episode, "tmp", "e0").read_text(encoding="utf-8")
                       .replace("status: candidate", "status: verified"), encoding="utf-8")
    (root / ".ai/repo/knowledge/candidates/tmp.md").unlink()
    task = episode.mj("start", "Context task", check=True).stdout.strip()
    qid = episode.mj("question", "add", "Is it resolved now?", check=True).stdout.strip()
    episode.mj("handover", "--next", "read the context", check=True)
    for part, names in (("sessions", ["s1"]), ("candidates", ["c1", "c2"])):
        for name in names:
            (root / f".ai/local/state/outbox/{part}/{name}.md").write_text("x\n", encoding="utf-8")

    text = episode.mj("context", check=True).stdout
    assert "- session.briefing_budget_lines: 12\n" in text
    assert "- ledger.retention_lines: 50000 (default: the file does not declare it)\n" in text
    rules = section(text, "## Rules in effect")
    assert rules[:5] == ["- majordomus.agents-fired (vendor, advisory; from doctor)",
                         "- majordomus.candidates-reviewed (vendor, advisory; from doctor)",
                         "- majordomus.knowledge-integrity (vendor, blocking; from check, doctor)",
                         "- majordomus.knowledge-stale (vendor, advisory; from doctor, watch)",
                         "- project.local (project, advisory; from doctor)"]
    assert rules[5].startswith("- not in effect: .ai/repo/rules/project/broken.yaml: rule file unreadable")
    assert len(rules) == 6
    assert section(text, "## Knowledge by status") == ["- candidates/: 1 candidate, 1 superseded",
                                                       "- curated/: 1 verified"]
    assert section(text, "## Active task") == [f"{task}: Context task"]
    assert section(text, "## Open questions") == [f"- {qid}: Is it resolved now?"]
    (handover,) = section(text, "## Last handover")
    assert handover.startswith("Next Action: read the context (") and handover.endswith(", episode e1)")
    assert section(text, "## Outbox") == [
        "1 session record(s) and 2 candidate(s) wait in .ai/local/state/outbox/: the next episode boundary "
        "on a branch moves them into the tracked sections (`majordomus drain`)"]
    assert section(text, "## Episode") == ["open: e1; this shell's is e1"]

    data = json.loads(episode.mj("context", "--json", check=True).stdout)
    assert data["policy"]["values"]["session.briefing_budget_lines"] == {"value": 12, "declared": True}
    assert data["policy"]["values"]["ledger.retention_lines"]["declared"] is False
    assert [(r["id"], r["origin"], r["class"]) for r in data["rules"]] == [
        ("majordomus.agents-fired", "vendor", "advisory"),
        ("majordomus.candidates-reviewed", "vendor", "advisory"),
        ("majordomus.knowledge-integrity", "vendor", "blocking"), ("majordomus.knowledge-stale", "vendor", "advisory"),
        ("project.local", "project", "advisory")]
    assert [p["file"] for p in data["rule_problems"]] == [".ai/repo/rules/project/broken.yaml"]
    assert data["knowledge"] == {"candidates": {"candidate": 1, "superseded": 1}, "curated": {"verified": 1}}
    assert data["active_task"]["task"] == task
    assert [q["question"] for q in data["open_questions"]] == [qid]
    assert data["last_handover"]["next"] == "read the context"
    assert data["outbox"] == {"where": ".ai/local/state/outbox", "total": 3, "sessions": 1, "candidates": 2,
                              "paths": [".ai/local/state/outbox/sessions/s1.md",
                                        ".ai/local/state/outbox/candidates/c1.md",
                                        ".ai/local/state/outbox/candidates/c2.md"],
                              "conflicts": []}


def test_not_initialised(bare_repo: Repo) -> None:
    proc = bare_repo.mj("context")
    assert proc.returncode == 5 and "majordomus init" in proc.stderr


def test_the_policy_cache_never_serves_a_changed_policy(repo: Repo) -> None:
    policy = repo.root / ".ai/repo/policy.yaml"
    original = policy.read_text(encoding="utf-8")
    assert "- session.briefing_budget_lines: 40\n" in repo.mj("context", check=True).stdout
    assert (repo.root / ".ai/local/state/policy.cache.json").is_file()
    policy.write_text(original.replace("briefing_budget_lines: 40", "briefing_budget_lines: many"),
                      encoding="utf-8")
    broken = repo.mj("context")  # the bad value costs that key only: its default, and a warning
    assert broken.returncode == 0 and "session.briefing_budget_lines" in broken.stderr
    assert ("- session.briefing_budget_lines: 40 (default: the file's value is refused, `majordomus doctor` "
            "says why)\n") in broken.stdout
    policy.write_text(original.replace("briefing_budget_lines: 40", "briefing_budget_lines: 7"),
                      encoding="utf-8")
    assert "- session.briefing_budget_lines: 7\n" in repo.mj("context", check=True).stdout
