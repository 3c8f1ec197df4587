"""`majordomus session context`: the working context composed at read time (seed 004)."""
from __future__ import annotations

import json
import re

from conftest import Repo
from lifecycle import end, start

# section heading -> the command its empty line must name
FILLERS = {"Checkpoints": "majordomus checkpoint", "Decisions": "majordomus decision add",
           "Questions": "majordomus question add", "Tasks": "majordomus start"}


def sections(text: str) -> dict[str, list[str]]:
    """The `## ` sections of a context, heading (without its count) -> its lines."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = re.sub(r" \(.*\)$", "", line[3:])
            found[current] = []
        elif current is not None and line.strip():
            found[current].append(line)
    return found


def refuse_bad_context(text: str) -> None:
    """Seed 004's refusals: a bare path, a `## Notes` template, an empty section that does not
    name the command that fills it."""
    assert not re.fullmatch(r"\s*\S+\.md\s*", text), f"a bare path, not a context: {text!r}"
    assert len(text.splitlines()) > 10
    assert "## Notes" not in text and "Notes" not in sections(text)
    parts = sections(text)
    for heading, command in FILLERS.items():
        assert heading in parts, f"no {heading} section in:\n{text}"
        body = parts[heading]
        if any(line.startswith("no ") for line in body):
            assert len(body) == 1 and f"`{command}" in body[0], f"{heading} is empty and names no command: {body}"


def test_seed_004_the_context_is_derived(episode: Repo) -> None:
    first = episode.mj("session", "context", check=True).stdout
    refuse_bad_context(first)
    assert sections(first)["Decisions"] == [
        "no decision recorded in this episode: `majordomus decision add \"TEXT\" --why \"…\"` records one"]
    assert "- commits since the open: 0" in first

    sha = episode.commit("parser: refuse tabs", {"src/parser.py": "TABS = False\n"})
    episode.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings of one thing",
               check=True)
    second = episode.mj("session", "context", check=True).stdout
    refuse_bad_context(second)
    assert second != first, "the context did not change after a commit and a decision"
    parts = sections(second)
    assert parts["Decisions"][0].endswith(": Tabs are refused in the parser (why: two encodings of one thing)")
    assert f"  - {sha[:12]} parser: refuse tabs" in second
    assert "- commits since the open: 1" in second and "  - src/parser.py" in second
    assert [line for line in parts["Checkpoints"]] == [
        "no checkpoint recorded in this episode: `majordomus checkpoint --note \"…\"` records one"]

    path = episode.mj("session", "context", "--path", check=True).stdout
    assert re.fullmatch(r"\.ai/local/session-contexts/\d{8}T\d{6}Z--e1\.md\n", path)
    snapshot = (episode.root / path.strip()).read_text(encoding="utf-8")
    assert "## Notes" not in snapshot and "Tabs are refused" not in snapshot
    assert path.strip() not in second, "the bare command printed the snapshot's path"


def test_the_snapshot_is_frozen_and_the_context_is_not(episode: Repo) -> None:
    path = episode.root / episode.mj("session", "context", "--path", check=True).stdout.strip()
    before = path.read_bytes()
    episode.mj("start", "a task", check=True)
    episode.mj("question", "add", "Which encoding?", check=True)
    episode.mj("checkpoint", "--note", "half way", check=True)
    text = episode.mj("session", "context", check=True).stdout
    assert path.read_bytes() == before
    parts = sections(text)
    assert re.fullmatch(r"- t-[0-9a-f]{8} \(active\): a task", parts["Tasks"][0])
    assert re.fullmatch(r"- q-[0-9a-f]{8} \(open\) \[task t-[0-9a-f]{8}\]: Which encoding\?", parts["Questions"][0])
    assert parts["Checkpoints"][0].endswith(": half way")
    assert "- working tree: clean" in text or "- working tree: dirty" in text


def test_json_carries_the_same_content(episode: Repo) -> None:
    episode.commit("one", {"a.txt": "a\n"})
    episode.mj("decision", "add", "Use UTF-8", check=True)
    data = json.loads(episode.mj("session", "context", "--json", check=True).stdout)
    assert data["episode"] == "e1" and data["state"] == "open"
    assert data["opened"]["source"] == "startup" and data["opened"]["by"] == "hook"
    assert data["opened"]["head"] == episode.git("rev-parse", "HEAD~1").strip()
    assert data["git"]["head"] == episode.git("rev-parse", "HEAD").strip()
    assert data["git"]["branch"] == "main"
    assert [c["subject"] for c in data["git"]["commits"]] == ["one"]
    assert data["git"]["files"] == ["a.txt"]
    assert [d["text"] for d in data["decisions"]] == ["Use UTF-8"]
    assert data["empty"] == {"checkpoints": "majordomus checkpoint", "questions": "majordomus question add",
                             "tasks": "majordomus start"}
    assert data["repository_context"] == "majordomus context"
    assert "path" not in data and "snapshot" not in data


def test_no_open_episode_is_one_line_and_exit_3(repo: Repo) -> None:
    proc = repo.mj("session", "context")
    assert proc.returncode == 3 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert "no open episode" in proc.stderr and "majordomus session start" in proc.stderr
    assert "--episode" in proc.stderr
    assert repo.mj("session", "context", "--path").returncode == 3


def test_a_closed_episode_is_composed_from_its_window(episode: Repo) -> None:
    opened_at = episode.git("rev-parse", "HEAD").strip()
    sha = episode.commit("inside", {"b.txt": "b\n"})
    episode.mj("decision", "add", "Closed episodes are readable", check=True)
    end = episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0, end.stderr
    episode.commit("after the close", {"c.txt": "c\n"})

    assert episode.mj("session", "context").returncode == 3
    text = episode.mj("session", "context", "--episode", "e1", check=True).stdout
    assert text.startswith("# Working context of episode e1 (closed)\n")
    assert f"on main at {opened_at[:12]}" in text and f"on main at {sha[:12]}" in text
    assert "- commits since the open: 1" in text and "after the close" not in text
    assert "- working tree:" not in text  # the tree at the close is not known; nothing is made up
    assert "Closed episodes are readable" in text
    data = json.loads(episode.mj("session", "context", "--episode", "e1", "--json", check=True).stdout)
    assert data["state"] == "closed" and data["closed"]["head"] == sha and data["git"]["dirty"] is None
    assert episode.mj("session", "context", "--episode", "e1", "--path", check=True).stdout.endswith("--e1.md\n")


def test_unknown_and_bad_episode_ids(repo: Repo) -> None:
    unknown = repo.mj("session", "context", "--episode", "ghost")
    assert unknown.returncode == 3 and "ghost" in unknown.stderr
    bad = repo.mj("session", "context", "--episode", "../etc")
    assert bad.returncode == 4


def test_it_refers_to_the_repository_context_and_does_not_resolve_it(episode: Repo) -> None:
    episode.mj("handover", "--next", "write the parser", check=True)
    text = episode.mj("session", "context", check=True).stdout
    assert "`majordomus context`" in text
    assert "write the parser" not in text and "briefing_budget_lines" not in text


def test_the_refusals_refuse_what_seed_004_describes(episode: Repo) -> None:
    import pytest

    good = episode.mj("session", "context", check=True).stdout
    old_path = ".ai/local/session-contexts/20260102T030405Z--e1.md\n"
    notes = good + "\n## Notes\n\n(edit me)\n"
    silent = good.replace("`majordomus checkpoint --note \"…\"` records one", "nothing")
    for bad in (old_path, notes, silent):
        with pytest.raises(AssertionError):
            refuse_bad_context(bad)


# The working context covers the whole episode: every span, and what each span recorded.
def test_a_resumed_episode_is_composed_whole(repo: Repo) -> None:
    start(repo, "e1")
    repo.mj("decision", "add", "From the first span", check=True)
    first_head = repo.git("rev-parse", "HEAD").strip()
    end(repo, "e1")
    sha = repo.commit("between the spans")
    start(repo, "e1", "resume")
    repo.mj("decision", "add", "From the second span", check=True)

    data = json.loads(repo.mj("session", "context", "--json", check=True).stdout)
    assert data["state"] == "open"
    assert [d["text"] for d in data["decisions"]] == ["From the first span", "From the second span"]
    assert [(s["span"], s["source"], s["closed"] is not None) for s in data["spans"]] == \
        [(1, "startup", True), (2, "resume", False)]
    assert data["opened"]["source"] == "startup" and data["opened"]["head"] == first_head
    assert [c["sha"] for c in data["git"]["commits"]] == [sha]  # git since the episode's first open

    text = repo.mj("session", "context", check=True).stdout
    assert "- first opened " in text and "  - span 1: opened " in text and "  - span 2: opened " in text
    assert "(resume)" in text and ", open" in text

    end(repo, "e1")
    data = json.loads(repo.mj("session", "context", "--episode", "e1", "--json", check=True).stdout)
    assert data["state"] == "closed" and len(data["spans"]) == 2 and data["spans"][1]["closed"]["reason"] == "other"
    assert len(data["decisions"]) == 2
