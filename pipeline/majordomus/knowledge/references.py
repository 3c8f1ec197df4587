"""References resolved in bulk, for the integrity validator.

The ledger's facts (episodes seen and opened, tasks, tasks with a decision: kept in the knowledge
index and extended as the ledger grows, store/facts.py), one listing of
the tracked session records, one `git cat-file --batch-check` for every commit reference, one
`git ls-files` for every file reference and, only for paths the tree no longer holds, one
`git log --all`. `issue:` and `test:` are external: checked for form only, by the caller.
"""
from __future__ import annotations

import bisect
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from majordomus.base import git
from majordomus.knowledge import accumulation
from majordomus.store.facts import Facts
from majordomus.store.ledger import Line, ReadResult
from majordomus.store.workspace import Workspace
from majordomus.base.lean import pattern

Sessions = Callable[[], Iterable["os.DirEntry[str]"]]  # the sessions folder's entries, listed once a run
_SHA = pattern(r"^[0-9a-f]{4,64}\Z")
_STAMPED = ("ts", "event", "session")  # a line's own keys: `Line` holds them apart from its data


class LedgerFacts:
    """What references are resolved against in the ledger: episodes seen, episodes opened, tasks
    named, tasks with a decision (and the lines read). A plain class: no `dataclasses` import for
    doctor."""

    __slots__ = ("sessions", "opened", "tasks", "decisions", "lines")

    def __init__(self) -> None:
        self.sessions: set[str] = set()
        self.opened: set[str] = set()
        self.tasks: set[str] = set()
        self.decisions: set[str] = set()
        self.lines = 0

    def add(self, line: dict[str, Any]) -> None:
        """Count one ledger line (its JSON object, stamped keys included)."""
        self.lines += 1
        session, event, task = line.get("session"), line.get("event"), line.get("task")
        if session:
            self.sessions.add(session)
        if event == "session.opened":
            named = line.get("episode") or session
            if isinstance(named, str):
                self.opened.add(named)
        if isinstance(task, str):
            self.tasks.add(task)
            if event == "decision.recorded":
                self.decisions.add(task)


def ledger_facts(ws: Workspace, result: ReadResult | None = None,
                 keep: tuple[str, ...] = ()) -> LedgerFacts:
    """The ledger's facts from one pass, streamed; the malformed lines are counted into `result`
    when given, and the lines whose event is one of `keep` kept there (`result.lines`, in order,
    numbered), so a caller that needs both reads the ledger once."""
    facts = LedgerFacts()
    if not keep or result is None:
        for line in ws.ledger.objects(result):
            facts.add(line)
        return facts
    wanted = frozenset(keep)
    for number, objs in ws.ledger.object_runs(result):
        for n, obj in enumerate(objs, number):
            facts.add(obj)
            if obj["event"] in wanted:
                data = {k: v for k, v in obj.items() if k not in _STAMPED}
                result.lines.append(Line(n, obj["ts"], obj["event"], obj.get("session"), data))
    return facts


class Ref(NamedTuple):
    rel: str  # the record's repository-relative path
    field: str
    ref: str
    episodes: tuple[str, ...]  # the record's own session: episodes (for trimmed ledgers)


class Cites(NamedTuple):
    """One record's references, as the integrity view keeps them: a `Ref` is made only of one
    that does not resolve (at a million ledger lines, 44,000 references resolve)."""
    rel: str  # the record's repository-relative path
    refs: Sequence[Sequence[str]]  # (field, reference) pairs
    episodes: Sequence[str]  # the record's own session: episodes (for trimmed ledgers)


class Resolver:
    """Resolves references in bulk: one ledger pass, one git query per kind of question."""

    def __init__(self, ws: Workspace, facts: Facts | None = None, listing: git.Listing | None = None,
                 sessions: Sessions | None = None) -> None:
        self.ws = ws
        self.sessions = sessions  # the sessions folder's entries, when the caller lists it once (doctor)
        self.facts = facts  # the ledger's facts, when the caller has them (doctor's, read once a run)
        self.listing = listing  # git's listing, when the caller shares one
        self.git_processes = 0
        self.ledger_lines = 0
        self.commit_refs = 0
        self.file_refs = 0
        self.doubted = False  # a task, decision or session the ledger did not name (`unresolved`)

    def _git(self, *args: str, input: str | None = None) -> str:
        self.git_processes += 1
        return git.run(self.ws.root, *args, check=False, input=input)

    def unresolved(self, cites: Iterable[Cites]) -> list[tuple[Ref, str]]:
        """Each reference of `cites` that does not resolve, with why, in their order. Each distinct
        reference is judged once; a record's episodes matter only to a task or decision the ledger
        does not name."""
        cites = list(cites)
        kinds: dict[str, set[str]] = {}
        for ref in {ref for c in cites for _, ref in c.refs}:
            prefix, _, target = ref.partition(":")
            kinds.setdefault(prefix, set()).add(target)
        need_ledger = bool(kinds.keys() & {"session", "task", "decision"})
        tracked = self._session_records() if need_ledger else set()
        facts = self._facts() if need_ledger else None
        # The ledger is asked only what the tracked session records leave open (each look-up is a
        # query of the index, and nearly every record's episode has its session record): an
        # episode whose record is tracked resolves `session:` without it, and whether the ledger
        # opened an episode matters only for a task or decision it does not name.
        left = kinds.get("session", set()) - tracked
        sessions = facts.having("session", left) if facts else set()
        why: dict[str, str] = {f"session:{t}": f"no ledger line of episode {t} and no .ai/repo/sessions/{t}.md"
                               for t in left - sessions}
        for prefix, what in (("task", "task"), ("decision", "decision.recorded")):  # unless the episode vouches
            asked = kinds.get(prefix, set())
            known = facts.having(prefix, asked) if facts else set()
            why.update((f"{prefix}:{t}", f"no {what} line names task {t} in the ledger") for t in asked - known)
        asked = kinds.get("commit", set())
        why.update((f"commit:{t}", "no such commit in this repository" if _SHA().match(t) else "not a commit sha")
                   for t in asked - self._commits(asked))
        asked = kinds.get("file", set())
        why.update((f"file:{t}", "no such path in the tree or its history") for t in asked - self._files(asked))
        self.doubted = self.doubted or any(not ref.startswith(("commit:", "file:")) for ref in why)
        if not why:
            return []
        found = [(Ref(c.rel, fld, ref, tuple(c.episodes)), why[ref]) for c in cites for fld, ref in c.refs
                 if ref in why]
        unnamed = {e for r, _ in found if r.ref.startswith(("task:", "decision:")) for e in r.episodes}
        opened = facts.having("opened", unnamed & tracked) if facts and unnamed else set()
        return [(r, because) for r, because in found if not r.ref.startswith(("task:", "decision:"))
                or not any(e in tracked and e not in opened for e in r.episodes)]

    def rewritten(self, missing: list[tuple[Ref, dict[str, Any] | None]]) -> dict[str, str]:
        """Old sha -> the commit that replaced it, for cited commits this clone does not have: the
        commit with the same subject and author time (a rebase and an amend keep both), found in one
        `git log --all`. A commit with no words kept, or none matching, is left out."""
        wanted = {(str(n.get("subject")), str(n.get("authored"))): r.ref[7:] for r, n in missing
                  if n and n.get("subject") and n.get("authored")}
        if not wanted:
            return {}
        found: dict[str, str] = {}
        for line in self._git("log", "--all", "--format=%H%x00%at%x00%s").splitlines():
            sha, _, rest = line.partition("\0")
            stamp, _, subject = rest.partition("\0")
            try:
                authored = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(stamp)))
            except ValueError:
                continue
            old = wanted.get((subject, authored))
            if old is not None and old not in found:
                found[old] = sha
        return found

    def _facts(self) -> Facts:
        """The ledger's facts (the index, `Facts.having` looks each id up): at a million lines the
        ledger names a quarter of a million tasks, which no reference needs read."""
        facts = self.facts if self.facts is not None else accumulation.facts(self.ws)
        self.ledger_lines = facts.parsed
        return facts

    def _session_records(self) -> set[str]:
        try:
            names = [e.name for e in self.sessions()] if self.sessions is not None else os.listdir(self.ws.sessions)
            return {n[:-3] for n in names if n.endswith(".md") and n != "README.md"}
        except FileNotFoundError:
            return set()

    def _commits(self, shas: set[str]) -> set[str]:
        """The shas that name commits: one `git cat-file --batch-check` for all of them."""
        asked = sorted(s for s in shas if _SHA().match(s))
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

    def in_tree(self, paths: set[str]) -> set[str]:
        """Those of `paths` git's index holds (a file, or a folder above one): git's listing."""
        if not paths:
            return set()
        if self.listing is None:
            self.git_processes += 1
            self.listing = git.Listing(self.ws.root)
        return _in_tree(paths, self.listing.files() or [])

    def _files(self, paths: set[str]) -> set[str]:
        """The paths in the tree (one `git ls-files`) or, failing that, in history (one `git log`)."""
        self.file_refs = len(paths)
        if not paths:
            return set()
        found = self.in_tree(paths)
        missing = paths - found
        if missing:
            log = self._git("log", "-z", "--all", "--format=", "--name-only")
            found |= _in_tree(missing, [p for p in log.split("\0") if p])
        return found


def _in_tree(paths: set[str], files: list[str]) -> set[str]:
    """Those of `paths` that are one of `files` or a folder above one (so `file:lib` resolves when
    lib/x is tracked): a look-up each in the files sorted, not every folder of 40,000 files made."""
    found = paths & set(files)
    rest = paths - found
    if rest:
        ordered = sorted(files)
        for path in rest:
            at = bisect.bisect_left(ordered, path + "/")
            if at < len(ordered) and ordered[at].startswith(path + "/"):
                found.add(path)
    return found
