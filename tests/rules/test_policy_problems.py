"""A broken policy costs what is broken, no more: real hooks on a real repository whose
`policy.yaml` has a typo, a bad value, or is not YAML at all. The briefing keeps its knowledge,
task, questions and queue and says in one line what is wrong; the end hook derives; `doctor`
blocks (exit 10) with the fix; a command says so on stderr and goes on."""
from __future__ import annotations

import json

import pytest
from conftest import Repo
from kbstore import curated

BROKEN = {
    "typo": ("session:\n  knowledge_on_ned: \"on\"\n  briefing_budget_lines: 40\n",
             "Policy: .ai/repo/policy.yaml has 1 bad key (session.knowledge_on_ned): its default stands in; "
             "`majordomus doctor` names the fix.",
             "did you mean session.knowledge_on_end? rename or remove it"),
    "value": ("session:\n  knowledge_on_end: maybe\n",
              "Policy: .ai/repo/policy.yaml has 1 bad key (session.knowledge_on_end): its default stands in; "
              "`majordomus doctor` names the fix.",
              "set it to \"on\" (the default) or remove the line"),
    "yaml": ("session:\n  knowledge_on_end: \"on\"\n   briefing: [\n",
             "Policy: .ai/repo/policy.yaml:3: did not find expected key (not valid YAML): every policy key has "
             "its default; `majordomus doctor` names the fix.",
             "fix that line; `git diff -- .ai/repo/policy.yaml` shows the edit, "
             "`git checkout -- .ai/repo/policy.yaml` restores the committed file"),
}


def _setup(repo: Repo) -> None:
    """A branch with a verified record, a candidate from a closed episode, an active task and an
    open question: everything a briefing lists."""
    repo.git("checkout", "-q", "-b", "work")
    curated(repo, "v-0000000000a1", "constraint", "Never write outside the repository")
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    repo.mj("decision", "add", "Keep the ledger append-only", "--why", "readers trust it", check=True)
    assert repo.hook("session-end", {"session_id": "e1", "reason": "exit"}).returncode == 0
    assert len(repo.candidates()) == 1
    repo.mj("start", "Wire the parser", check=True)
    repo.mj("question", "add", "Which parser?", check=True)


@pytest.mark.parametrize("broken", list(BROKEN))
def test_hooks_brief_and_derive_through_a_broken_policy(repo: Repo, broken: str) -> None:
    _setup(repo)
    text, said, fix = BROKEN[broken]
    (repo.root / ".ai/repo/policy.yaml").write_text(text, encoding="utf-8")

    start = repo.hook("session-start", {"session_id": "e2", "source": "startup"})
    assert start.returncode == 0 and start.stderr == b"", start.stderr
    briefing = start.stdout.decode("utf-8")
    assert said in briefing.splitlines(), briefing
    assert [line for line in briefing.splitlines() if line.startswith("Policy:")] == [said]
    assert "- constraint: Never write outside the repository" in briefing  # its reason may follow
    assert "Wire the parser" in briefing and "Which parser?" in briefing
    assert f"({repo.candidates()[0].stem})" in briefing
    assert "could not be composed" not in briefing

    repo.mj("decision", "add", "Parse with the C loader", "--why", "it is faster", check=True)
    end = repo.hook("session-end", {"session_id": "e2", "reason": "exit"})
    assert end.returncode == 0 and end.stderr == b"", end.stderr
    assert repo.events("provider.event.failed") == []
    derived = [line for line in repo.events("knowledge.derived") if line["episode"] == "e2"]
    assert len(derived) == 1 and derived[0]["written"] == 1, derived
    assert (repo.root / ".ai/repo/sessions/e2.md").is_file()

    doctor = repo.mj("doctor")
    assert doctor.returncode == 10, doctor.stdout + doctor.stderr
    lines = doctor.stdout.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith("ERROR majordomus.policy: .ai/repo/policy.yaml")]
    assert len(at) == 1, doctor.stdout
    finding = lines[at[0]:at[0] + 3]
    assert finding[1].startswith("  reproduce: ") and finding[2].startswith(f"  fix: {fix}"), finding
    assert "majordomus init" not in "\n".join(finding)  # init lays only what is missing
    assert "warning" not in doctor.stderr  # doctor says it as a finding, not twice
    data = json.loads(repo.mj("doctor", "--json").stdout)
    assert [f["field"] for f in data["findings"] if f["rule"] == "majordomus.policy" and f["blocking"]] \
        == [None if broken == "yaml" else "session.knowledge_on_" + ("ned" if broken == "typo" else "end")]

    # a command that reads the policy goes on, and says why on stderr, in one line
    ctx = repo.mj("context")
    assert ctx.returncode == 0
    assert ctx.stderr == f"majordomus: warning: {said.removeprefix('Policy: ').rstrip('.')}\n"


def test_the_cache_keeps_the_problems_and_a_fix_clears_them(repo: Repo) -> None:
    policy = repo.root / ".ai/repo/policy.yaml"
    good = policy.read_text(encoding="utf-8")
    policy.write_text(good.replace("knowledge_on_end", "knowledge_on_ned"), encoding="utf-8")
    first = repo.mj("context", "--json")
    cache = json.loads((repo.root / ".ai/local/state/policy.cache.json").read_text(encoding="utf-8"))
    assert [key for key, _ in cache["problems"]] == ["session.knowledge_on_ned"]
    again = repo.mj("context", "--json")  # answered from the cache: the same problems
    assert json.loads(again.stdout)["policy"] == json.loads(first.stdout)["policy"]
    assert json.loads(again.stdout)["policy"]["problems"][0]["key"] == "session.knowledge_on_ned"
    assert again.stderr == first.stderr != ""
    policy.write_text(good, encoding="utf-8")
    fixed = repo.mj("context", "--json")
    assert fixed.stderr == "" and json.loads(fixed.stdout)["policy"]["problems"] == []
    assert "majordomus.policy" not in repo.mj("doctor").stdout
