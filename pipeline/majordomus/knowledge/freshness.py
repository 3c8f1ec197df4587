"""Is the knowledge writer fresh? One judgement, made from the ledger and the policy, shared by
the rule `majordomus.knowledge-observed` and by `majordomus knowledge status`.

The close derives before it appends `session.closed`, so a newest close that no
`knowledge.derived` line since the episode's previous close names, older than
`session.freshness.stale_minutes`, is a stopped writer (an episode closes once a span). A ledger with no `knowledge.derived` at all is not judged (the gate): the first
derivation ends that case.
"""
from __future__ import annotations

import time

from majordomus.base.lean import TYPE_CHECKING
from majordomus.knowledge.accumulation import epoch
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from typing import NamedTuple
else:
    from majordomus.base.lean import NamedTuple

EVENTS = ("session.closed", "knowledge.derived")


class Freshness(NamedTuple):
    judged: bool  # False: the gate (no derivation has ever run), or no episode has closed
    fresh: bool
    reason: str  # one line, for a finding or a status answer
    episode: str | None = None  # the newest closed episode
    closed_at: str | None = None
    minutes_since_close: float | None = None
    last_derived: Line | None = None


def read_events(ws: Workspace, names: tuple[str, ...] = EVENTS) -> list[Line]:
    """The ledger lines of `names`, in order."""
    return ws.ledger.events(*names)


def judge(ws: Workspace, lines: list[Line] | None = None, now: float | None = None) -> Freshness:
    """Judge from `lines` (the ledger's session.closed and knowledge.derived lines, in order)."""
    if lines is None:
        lines = read_events(ws)
    derived = [l for l in lines if l.event == "knowledge.derived"]
    closed = [l for l in lines if l.event == "session.closed"]
    last_derived = derived[-1] if derived else None
    if not derived:
        return Freshness(False, True, "not judged: no knowledge.derived line yet (no derivation has ever run)")
    if not closed:
        return Freshness(False, True, "not judged: no episode has closed yet", last_derived=last_derived)
    newest = closed[-1]
    episode = newest.get("episode") or newest.session
    # The newest close is judged, not the episode: a resumed episode closes once a span, and the
    # derivation of an earlier span does not vouch for the newest one. A knowledge.derived line
    # counts when it names the episode and comes after the episode's previous close (the close
    # derives first, so its own line precedes it; a `knowledge derive` run later follows it).
    previous = max((l.number for l in closed[:-1] if (l.get("episode") or l.session) == episode), default=0)
    names = {l.get("episode") for l in derived if l.number > previous}
    stale_after = float(ws.policy["session.freshness.stale_minutes"])
    closed_epoch = epoch(newest.ts)
    minutes = None
    if closed_epoch is not None:
        minutes = max(0.0, ((now if now is not None else time.time()) - closed_epoch) / 60.0)
    if episode in names:
        return Freshness(True, True, f"fresh: the newest closed episode {episode} was derived",
                         episode, newest.ts, minutes, last_derived)
    if minutes is not None and minutes <= stale_after:
        return Freshness(True, True, f"pending: episode {episode} closed {minutes:.0f} min ago, "
                         f"within session.freshness.stale_minutes ({stale_after:g})",
                         episode, newest.ts, minutes, last_derived)
    age = f"{minutes:.0f} min" if minutes is not None else "an unknown time"
    return Freshness(True, False, f"stopped writer: episode {episode} closed {age} ago and no "
                     "knowledge.derived line names it", episode, newest.ts, minutes, last_derived)
