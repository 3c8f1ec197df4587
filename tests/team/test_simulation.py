"""A small team through one bare remote (issue 27): three clones, concurrent reviews, a rebase, an
amend, a squash merge, an episode resumed on another branch, an orphan, work never merged. The
figures `make bench`'s bigger run prints (benchmarks/teamsim.py) are asserted here."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import teamsim  # noqa: E402


def test_a_team_merges_without_a_person_and_every_clone_agrees(tmp_path: Path) -> None:
    team = teamsim.Team(tmp_path, clones=3, seed=11)
    ada, bob, cy = team.clones
    team.episode(ada, how="merge")
    team.episode(bob, how="squash", amend=True)
    team.episode(cy, how="rebase")
    team.episode(ada, how="orphan")
    team.episode(bob, how="wip")
    team.episode(cy, how="merge", amend=True)
    for c in team.clones:
        c.git("checkout", "-q", "main")
        c.sync(team.rng)
    queue = [i for i in teamsim.json.loads(ada.mj("knowledge", "candidates", "--json").stdout)]
    assert len(queue) >= 3
    first, second = sorted(i["id"] for i in queue)[:2]
    # two people review the same candidates before either has pulled the other's act
    team.review(ada, first, "promote", push=False)
    team.review(bob, first, "reject", push=False)
    team.review(cy, first, "promote", push=False)
    team.review(ada, second, "reject", push=False)
    team.review(bob, second, "reject", push=False)
    team.resume_elsewhere()
    team.episode(cy, how="merge")
    for c in team.clones:
        c.git("checkout", "-q", "main")
        c.push_main(team.rng)
    for c in team.clones:
        c.sync(team.rng)

    result = teamsim.verdict(team)
    print("\n".join(team.figures.conflict_lines))
    assert result["failures"] == [] and result["failure_count"] == 0
    assert result["conflicts_in_ai"] == 0, (result["conflicted_paths"], result["conflict_lines"])
    assert result["conflicts_elsewhere"] == 0
    assert result["doctor_exits"] == [0], result["doctor_nonzero"]
    assert result["check_blocking"] == 0
    assert result["ids_in_both_queues"] == []
    assert result["ai_repo_trees"] == 1  # the same .ai/repo on every clone and on a fresh clone
    # the concurrent reviews are all kept: three acts on the first, two on the second
    text = (ada.root / ".ai/repo/knowledge/curated" / f"{first}.md").read_text()
    assert text.count("  - act: ") == 3 and "status: candidate" in text  # promote, reject: a person's
    second_text = (ada.root / ".ai/repo/knowledge/curated" / f"{second}.md").read_text()
    assert second_text.count("  - act: rejected") == 2 and "status: superseded" in second_text
