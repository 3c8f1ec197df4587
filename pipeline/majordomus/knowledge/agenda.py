"""The review queue in the order a person reviews it: the candidates of this checkout's branch
first, then the others (unattributed ones last), each group oldest review age first, then in the
order of the evidence (its time, then the id).

Review age is the age of the queue entry, not of the evidence (seed 001), measured by
`accumulation.review_ages` — the measure the rule candidates-reviewed and `knowledge status`
take — and each entry says which source it used (ledger, commit or date).
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from typing import NamedTuple

from majordomus.knowledge import accumulation
from majordomus.knowledge.accumulation import Age
from majordomus.knowledge.queue import Candidate
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace


class Waiting(NamedTuple):  # no dataclass on the reader paths (docs/PERFORMANCE.md, imports)
    """One candidate of the queue, with how long it has waited and whether it is this branch's."""

    candidate: Candidate
    age: Age | None
    minutes: int | None  # whole minutes waited; None when no source dates it
    here: bool  # derived by an episode of the checkout's branch

    def as_dict(self) -> dict[str, object]:
        return {"age_minutes": self.minutes, "age_source": self.age.source if self.age else None,
                "age_detail": self.age.detail if self.age else None, "this_branch": self.here}


def ordered(ws: Workspace, queue: list[Candidate], branch: str | None, lines: Iterable[Line] | None = None,
            now: float | None = None) -> list[Waiting]:
    """`queue` in review order. `lines`: the `knowledge.derived` lines, when the caller has them;
    else the ledger's facts are asked (the knowledge index: no pass over the ledger)."""
    now = time.time() if now is None else now
    ages = accumulation.review_ages(ws, [c.path for c in queue], lines)
    found = []
    for c in queue:
        age = ages.get(c.path)
        minutes = int(max(0.0, now - age.since) // 60) if age is not None else None
        found.append(Waiting(c, age, minutes, branch is not None and c.branch == branch))

    def key(w: Waiting) -> tuple[int, int, float, str, str]:
        group = 0 if w.here else (1 if w.candidate.branch is not None else 2)
        since = w.age.since if w.age is not None else float("inf")  # undated: after the dated ones
        # one derivation dates many entries alike: then the evidence's order, not the id's
        return group, 0 if w.age is not None else 1, since, w.candidate.when, w.candidate.id

    return sorted(found, key=key)


def waited(minutes: int | None) -> str:
    """How long an entry has waited, said the way a person reads it."""
    if minutes is None:
        return "waiting (no date)"
    return "waiting " + accumulation.minutes(minutes * 60.0)
