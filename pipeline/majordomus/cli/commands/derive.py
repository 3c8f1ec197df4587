"""majordomus knowledge derive: an episode's candidates, through the doit task."""
from __future__ import annotations

from majordomus.base.errors import OK
from majordomus.base.ids import check_id
from majordomus.base.output import emit_json, show
from majordomus.cli.commands import Subparsers
from majordomus.store.workspace import open_workspace


def derive_verbs(verbs: Subparsers) -> None:
    d = verbs.add_parser("derive", help="derive an episode's candidates (a doit task)",
                         description="Map an episode's ledger lines and commits to candidate records by "
                         "the fixed table. A re-run over unchanged evidence writes nothing and says so.")
    d.add_argument("--episode", help="the episode (default: the open one)")
    d.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    d.add_argument("--json", action="store_true")
    d.set_defaults(handler=lambda a: derive(a.episode, a.dry_run, a.json))


def derive(episode: str | None, dry_run: bool, as_json: bool) -> int:
    ws = open_workspace()
    if episode is not None and not (dry_run or as_json):
        from majordomus.tasks import noop  # nothing changed since the last derivation: told from stamps

        if noop.answered(ws, check_id(episode, "episode id")):
            return OK
    from majordomus.evidence import episodes
    from majordomus.tasks import derive as deriver  # its import is most of a re-run's cost

    episode = check_id(episode, "episode id") if episode is not None else episodes.require_current(ws)
    outcome = deriver.derive(ws, episode, dry_run=dry_run)
    if as_json:
        emit_json({"episode": episode, "dry_run": dry_run,
                   "written": [ws.rel(p) for p in outcome.written],
                   "unchanged": [ws.rel(p) for p in outcome.unchanged],
                   "skipped": [{"line": n, "why": why} for n, why in outcome.skipped],
                   "kept": outcome.kept, "edited": [ws.rel(p) for p in outcome.edited],
                   "provenance": outcome.provenance,
                   "records": [{"id": d.id, "class": d.cls, "epistemics": d.epistemics,
                                "title": d.title, "path": ws.rel(d.path),
                                "derived_from": list(d.derived_from)} for d in outcome.drafts]})
    else:
        show(outcome.summary(ws) + "\n")
    return OK

