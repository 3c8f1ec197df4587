"""References resolved in bulk, for the integrity validator.

One pass over the ledger (episodes seen and opened, tasks, tasks with a decision), one listing of
the tracked session records, one `git cat-file --batch-check` for every commit reference, one
`git ls-files` for every file reference and, only for paths the tree no longer holds, one
`git log --all`. `issue:` and `test:` are external: checked for form only, by the caller.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from majordomus.base import git
from majordomus.store.workspace import Workspace

_SHA = re.compile(r"^[0-9a-f]{4,64}$")


@dataclass
class Ref:
    rel: str  # the record's repository-relative path
    field: str
    ref: str
    episodes: tuple[str, ...]  # the record's own session: episodes (for trimmed ledgers)


class Resolver:
    """Resolves references in bulk: one ledger pass, one git query per kind of question."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.git_processes = 0
        self.ledger_lines = 0
        self.commit_refs = 0
        self.file_refs = 0

    def _git(self, *args: str, input: str | None = None) -> str:
        self.git_processes += 1
        return git.run(self.ws.root, *args, check=False, input=input)

    def unresolved(self, refs: list[Ref]) -> list[tuple[Ref, str]]:
        kinds: dict[str, set[str]] = {}
        for r in refs:
            prefix, _, target = r.ref.partition(":")
            kinds.setdefault(prefix, set()).add(target)
        need_ledger = bool(kinds.keys() & {"session", "task", "decision"})
        sessions, opened, tasks, decisions = self._ledger() if need_ledger else (set(), set(), set(), set())
        tracked = self._session_records() if need_ledger else set()
        commits = self._commits(kinds.get("commit", set()))
        files = self._files(kinds.get("file", set()))
        bad: list[tuple[Ref, str]] = []
        for r in refs:
            prefix, _, target = r.ref.partition(":")
            why = None
            if prefix == "session" and target not in sessions and target not in tracked:
                why = f"no ledger line of episode {target} and no .ai/repo/sessions/{target}.md"
            elif prefix in ("task", "decision"):
                known = tasks if prefix == "task" else decisions
                vouched = any(e in tracked and e not in opened for e in r.episodes)
                if target not in known and not vouched:
                    what = "task" if prefix == "task" else "decision.recorded"
                    why = f"no {what} line names task {target} in the ledger"
            elif prefix == "commit" and target not in commits:
                why = "no such commit in this repository" if _SHA.match(target) else "not a commit sha"
            elif prefix == "file" and target not in files:
                why = "no such path in the tree or its history"
            if why:
                bad.append((r, why))
        return bad

    def _ledger(self) -> tuple[set[str], set[str], set[str], set[str]]:
        """One pass: episodes seen, episodes opened, tasks named, tasks with a decision."""
        sessions: set[str] = set()
        opened: set[str] = set()
        tasks: set[str] = set()
        decisions: set[str] = set()
        for line in self.ws.ledger.read().lines:
            self.ledger_lines += 1
            if line.session:
                sessions.add(line.session)
            task = line.get("task")
            if line.event == "session.opened":
                named = line.get("episode") or line.session
                if isinstance(named, str):
                    opened.add(named)
            if isinstance(task, str):
                tasks.add(task)
                if line.event == "decision.recorded":
                    decisions.add(task)
        return sessions, opened, tasks, decisions

    def _session_records(self) -> set[str]:
        try:
            return {n[:-3] for n in os.listdir(self.ws.sessions) if n.endswith(".md") and n != "README.md"}
        except FileNotFoundError:
            return set()

    def _commits(self, shas: set[str]) -> set[str]:
        """The shas that name commits: one `git cat-file --batch-check` for all of them."""
        asked = sorted(s for s in shas if _SHA.match(s))
        self.commit_refs = len(shas)
        if not asked:
            return set()
        out = self._git("cat-file", "--batch-check", input="".join(f"{s}\n" for s in asked))
        found = set()
        for sha, answer in zip(asked, out.splitlines()):
            parts = answer.split()
            if len(parts) == 3 and parts[1] == "commit" and parts[0].startswith(sha):
                found.add(sha)
        return found

    def _files(self, paths: set[str]) -> set[str]:
        """The paths in the tree (one `git ls-files`) or, failing that, in history (one `git log`)."""
        self.file_refs = len(paths)
        if not paths:
            return set()
        known = _with_parents(self._git("ls-files", "-z").split("\0"))
        missing = paths - known
        if missing:
            log = self._git("log", "-z", "--all", "--format=", "--name-only")
            known |= _with_parents([p for p in log.split("\0") if p])
        return paths & known


def _with_parents(paths: list[str]) -> set[str]:
    """Every path and every folder above it (so `file:lib` resolves when lib/x is tracked)."""
    out: set[str] = set()
    for path in paths:
        while path and path not in out:
            out.add(path)
            path = path.rpartition("/")[0]
    return out
