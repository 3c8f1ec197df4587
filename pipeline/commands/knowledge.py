"""majordomus knowledge: derive, and the readers and acts of the knowledge store."""
from __future__ import annotations

import sys
from typing import Any

from pipeline.output import emit_json, say, table

NAMES = ("knowledge",)


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("knowledge", help="derive, read and review knowledge records",
                       description="The knowledge store: candidates derived at episode boundaries, "
                       "promoted or rejected by a person.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    d = verbs.add_parser("derive", help="derive an episode's candidates (a doit task)",
                         description="Map an episode's ledger lines and commits to candidate records by "
                         "the fixed table. A re-run over unchanged evidence writes nothing and says so.")
    d.add_argument("--episode", help="the episode (default: the open one)")
    d.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    d.add_argument("--json", action="store_true")
    d.set_defaults(handler=lambda a: derive(a.episode, a.dry_run, a.json))
    c = verbs.add_parser("candidates", help="the candidates awaiting review",
                         description="Every candidate: id, class, branch (of the episode it names) and title.")
    c.add_argument("--json", action="store_true")
    c.set_defaults(handler=lambda a: candidates(a.json))
    p.set_defaults(help_parser=p)


def derive(episode: str | None, dry_run: bool, as_json: bool) -> int:
    from pipeline import derive as deriver
    from pipeline import episodes
    from pipeline.workspace import check_id, open_workspace

    ws = open_workspace()
    episode = check_id(episode, "episode id") if episode is not None else episodes.require_current(ws)
    outcome = deriver.derive(ws, episode, dry_run=dry_run)
    if as_json:
        emit_json({"episode": episode, "dry_run": dry_run,
                   "written": [ws.rel(p) for p in outcome.written],
                   "unchanged": [ws.rel(p) for p in outcome.unchanged],
                   "skipped": [{"line": n, "why": why} for n, why in outcome.skipped],
                   "kept": outcome.kept,
                   "records": [{"id": d.id, "class": d.cls, "epistemics": d.epistemics,
                                "title": d.title, "path": ws.rel(d.path),
                                "derived_from": list(d.derived_from)} for d in outcome.drafts]})
    else:
        print(outcome.summary(ws))
    return 0


def candidates(as_json: bool) -> int:
    from pipeline import candidates as queue
    from pipeline.workspace import open_workspace

    ws = open_workspace()
    items = queue.waiting(ws)
    if as_json:
        emit_json([{"id": c.id, "class": c.cls, "branch": c.branch, "episode": c.episode,
                    "title": c.title, "path": ws.rel(c.path)} for c in items])
        return 0
    if not items:
        say("no candidates await review")
        return 0
    rows = [[c.id, c.cls, c.branch or "(unattributed)", c.title] for c in items]
    sys.stdout.write(table(rows, ["ID", "CLASS", "BRANCH", "TITLE"]))
    return 0
