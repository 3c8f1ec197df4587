"""The judgement of `majordomus.candidates-reviewed`: is the review queue seen?

Review age is the age of the queue entry, not of the evidence: measured from the oldest
`knowledge.derived` line whose paths name the file, else from the commit that added the file,
else from the record's `date` (the evidence day, the weakest of the three). Two git calls at
most, one pass over the ledger lines the caller hands in.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import git
from majordomus.base.fsio import read_regular
from majordomus.knowledge import queue
from majordomus.store import facts as store_facts
from majordomus.store import records as store_records
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace
from majordomus.base.lean import pattern

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from majordomus.base.lean import NamedTuple

KEYS = ("knowledge.candidates_max_files", "knowledge.candidate_max_age_minutes")
STAMP = "%Y-%m-%dT%H:%M:%SZ"  # the ledger's `ts`
_STAMP = pattern(r"(?a)(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z")
_DATE = pattern(r"(?m)^date:\s*\"?(\d{4}-\d{2}-\d{2})\"?\s*$")


class Age(NamedTuple):  # no dataclass on the reader paths (docs/PERFORMANCE.md, imports)
    since: float  # epoch seconds the queue entry dates from
    source: str  # ledger | commit | date
    detail: str  # which line, commit or date


def epoch(ts: str, fmt: str = STAMP) -> float | None:
    """Epoch seconds of `ts` read with `fmt`, or None. A ledger stamp of the usual shape is read
    without `strptime` (~10 µs a call, once per candidate in a queue) nor `calendar` (with
    `locale`, ~1.5 ms of a hook's imports); any other, by them."""
    plain = _STAMP().fullmatch(ts) if fmt == STAMP and isinstance(ts, str) else None
    if plain is not None:
        y, mo, d, h, mi, s = map(int, plain.groups())
        if y >= 1 and 1 <= mo <= 12 and 1 <= d <= 28 and h <= 23 and mi <= 59 and s <= 59:
            return float(((_days(y, mo, d) * 24 + h) * 60 + mi) * 60 + s)
    import calendar

    try:
        return float(calendar.timegm(time.strptime(ts, fmt)))
    except (ValueError, TypeError):
        return None


def _days(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to the proleptic Gregorian date y-m-d (what `calendar.timegm` counts)."""
    y -= m <= 2  # the year counted from March: the leap day last
    era, yoe = divmod(y, 400)
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def ledger_ages(lines: Iterable[Line], wanted: set[str] | None = None) -> dict[str, Age]:
    """File name -> the oldest `knowledge.derived` line naming it (outbox paths count: a drained
    record keeps its name). Stops once every `wanted` name is found."""
    ages: dict[str, Age] = {}
    for line in lines:
        if line.event != "knowledge.derived":
            continue
        paths = line.get("paths")
        if not isinstance(paths, list):
            continue
        since: float | None = None
        for rel in paths:
            if not isinstance(rel, str) or "/candidates/" not in rel:
                continue
            name = rel.rsplit("/", 1)[-1]
            if name in ages or (wanted is not None and name not in wanted):
                continue
            since = since if since is not None else epoch(line.ts)
            if since is None:
                break
            ages[name] = Age(since, "ledger", f"knowledge.derived at ledger line {line.number}, {line.ts}")
        if wanted is not None and len(ages) == len(wanted):
            break
    return ages


def commit_ages(ws: Workspace) -> dict[str, Age]:
    """File name -> the oldest commit that added it under candidates/: one git call."""

    out = git.run(ws.root, "log", "-z", "--no-renames", "--diff-filter=A", "--format=%x1e%H %ct",
                  "--name-only", "--", ws.rel(ws.candidates) + "/", check=False)
    ages: dict[str, Age] = {}
    for chunk in out.split("\x1e")[1:]:  # newest first: a later chunk is an older commit
        head, _, rest = chunk.partition("\0")
        sha, _, stamp = head.partition(" ")
        for rel in (f for f in rest.removeprefix("\n").split("\0") if f):
            ages[rel.rsplit("/", 1)[-1]] = Age(float(stamp), "commit", f"commit {sha[:12]} added it")
    return ages


def tracked(ws: Workspace, listing: git.Listing) -> set[str]:
    """Paths under candidates/ and sessions/ that git tracks (the index counts), from `listing`."""

    return set(listing.under(ws.rel(ws.candidates), ws.rel(ws.sessions)) or [])


def acts_asked(ws: Workspace) -> git.Running:
    """The `git status` of curated/ that `uncommitted_acts` reads, started (OSError: git cannot be)."""
    return git.spawn(ws.root, "status", "--porcelain", "-z", "--untracked-files=all", "--", ws.rel(ws.curated) + "/")


def uncommitted_acts(ws: Workspace, asked: git.Running | None = None) -> tuple[list[str], list[str]]:
    """Review acts not committed yet: (records staged, records changed or new and not staged) under
    curated/, repository-relative, from one `git status` (`asked`: started ahead by the caller)."""
    out = (asked if asked is not None else acts_asked(ws)).wait()[1]
    staged, loose = [], []
    for item in out.split("\0"):
        if len(item) < 4 or not item.endswith(".md") or item.endswith("/README.md"):
            continue
        index, tree, rel = item[0], item[1], item[3:]
        if index not in " ?":
            staged.append(rel)
        if tree != " ":
            loose.append(rel)
    return staged, loose


def session_records(ws: Workspace, listed: Callable[[], Iterable[os.DirEntry[str]]] | None = None) -> list[str]:
    """The file names of every closed session record under .ai/repo/sessions/ (its README contract
    aside), sorted; `listed`: the folder's entries, when the caller lists it once for several readers."""
    try:
        if listed is not None:
            return sorted(e.name for e in listed() if e.name.endswith(".md") and e.name != "README.md"
                          and not e.name.startswith(".tmp.") and e.is_file())
        with os.scandir(ws.sessions) as listing:  # names: no Path made, compared or stat'ed twice
            return sorted(e.name for e in listing if e.name.endswith(".md") and e.name != "README.md"
                          and not e.name.startswith(".tmp.") and e.is_file())
    except OSError:  # no folder, or not one
        return []


def date_age(path: str) -> Age | None:
    try:
        head = read_regular(path, 4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    match = _DATE().search(head)
    since = epoch(match.group(1), "%Y-%m-%d") if match else None
    if since is None:
        return None
    return Age(since, "date", f"the record's date {match.group(1)} (no ledger line or commit names it)")  # type: ignore[union-attr]


def facts(ws: Workspace) -> store_facts.Facts:
    """The ledger's facts (store/facts.py), kept in the knowledge index and extended as it grows."""
    return store_facts.of(ws, epoch)


def indexed_ages(ws: Workspace, names: Iterable[str], found: store_facts.Facts | None = None) -> dict[str, Age]:
    """`ledger_ages` of the whole ledger for `names`, from its facts: no pass over the ledger."""
    ages: dict[str, Age] = {}
    for name, (ts, number, since) in (found or facts(ws)).ages(names).items():
        ages[name] = Age(since, "ledger", f"knowledge.derived at ledger line {number}, {ts}")
    return ages


def review_ages(ws: Workspace, paths: Sequence[str], lines: Iterable[Line] | None = None,
                found: store_facts.Facts | None = None) -> dict[str, Age | None]:
    """Each candidate's review age, from the strongest source that has one, keyed by the paths
    as given (text: a queue of thousands makes no path objects). The ledger's part from `lines` (its `knowledge.derived`
    lines) when given, else from its facts (`found`, or the index's)."""
    named = [(p, p.rpartition("/")[2]) for p in paths]  # posixpath.basename, without a call a path
    names = {name for _, name in named}
    from_ledger = ledger_ages(lines, names) if lines is not None else indexed_ages(ws, names, found)
    result: dict[str, Age | None] = {p: from_ledger.get(name) for p, name in named}
    if any(age is None for age in result.values()):
        from_git = commit_ages(ws)
        for p, name in named:
            if result[p] is None:
                result[p] = from_git.get(name) or date_age(p)
    return result


def waiting(ws: Workspace) -> list[str]:
    """The records under candidates/ whose status is candidate (read without a YAML parse), as
    text: thousands of path objects cost more than the reading."""
    where = os.fspath(ws.candidates) + os.sep
    return [where + name for name, status in queue.status_names(ws, ws.candidates).items()
            if (status or "candidate") == "candidate"]


def records(ws: Workspace) -> list[str]:
    """The file names of every record under candidates/, whatever its status, sorted."""
    return store_records.names(ws.candidates)


def minutes(seconds: float) -> str:
    """A wait, said the way a person reads it."""
    m = seconds / 60.0
    if m < 120:
        return f"{m:.0f} min"
    if m < 48 * 60:
        return f"{m / 60:.0f} h"
    return f"{m / 1440:.0f} days"
