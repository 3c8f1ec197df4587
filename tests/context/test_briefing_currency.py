"""The start briefing says which verified records may be stale: current ones first, then the
stale and disputed ones, marked, each with what changed and the command that re-verifies it;
never dropped for being stale, and within the line budget (a cut names `knowledge stale`)."""
from __future__ import annotations

from conftest import Repo
from kbstore import anchored

from majordomus.store.workspace import Workspace

KNOWS = "## What this repository knows"


def start(repo: Repo, episode: str = "e1") -> str:
    proc = repo.hook("session-start", {"session_id": episode, "source": "startup"})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout.decode("utf-8")


def knows(text: str) -> list[str]:
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(KNOWS))
    out = []
    for line in lines[at + 1:]:
        if line.startswith("#"):
            break
        if line:
            out.append(line)
    return [lines[at], *out]


def test_stale_records_come_last_marked_with_what_changed_and_the_fix(repo: Repo) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n", "src/b.py": "b = 1\n"})
    anchored(repo, "r-stale", ("src/a.py",), at, title="A is one", cls="constraint")
    anchored(repo, "r-fine", ("src/b.py",), at, title="B is one", cls="fact")
    anchored(repo, "r-gone", ("src/b.py",), "e" * 40, title="Verified elsewhere", cls="fact")
    anchored(repo, "r-disputed", ("src/b.py",), at, title="B is tested", cls="fact")
    Workspace(repo.root).ledger.append("knowledge.disputed", None, id="r-disputed", reason="no test exists",
                                       by="agent-1")
    newest = repo.commit("a is two", {"src/a.py": "a = 2\n"})
    text = start(repo)
    assert knows(text) == [
        "## What this repository knows (4 verified records, 2 of them may be stale or disputed, listed last)",
        "An unmarked record is current: none of the files it is about changed since a person verified it. "
        'Those marked "may be stale" or "disputed" follow, each with what changed and the command that '
        "re-verifies it.",
        "- fact: B is one",
        "- fact: Verified elsewhere (currency unknown: verified at eeeeeee, which this clone does not "
        "have (rebased away or a shallow clone))",
        f"- constraint: A is one — may be stale: src/a.py modified in 1 commit since "
        f'{at[:7]}, the newest {newest[:7]} "a is two"; re-verify: `majordomus knowledge reverify r-stale < evidence`',
        next(line for line in knows(text) if line.startswith("- fact: B is tested — "
                                                                  "disputed by agent-1 at ")),
    ]
    assert "no test exists (and current: none of its 1 anchored file changed" in knows(text)[-1]


def test_a_budget_cut_names_the_command_that_lists_the_stale_ones(repo: Repo) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    for n in range(30):
        anchored(repo, f"r-{n:02d}", ("src/a.py",), at, title=f"Record {n}")
    repo.commit("a is two", {"src/a.py": "a = 2\n"})
    (repo.root / ".ai/repo/policy.yaml").write_text(
        (repo.root / ".ai/repo/policy.yaml").read_text().replace("briefing_budget_lines: ", "briefing_budget_lines: 8 #"))
    section = knows(start(repo))
    assert section[0].startswith("## What this repository knows (30 verified records, 30 of them may be stale")
    assert section[-1].startswith("… ") and section[-1].endswith(
        "more records that may be stale or are disputed not shown: `majordomus knowledge stale` shows them all")


def test_a_disputed_record_without_anchors_is_marked_too(repo: Repo) -> None:
    from kbstore import curated

    curated(repo, "old-one", "fact", "Verified before anchors existed")
    Workspace(repo.root).ledger.append("knowledge.disputed", None, id="old-one", reason="it is not", by="agent-2")
    section = knows(start(repo))
    assert section[0] == "## What this repository knows (1 verified record, 1 of them may be stale or disputed, listed last)"
    assert section[-1].startswith("- fact: Verified before anchors existed — disputed by agent-2 at ")
    assert section[-1].endswith(": it is not (and current (no anchored files)); re-verify: "
                                "`majordomus knowledge reverify old-one < evidence`")
