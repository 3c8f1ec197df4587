"""The command-line projection: one `majordomus knowledge <verb>` per declared capability, its
arguments generated from the declared parameters (a positional parameter is a positional
argument, any other a `--flag`), `--json` printing the handler's result as declared. Errors keep
the command line's convention: exit 3 for an unknown id, 4 for a refused one.

The human renderings are this projection's own; the data they render is the declared result.
`knowledge edges` is a command-line reader of the graph, not a declared capability."""
from __future__ import annotations

from types import SimpleNamespace

from majordomus.base import yamlio
from majordomus.base.errors import OK
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.output import emit_json, json_text, line, say, show, show_json, table
from majordomus.readers.answers import call, encoded, head
from majordomus.readers.knowledge_base import CAPABILITIES, Capability
from majordomus.store.workspace import open_workspace

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from collections.abc import Callable
    from typing import Any

    import argparse

SHOWN = 40  # the candidates `knowledge candidates` lists without --all
UNTRACKED_SHOWN = 3  # the untracked candidates it names in its `git add` without --all


def add_verbs(verbs: "argparse._SubParsersAction[argparse.ArgumentParser]", only: str | None = None) -> None:
    """Add every declared capability, then `edges`, to the `knowledge` verbs; with `only`, that
    verb alone (a reader's command line builds its own parser, not its neighbours': each costs
    argparse a parser, a formatter and its gettext look-ups)."""
    for cap in CAPABILITIES:
        if only is not None and cap.verb != only:
            continue
        p = verbs.add_parser(cap.verb, help=cap.summary, description=f"{cap.description} "
                             f"(the capability {cap.name}; also served by `majordomus serve` and `majordomus mcp`)")
        for param in cap.parameters:
            if param.positional and param.required:
                p.add_argument(param.name, metavar=param.name.upper(), help=param.summary)
            elif param.positional:
                p.add_argument(param.name, metavar=param.name.upper(), help=param.summary, nargs="?", default=None)
            else:
                choices = param.schema.get("enum")
                p.add_argument(f"--{param.name.replace('_', '-')}", dest=param.name, help=param.summary,
                               required=param.required, **({"choices": choices} if choices else {}))
        if cap.verb == "candidates":  # a person reads the head of the queue; the data has it whole
            p.add_argument("--all", action="store_true", help=f"list every candidate (without it: the first "
                           f"{SHOWN} in review order, and how many more; --json always lists them all)")
        p.add_argument("--json", action="store_true", help="print the result as JSON (its schema: "
                       "`majordomus openapi`)")
        p.set_defaults(handler=lambda a, cap=cap: run(cap, a))

    if only is not None and only != "edges":
        return
    from majordomus.knowledge.graph import TYPES  # the graph's module for `edges` alone

    e = verbs.add_parser("edges", help="the knowledge graph (derived_from, relates_to, superseded_by)",
                         description="Edges between records (knowledge:<id> on both sides) and to external "
                         "targets (session:, commit:, file:, ... resolved by `majordomus knowledge check`, "
                         "never reported as dangling).")
    e.add_argument("id", metavar="ID", nargs="?", help="only the edges touching this record")
    e.add_argument("--type", choices=TYPES, help="only edges of this type")
    e.add_argument("--json", action="store_true", help="print nodes and edges as JSON")
    e.set_defaults(handler=lambda a: edges(a.type, a.id, a.json))


def _switches(cap: Capability) -> tuple[str, ...]:
    """The flags of a capability's verb that take no value (`add_verbs` declares them)."""
    return ("--all", "--json") if cap.verb == "candidates" else ("--json",)


def direct(verb: str, words: list[str]) -> tuple[Capability, Any] | None:
    """The capability of `knowledge VERB WORDS` and the arguments the parser would give its `run`,
    when WORDS are the verb's switches, each at most once, and at most one value for its one
    positional parameter (not starting with `-`), a required one given (`record ID --json`,
    `search TEXT`); every other parameter None: `cli/main.py` runs it without argparse, whose
    import (`gettext`, `locale`, `re`) and parser were a tenth of `knowledge candidates`'
    instructions (docs/PERFORMANCE.md, issue 31's tenth step). None for anything else (an
    abbreviation, an option's value, a value like an option, two values, `--help`): the parser
    answers it."""
    cap = next((c for c in CAPABILITIES if c.verb == verb), None)
    if cap is None:
        return None
    flags = [w for w in words if w.startswith("-")]
    values = [w for w in words if not w.startswith("-")]
    positional = [p for p in cap.parameters if p.positional]
    if len(set(flags)) != len(flags) or not set(flags) <= set(_switches(cap)) or len(values) > len(positional) \
            or len(positional) > 1 or any(p.required for p in cap.parameters if not p.positional) \
            or any(p.required for p in positional) and not values:
        return None
    args: Any = SimpleNamespace(**{p.name: None for p in cap.parameters},
                                      **{s[2:]: s in flags for s in _switches(cap)})
    for param, value in zip(positional, values):
        setattr(args, param.name, value)
    return cap, args


def run(cap: Capability, args: argparse.Namespace) -> int:

    ws = open_workspace()
    if cap.verb == "candidates" and not args.json:  # the head of the queue: only its rows decoded
        _candidates(*head(ws, None if args.all else SHOWN), every=args.all)
        return OK
    if cap.verb == "candidates":  # the whole queue's --json as kept (`answers.encoded`)
        result = encoded(ws, "queue.text", _text, 1)
        if type(result) is bytes:
            show_json(result)
            return OK
    else:
        result = call(ws, cap, {p.name: getattr(args, p.name, None) for p in cap.parameters})
    if args.json:
        emit_json(result)
    else:
        RENDER.get(cap.verb, lambda r: emit_json(r))(result)
    return OK


def _text(value: Any) -> bytes | None:
    """What `emit_json` prints of `value`, as bytes (`encoded` keeps them)."""
    try:
        return json_text(value).encode("utf-8")
    except UnicodeError:  # a lone surrogate: `emit_json` says it as it always does
        return None


def _candidates(shown: list[dict[str, Any]], total: int, untracked: list[str], every: bool = False) -> None:
    """The queue as a table: its first rows in review order (this branch first, oldest first),
    `shown`, then how many more of `total` wait, and the `git add` of those git does not track (the
    first few, unless `every`). A queue of thousands is read at its head; the rest is a screenful
    nobody reads and a terminal's time to print."""
    if not shown:
        say("no candidates await review")
        return
    rows = [[line(c["id"]), line(c["class"]), line(c["branch"] or "(unattributed)"), _waited(c["age_minutes"]),
             line(c["title"])] for c in shown]
    show(table(rows, ["ID", "CLASS", "BRANCH", "WAITING", "TITLE"]))
    if len(shown) < total:
        say(f"{total - len(shown)} more candidate(s) await review: run `majordomus knowledge "
            "candidates --all` to list them all")
    if untracked:  # a deriver's run leaves a hundred: the first few named, then how to list them all
        named = untracked if every or len(untracked) <= UNTRACKED_SHOWN + 1 else untracked[:UNTRACKED_SHOWN]
        more = len(untracked) - len(named)
        say(f"{len(untracked)} candidate(s) not tracked by git, so reviewed on no other checkout: "
            f"git add {' '.join(line(p) for p in named)}"
            + (f" and {more} more (`majordomus knowledge candidates --all` names them all)" if more else ""))


def _waited(minutes: int | None) -> str:
    from majordomus.knowledge.accumulation import minutes as waited  # the queue's module: its readers alone

    return "-" if minutes is None else waited(minutes * 60.0)


def _record(rec: dict[str, Any]) -> None:

    tracked = "tracked" if rec["tracked"] else "NOT tracked by git"
    say(f"{line(rec['path'])} ({line(rec['source'])}, {tracked})")
    if rec["problem"]:
        say(f"unreadable: {rec['problem']}")
        return
    show("---\n" + yamlio.dump(rec["meta"]) + "---\n" + (rec["body"] or ""))
    for ref in rec["references"]:  # talk: what each reference names, in words
        if ref["label"]:
            say(line(f"{ref['field']} {ref['ref']}: {ref['label']}"))
    if rec["currency"]:
        say(line(rec["currency"]["reason"] + ("" if rec["currency"]["state"] in ("current", "unknown") else
                                             f"; fix: majordomus knowledge reverify {rec['id']} < evidence")))
    review = rec["review"]
    if review:
        say(line(f"in the review queue: {_waited(review['age_minutes'])}"
                 + (f", measured from {review['age_detail']}" if review["age_detail"] else "")))


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def _status(st: dict[str, Any]) -> None:
    q, w, last = st["queue"], st["writer"], st["last_derivation"]
    out = [f"records: {st['records']} ({_counts(st['by_source'])})",
           f"by status: {_counts(st['by_status'])}",
           f"by class: {_counts(st['by_class'])}"]
    oldest = q["oldest"]
    age = (f"oldest {oldest['id']}, waiting {oldest['age_minutes']} min since {oldest['since']} "
           f"(measured from {oldest['detail']})") if oldest else "no queue age"
    out.append(f"queue: {q['length']} waiting (cap {q['max_files']}{', OVER' if q['over_cap'] else ''}); "
               f"{age}; {len(q['overdue'])} over {q['max_age_minutes']} min")
    out.append("last derivation: " + (f"{last['ts']} episode {last['episode'] or '(none named)'}: {last['written']} written, "
                                      f"{last['unchanged']} unchanged, {last['skipped']} skipped"
                                      if last else "none (`majordomus knowledge derive` runs one)"))
    out.append(f"writer: {w['reason']}" + ("" if w["fresh"] else " (fix: majordomus knowledge derive "
                                                                 f"--episode {w['episode']})"))
    cur = st["currency"]
    out.append(f"verified: {cur['current']} current, {cur['may_be_stale']} may be stale, {cur['unknown']} unknown, "
               f"{cur['disputed']} disputed" + (" (`majordomus knowledge stale` lists them with the fix)"
                                                if cur["attention"] else ""))
    out += [f"untracked: {p} (git add it)" for p in st["untracked"]]
    out += [f"unreadable: {u['path']}: {u['problem']}" for u in st["unreadable"]]
    show("\n".join(line(o) for o in out) + "\n")


def _search(hits: list[dict[str, Any]]) -> None:
    if not hits:
        say("no record matches (`majordomus knowledge search` with no text lists every record)")
        return
    rows = [[line(h["id"]), line(h["status"] + _marked(h["currency"])), line(h["class"]), line(h["title"])]
            for h in hits]
    show(table(rows, ["ID", "STATUS", "CLASS", "TITLE"]))


def _marked(state: dict[str, Any] | None) -> str:
    """` (may be stale)`, ` (disputed)`, ` (currency unknown)` after a verified record's status."""
    if state is None or state["state"] == "current":
        return ""
    return f" ({'currency unknown' if state['state'] == 'unknown' else state['state'].replace('_', ' ')})"


RENDER: dict[str, Callable[[Any], None]] = {"record": _record, "status": _status, "search": _search}


def edges(edge_type: str | None, rid: str | None, as_json: bool) -> int:

    from majordomus.knowledge.graph import edges as read

    graph = read(open_workspace(), edge_type, rid)
    if as_json:
        emit_json(graph)
        return OK
    for e in graph["edges"]:
        mark = "" if e["target"] == "record" else f"  ({e['target']})"
        show(line(f"{e['from']}  {e['type']}  {e['to']}{mark}") + "\n")
    if not graph["edges"]:
        say("no edges")
    if graph["dangling"]:
        say(f"{graph['dangling']} dangling edge(s): a knowledge: target names no record "
            "(`majordomus knowledge check` names the fix)")
    refused = sum(1 for e in graph["edges"] if e["target"] == "refused")
    if refused:
        say(f"{refused} refused edge(s): the schema admits no such reference there (knowledge:<id> is a "
            "relation's target, never a derived_from entry); `majordomus knowledge check` names the fix")
    return OK
