"""The terminal review's second queue (issues 26 and 29): after the candidates, the verified records
that may be stale or are disputed, with what changed; one key re-verifies or retires each. A real
pseudo-terminal, a real repository, the real acts."""
from __future__ import annotations

import json
import os

import pexpect

from conftest import MAJORDOMUS, Repo

CURATED = ".ai/repo/knowledge/curated"


def _verified(repo: Repo, text: str, about: str) -> str:
    repo.mj("decision", "add", text, "--why", "the parser's callers rely on it", "--about", about, check=True)
    before = {p.name for p in repo.candidates()}
    repo.mj("knowledge", "derive", check=True)
    (new,) = [p for p in repo.candidates() if p.name not in before]
    repo.mj("knowledge", "promote", new.stem, input="read the parser\n", check=True)
    return new.stem


def test_stale_and_disputed_records_are_walked_after_the_candidates(episode: Repo) -> None:
    episode.commit("the parser", {"src/parser.py": "x = 1\n", "src/lexer.py": "y = 1\n"})
    stale = _verified(episode, "Tabs are refused in the parser", "src/parser.py")
    disputed = _verified(episode, "The lexer keeps no state", "src/lexer.py")
    episode.git("add", "-A")
    episode.commit("records")
    episode.commit("parser accepts tabs", {"src/parser.py": "x = 2\n"})
    episode.mj("knowledge", "dispute", disputed, "--reason", "the lexer caches its tables now", check=True)
    listed = {r["id"] for r in json.loads(episode.mj("knowledge", "stale", "--json", check=True).stdout)}
    assert stale in listed

    env = dict(os.environ, TERM="xterm")
    child = pexpect.spawn(MAJORDOMUS, ["knowledge", "review"], cwd=str(episode.root), env=env, encoding="utf-8",
                          timeout=60, dimensions=(50, 120))
    child.expect_exact("may no longer be true")
    seen: dict[str, str] = {}
    for _ in range(2):
        child.expect(r"id (\S+); ")
        rid = child.match.group(1)
        child.expect_exact("[v]erify again  [r]etire  [s]kip  [q]uit ? ")
        seen[rid] = str(child.before)
        if rid == stale:
            child.send("v")
            child.expect_exact("  | ")
            child.sendline("checked again at the new commit: tabs still refused")
            child.expect_exact("  | ")
            child.sendline("")
            child.expect_exact(f"Re-verified {stale}")
        else:
            child.send("r")
            child.expect_exact("(Enter cancels): ")
            child.sendline("the lexer caches its tables since the last change")
            child.expect_exact(f"Retired {disputed}")
    child.expect_exact("1 re-verified, 1 retired")
    child.expect(pexpect.EOF)
    assert set(seen) == {stale, disputed}
    assert "src/parser.py" in seen[stale]  # what changed, in words
    assert "lexer caches its tables now" in seen[disputed]  # who said what

    again = (episode.root / CURATED / f"{stale}.md").read_text(encoding="utf-8")
    assert "status: verified" in again and again.count("  - act: ") == 2 and "act: reverified" in again
    assert "read the parser" in again and "tabs still refused" in again  # the earlier evidence is kept
    retired = (episode.root / CURATED / f"{disputed}.md").read_text(encoding="utf-8")
    assert "status: superseded" in retired and "act: retired" in retired
    assert episode.mj("knowledge", "stale", "--json", check=True).stdout.strip() == "[]"
    assert episode.mj("knowledge", "check").returncode == 0
