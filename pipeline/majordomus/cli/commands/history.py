"""majordomus history."""
from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import Iterable
from itertools import chain

from majordomus.base.errors import OK, USAGE, FatalError, unknown
from majordomus.base.ids import check_id
from majordomus.base.output import line, raw_in_json, say, show
from majordomus.cli.commands import Subparsers
from majordomus.cli.options import count
from majordomus.store.ledger import EVENTS, Line, ReadResult
from majordomus.store.workspace import open_workspace

NAMES = ("history",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("history", help="read the ledger",
                       description="The ledger's lines, oldest first, filtered by event and episode.")
    p.add_argument("--event", action="append", help="only this event (repeatable)")
    p.add_argument("--episode", help="only lines stamped with, or about, this episode")
    p.add_argument("--limit", type=count, default=None, metavar="N", help="only the newest N lines (1 or more)")
    p.add_argument("--json", action="store_true", help="print the lines as a JSON array")
    p.set_defaults(handler=lambda a: history(a.event, a.episode, a.limit, a.json))


def _shown(value: object) -> str:
    """A value for a person's listing: JSON, but a null inside it shows as "—" (none), never null."""
    text = json.dumps(value, ensure_ascii=False)
    if "null" not in text:
        return text

    def plain(v: object) -> object:
        if v is None:
            return "—"
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return [plain(x) for x in v] if isinstance(v, list) else v
    return json.dumps(plain(value), ensure_ascii=False)


def history(events: list[str] | None, episode: str | None, limit: int | None, as_json: bool) -> int:

    ws = open_workspace().own_local()
    for event in events or []:
        if event not in EVENTS:

            raise FatalError(f"unknown event {event!r}: one of {', '.join(EVENTS)}", USAGE)
    if episode is not None:
        check_id(episode, "episode id")
    # Filtered as text first (the episode's id, else the events' names, in quotes), then parsed,
    # printed as read: only the newest `limit` lines are held.
    result = ReadResult(lines=[])
    needles = (json.dumps(episode),) if episode else tuple(json.dumps(e) for e in events or ())
    lines: Iterable[Line] = (l for l in ws.ledger.stream(result=result, any_of=needles)
                             if (not events or l.event in events)
                             and (episode is None or l.session == episode or l.get("episode") == episode))
    if limit is not None:
        lines = deque(lines, maxlen=limit)
    shown = 0
    if episode is not None:  # an episode the ledger never heard of is unknown, not an empty answer
        rest = iter(lines)
        first = next(rest, None)
        if first is None and episode not in ws.ledger.index().episodes():
            raise unknown(f"no ledger line names episode {episode!r}: `majordomus history --event "
                          "session.opened` lists the episodes")
        lines = chain([first] if first is not None else [], rest)
    if as_json:
        out = sys.stdout
        for l in lines:
            item = json.dumps({"line": l.number, "ts": l.ts, "event": l.event, "session": l.session, **l.data},
                              indent=2, ensure_ascii=False)
            out.write(("[\n  " if not shown else ",\n  ") + raw_in_json(item).replace("\n", "\n  "))
            shown += 1
        out.write("\n]\n" if shown else "[]\n")
    else:
        for l in lines:
            detail = " ".join(f"{line(k)}={line(_shown(v))}" for k, v in l.data.items() if v is not None)
            show(f"{line(l.ts)}  {line(l.event):<22} {line(l.session or '-'):<14} {detail}\n")
            shown += 1
        if not shown:
            say("no ledger lines match")
    if result.malformed:
        say(f"({result.malformed} malformed ledger line(s) skipped, first at line {result.first_malformed}; "
            "`majordomus doctor` reports them)")
    return OK
