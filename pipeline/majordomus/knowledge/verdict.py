"""A verified record's currency, in data and in words, and how it is judged from git: the states
`knowledge/currency.py` keeps and every reader shows (docs/CURRENCY.md)."""
from __future__ import annotations

from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import git
from majordomus.knowledge.accumulation import facts
from majordomus.knowledge.anchored import Walk
from majordomus.knowledge.known import Known
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

STATES = ("current", "may_be_stale", "unknown", "disputed")
ROUNDS = 3  # walks at most per read: the oldest base first, then any base it could not place


def short(sha: str | None) -> str:
    return (sha or "")[:7]


def fix(rid: str) -> str:
    """The one command that settles a record that may be stale or is disputed."""
    return f"majordomus knowledge reverify {rid} < evidence"


class Currency(NamedTuple):
    """One record's currency (a tuple: a store of 20,000 records builds 20,000 of them per read)."""

    state: str  # one of STATES
    anchor_commit: str | None = None
    how: dict[str, str] | None = None  # anchored path -> what last happened to it since the anchor
    commits_since: int = 0  # commits that changed an anchored path since the anchor commit
    newest: tuple[str, str] | None = None  # (sha, subject) of the newest of them
    note: str = ""  # why it is unknown, in words
    anchors: int = 0
    dispute: tuple[str, str, str] | None = None  # (by, reason, ts) of the newest dispute

    @classmethod
    def unanchored(cls) -> Currency:
        return cls("current", note="no anchored files")

    @classmethod
    def unknown(cls, commit: str | None, note: str) -> Currency:
        return cls("unknown", commit, note=note)

    def disputed(self, by: str, reason: str, ts: str) -> Currency:
        return self._replace(dispute=(by, reason, ts))

    @property
    def label(self) -> str:
        """The state as a reader says it: `current`, `may be stale`, `unknown`, `disputed`."""
        if self.dispute is not None:
            return "disputed"
        return self.state.replace("_", " ")

    @property
    def stale(self) -> bool:
        return self.state == "may_be_stale"

    def changes(self) -> str:
        """What changed, in words: `src/a.py modified, src/b.py renamed to src/c.py in 3 commits
        since 1a2b3c4, the newest 9f8e7d6 "subject"`."""
        paths = ", ".join(f"{p} {w}" for p, w in (self.how or {}).items())
        newest = f', the newest {short(self.newest[0])} "{self.newest[1]}"' if self.newest else ""
        n = self.commits_since
        return f"{paths} in {n} commit{'s' if n != 1 else ''} since {short(self.anchor_commit)}{newest}"

    @property
    def reason(self) -> str:
        """Why the record is in its state, in one line."""
        if self.state == "current" and not self.anchor_commit:
            said = f"current ({self.note})"
        elif self.state == "current":
            n = self.anchors
            said = (f"current: none of its {n} anchored file{'s' if n != 1 else ''} changed since it was "
                    f"verified at {short(self.anchor_commit)}")
        elif self.state == "may_be_stale":
            said = f"may be stale: {self.changes()}"
        else:
            said = f"unknown: {self.note}"
        if self.dispute is not None:
            by, why, ts = self.dispute
            said = f"disputed by {by or 'an agent'} at {ts}: {why} (and {said})"
        return said

    def as_dict(self) -> dict[str, Any]:
        """The `currency` object of a reader's answer."""
        return {"state": "disputed" if self.dispute is not None else self.state,
                "changed": list(self.how or {}), "how": dict(self.how or {}),
                "commits_since": self.commits_since,
                "newest": {"sha": self.newest[0], "subject": self.newest[1]} if self.newest else None,
                "anchor_commit": self.anchor_commit, "reason": self.reason,
                "dispute": None if self.dispute is None else
                {"by": self.dispute[0], "reason": self.dispute[1], "at": self.dispute[2]}}


def disputes(ws: Workspace, reviewed: dict[str, str]) -> dict[str, tuple[str, str, str]]:
    """(by, reason, ts) of the newest `knowledge.disputed` line for each record of `reviewed` (id
    -> its newest review's time) made after that review: from the ledger's facts, kept in the
    knowledge index (store/facts.py), not a pass over the ledger."""
    found: dict[str, tuple[str, str, str]] = {}
    for _, rid, by, reason, ts in facts(ws).disputes():
        if rid in reviewed and ts >= reviewed[rid]:
            found[rid] = (by, reason, ts)
    return found


def _missing(commit: str) -> Currency:
    return Currency.unknown(commit, f"verified at {short(commit)}, which this clone does not have "
                                    "(rebased away or a shallow clone)")


def _away(commit: str) -> Currency:
    return Currency.unknown(commit, f"verified at {short(commit)}, which is not in the history of HEAD "
                                    "(another branch)")


class Walked(NamedTuple):
    """What a currency read knows from git: the walks (usually one), the anchored paths they follow,
    the verification commits this clone does not have (`gone`) and those it has outside HEAD's
    history (`away`: those since the walks' bases, and a base itself that HEAD's history does not
    hold, which a prune may take)."""

    walks: list[Walk]
    paths: frozenset[str]
    gone: frozenset[str]
    away: frozenset[str]

    def judge(self, rec: Known) -> Currency | None:
        """The currency of `rec` (anchored, with verification commits); None when this was not
        walked for it (an anchored path or a verification commit it has not seen)."""
        if not self.paths.issuperset(rec.anchors):
            return None
        for commit in rec.verified_at:  # the newest verification this clone has anchors the record
            for walk in self.walks:
                if walk.holds(commit):
                    since = walk.since(commit, rec.anchors)
                    return Currency("may_be_stale" if since.how else "current", commit, since.how, since.commits,
                                    since.newest, anchors=len(rec.anchors))
            if commit in self.away:
                return _away(commit)
            if commit not in self.gone:
                return None
        return _missing(rec.verified_at[0])


def walked(root: Path, head: str, anchored: list[Known]) -> Walked:
    """Everything `anchored` records need from git, from scratch: one `git.present` of their
    verification commits, then one `git.history` from the oldest anchor commit to `head` (and
    another from any anchor commit that walk could not place, at most ROUNDS)."""
    commits = {c for r in anchored for c in r.verified_at}
    times = git.present(root, sorted(commits))
    paths = frozenset(p for r in anchored for p in r.anchors)
    pending = {c for c in (next((c for c in r.verified_at if c in times), None) for r in anchored) if c is not None}
    walks: list[Walk] = []
    outside: set[str] = set()  # bases not in HEAD's history: a prune may take them
    for _ in range(ROUNDS):
        if not pending:
            break
        base = min(pending, key=lambda b: (times[b], b))
        logged = git.history(root, base, head)
        if logged is None:
            break
        walk = Walk(base, paths)
        walk.extend(logged)
        walk.head = head
        walk.ancestry.setdefault(head, (1 << len(walk.log)) - 1)
        walks.append(walk)
        if base != head and not any(base in c.parents for c in logged):
            outside.add(base)
        pending = {c for c in pending if not walk.holds(c)}
    return Walked(walks, paths, frozenset(commits - times.keys()), frozenset(pending | outside))
