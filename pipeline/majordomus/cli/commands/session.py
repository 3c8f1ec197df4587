"""majordomus session start|close|context."""
from __future__ import annotations

from majordomus.base.errors import INTERNAL, OK
from majordomus.base.ids import check_id
from majordomus.base.output import emit_json, say, show
from majordomus.cli.commands import Subparsers
from majordomus.context import working as session_context
from majordomus.evidence import episodes
from majordomus.session import end, pending
from majordomus.session import start as session_start
from majordomus.store.ledger import utc_now
from majordomus.store.workspace import open_workspace

NAMES = ("session",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("session", help="open, close or read an episode",
                       description="Episodes by hand: what the hooks call, usable from a terminal.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    s = verbs.add_parser("start", help="open an episode and print the briefing",
                         description="Open an episode (resume it when it is open) and print the briefing.")
    s.add_argument("--id", dest="episode", help="episode id (default: manual-<UTC stamp>)")
    s.add_argument("--source", default="startup", help="startup|resume|clear|compact|fork (default startup)")
    s.add_argument("--forked-from", metavar="ID", help="the episode this one was forked from (with --source fork)")
    s.set_defaults(handler=lambda a: start(a.episode, a.source, a.forked_from))
    c = verbs.add_parser("close", help="close an episode: session record, derivation, session.closed",
                         description="The one close path: publish the session record, derive candidates "
                         "(unless session.knowledge_on_end is off), then append session.closed.")
    c.add_argument("--id", dest="episode", help="episode id (default: the open episode)")
    c.add_argument("--reason", default="other", help="why it closed (default other)")
    c.add_argument("--json", action="store_true", help="print the outcome as JSON")
    c.set_defaults(handler=lambda a: close(a.episode, a.reason, a.json))
    x = verbs.add_parser("context", help="the episode's working context, composed now",
                         description="The working context of the open episode, composed when read from its "
                         "open record, git now against git at the open, and its ledger window. "
                         "--path prints the opening snapshot's path instead; `majordomus context` "
                         "is the repository's context.")
    x.add_argument("--episode", help="compose this episode, open or closed (default: the open one)")
    x.add_argument("--path", action="store_true", help="print the opening snapshot's path, nothing else")
    x.add_argument("--json", action="store_true", help="the same content as JSON")
    x.set_defaults(handler=lambda a: context(a.episode, a.path, a.json))
    p.set_defaults(help_parser=p)


def start(episode: str | None, source: str, forked_from: str | None = None) -> int:
    ws = open_workspace()
    if episode is None:
        episode = "manual-" + utc_now().replace("-", "").replace(":", "")
    started = session_start.start(ws, episode, source=source, by="cli", forked_from=forked_from)
    opened = started.opened
    for orphan in started.orphans:
        say(f"closed orphaned episode {orphan.episode} (no ledger line for "
            f"session.orphan_after_minutes): {ws.rel(orphan.session_record)}")
    if started.drained is not None:
        say(started.drained.summary())
    state = "resumed" if opened.resumed else "reopened (a new span)" if opened.reopened else "opened"
    say(f"episode {episode} {state}"
        + (f" (also open: {', '.join(opened.others_open)})" if opened.others_open else "")
        + f"; export MAJORDOMUS_EPISODE={episode} to stamp this shell's commands with it")
    show(started.briefing)
    late = pending.pick_up(ws)  # derivations an earlier boundary could not run
    for problem in late:
        say(f"majordomus: {problem}")
    for error in started.errors:
        say(f"majordomus: {error}")
    return INTERNAL if late or started.errors else OK


def close(episode: str | None, reason: str, as_json: bool) -> int:
    ws = open_workspace()
    episode = episode if episode is not None else episodes.require_current(ws)
    closed = end.close_episode(ws, episode, reason=reason, by="cli")
    outcome = closed.derivation
    if as_json:
        emit_json({"episode": episode, "session_record": ws.rel(closed.session_record),
                   "written": [ws.rel(p) for p in outcome.written] if outcome else [],
                   "unchanged": len(outcome.unchanged) if outcome else 0,
                   "skipped": len(outcome.skipped) if outcome else 0,
                   "derivation_error": closed.error,
                   "drained": closed.drained.as_json() if closed.drained else None,
                   "drain_error": closed.drain_error})
    else:
        show(f"episode {episode} closed: {ws.rel(closed.session_record)}\n")
        if outcome is not None:
            show(outcome.summary(ws) + "\n")
        if closed.drained is not None:
            show(closed.drained.summary() + "\n")
    if closed.error:
        say(f"derivation failed: {closed.error}")
    if closed.drain_error:
        say(f"majordomus: {closed.drain_error}")
    late = pending.pick_up(ws)  # derivations an earlier boundary could not run
    for problem in late:
        say(f"majordomus: {problem}")
    if closed.error or closed.drain_error or late:
        return INTERNAL
    return OK


def context(episode: str | None, path: bool, as_json: bool) -> int:
    """Print the working context of the open (or named) episode, or its opening snapshot's path."""
    ws = open_workspace().own_local()
    if episode is not None:
        episode = check_id(episode, "episode id")
    else:
        episode = episodes.current(ws)
        if episode is None:
            raise session_context.no_open_episode()
    if path:
        where = ws.rel(session_context.snapshot_path(ws, episode))
        if as_json:
            emit_json({"episode": episode, "path": where})
        else:
            show(where + "\n")
        return OK
    ctx = session_context.compose(ws, episode)
    if as_json:
        emit_json(ctx.as_json())
    else:
        show(session_context.render(ctx))
    return OK
