"""A verified record's currency, in data and in words, and how it is judged from git: the states
`knowledge/currency.py` keeps and every reader shows (docs/CURRENCY.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from majordomus.base import git
from majordomus.knowledge.anchored import Since, Walk, then
from majordomus.knowledge.known import Known
from majordomus.store.workspace import Workspace

STATES = ("current", "may_be_stale", "unknown", "disputed")
ROUNDS = 3  # walks at most per read: the oldest base first, then any base it could not place
DISPUTED = "knowledge.disputed"


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

    @classmethod
    def from_entry(cls, entry: list[Any]) -> Currency:
        """From the cache's compact form (`entry`)."""
        state, anchor, how, commits, newest, note, anchors = entry
        return cls(state, anchor, how, commits, (newest[0], newest[1]) if newest else None, note, anchors)

    def entry(self) -> list[Any]:
        """The cache's compact form: [state, anchor, how, commits, newest, note, anchors]."""
        return [self.state, self.anchor_commit, self.how or {}, self.commits_since,
                list(self.newest) if self.newest else None, self.note, self.anchors]

    @classmethod
    def settled(cls, rec: Known) -> Currency:
        """What a record whose newest verification is here and whose anchors nothing changed since
        is: the answer the cache leaves implicit."""
        return cls("current", rec.verified_at[0], {}, anchors=len(rec.anchors))

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
    -> its newest review's time) made after that review: one substring-filtered ledger read."""
    found: dict[str, tuple[str, str, str]] = {}
    for line in ws.ledger.stream(contains=f'"{DISPUTED}"'):
        rid = line.get("id")
        if line.event == DISPUTED and isinstance(rid, str) and rid in reviewed and line.ts >= reviewed[rid]:
            found[rid] = (str(line.get("by") or ""), str(line.get("reason") or ""), line.ts)
    return found


def _missing(commit: str) -> Currency:
    return Currency.unknown(commit, f"verified at {short(commit)}, which this clone does not have "
                                    "(rebased away or a shallow clone)")


def _settled(rec: Known, base: str, since: Since, before: Currency | None) -> list[Any]:
    how = dict(before.how or {}) if before is not None else {}
    for path, word in since.how.items():
        how[path] = then(how.get(path), word)
    commits = (before.commits_since if before is not None else 0) + since.commits
    newest = (since.newest.sha, since.newest.subject) if since.newest else before.newest if before else None
    anchor = before.anchor_commit if before is not None and before.anchor_commit else base
    return Currency("may_be_stale" if how else "current", anchor, dict(sorted(how.items())), commits, newest,
                    anchors=len(rec.anchors)).entry()


def judged(root: Path, head: str, fresh: list[Known], later: list[tuple[Known, list[Any] | None]],
           cached_head: str) -> dict[str, list[Any]]:
    """The cache entries of `fresh` records (judged from their anchor commits) and of the `later`
    ones the commits since `cached_head` changed (each with its entry there, None for the implicit
    `settled`), by id: a `later` record none of whose anchors those commits touched is left out,
    its entry unchanged."""
    if later and not git.is_ancestor(root, cached_head, head):  # a reset or a rebase since: judge afresh
        fresh, later = fresh + [r for r, _ in later], []
    # Only the fresh records' commits are looked up: a record judged before is extended from the
    # cached HEAD, so a new commit costs no look-up of thousands of verification commits.
    times = git.present(root, [c for r in fresh for c in r.verified_at] + ([cached_head] if later else []))
    if later and cached_head not in times:
        fresh, later = fresh + [r for r, _ in later], []
        times = git.present(root, [c for r in fresh for c in r.verified_at])
    out: dict[str, list[Any]] = {}
    # (record, the commit it is judged from, its entry there: [] when judged afresh, None when the
    # implicit `Currency.settled`)
    pending: list[tuple[Known, str, list[Any] | None]] = []

    def anchor(rec: Known) -> None:
        commit = next((c for c in rec.verified_at if c in times), None)
        if commit is None:
            out[rec.id] = _missing(rec.verified_at[0]).entry()
        else:
            pending.append((rec, commit, []))

    for rec in fresh:
        anchor(rec)
    for rec, prior in later:
        pending.append((rec, cached_head, prior))
    for _ in range(ROUNDS):
        if not pending:
            break
        base = min((b for _, b, _ in pending), key=lambda b: (times.get(b, 0), b))
        commits = git.history(root, base, head)
        if commits is None:
            break
        walk = Walk(base, commits, {p for r, _, _ in pending for p in r.anchors})
        left: list[tuple[Known, str, list[Any] | None]] = []
        for rec, at, before in pending:
            if before != [] and walk.base == at and not any(a in walk.touches for a in rec.anchors):
                continue  # judged at the cached HEAD, and nothing since touched its anchors
            if walk.holds(at):
                was = None if before == [] else Currency.from_entry(before) if before else Currency.settled(rec)
                out[rec.id] = _settled(rec, at, walk.since(at, rec.anchors), was)
            else:  # behind the walk's base (committed with an older clock), or on another branch
                left.append((rec, at, before))
        pending = left
    for rec, at, _ in pending:
        out[rec.id] = Currency.unknown(at, f"verified at {short(at)}, which is not in the history of HEAD "
                                           "(another branch)").entry()
    return out
