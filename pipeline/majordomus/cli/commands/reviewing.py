"""majordomus knowledge review: a person walks the review queue at a terminal.

The queue is `knowledge_base.candidates` (this branch first, oldest review age first), and each
candidate is shown through `knowledge_base.record` — the same answers the cockpit's pages and
`--json` give. Every act goes through `knowledge.review` (promote, reject: the same refusals, the
same ledger lines as `majordomus knowledge promote|reject`); the third act, an edit, is the
person's `$EDITOR` on the candidate's file. Nothing asks for an id that is not on the screen:
`reject --by` picks the replacing record from a numbered list.

An act is one key, without Enter (`cli/commands/terminal.py`: cbreak mode for the one read, the
terminal restored after it and on every signal); what is shown is wrapped to the terminal's width,
never inside a word; each candidate's evidence (its provenance) is resolved in words beside the
reference: the episode and its date, the task's title, the commit's subject. With standard input
not a terminal the keys are read a line at a time; `--json` lists the queue for a pipe.

`items` is what the walk walks: today the review queue's candidates. A second queue (verified
records that may be stale or are disputed) joins there, each item naming its queue.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from majordomus.base.errors import OK, FatalError
from majordomus.base.fsio import atomic_write, read_bytes, remove
from majordomus.base.output import emit_json
from majordomus.base.output import line as one_line
from majordomus.cli.commands import Subparsers, stalewalk
from majordomus.cli.commands.terminal import EndOfInput, ask, editor_command, interactive, key, run_editor, width, wrap
from majordomus.cli.commands.terminal import say as _say
from majordomus.knowledge import review as acts
from majordomus.knowledge.agenda import waited
from majordomus.readers import answers as kb
from majordomus.store import records
from majordomus.store.listing import listing
from majordomus.store.records import CLASSES
from majordomus.store.workspace import Workspace, open_workspace

ACTIONS = "[p]romote  [r]eject  [e]dit  [s]kip  [q]uit"
RULE = "─"  # a rule as wide as the terminal lets it be, up to 64
DROPPED = "#~"  # a line of an editor's evidence file starting with this is a hint, dropped


def add_review(verbs: Subparsers) -> None:  # the `knowledge` verbs
    r = verbs.add_parser("review", help="walk the review queue at a terminal: promote, reject, edit, skip",
                         description="Show each candidate (this branch first, oldest review age first) "
                         "with its body, its evidence resolved in words and its review age, and ask: "
                         "promote (evidence typed or from $EDITOR, class may change), reject (a reason, or "
                         "the record that replaces it), edit in $EDITOR, skip, quit: one key each, no Enter. "
                         "Standard input that is not a terminal is read a line at a time; --json lists "
                         "the queue instead.")
    r.add_argument("--json", action="store_true", help="print the queue, in review order, as JSON")
    r.set_defaults(handler=lambda a: review(a.json))


@dataclass
class Tally:
    promoted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # the second queue's acts: "reverified" and "retired" ids
    second: dict[str, list[str]] = field(default_factory=lambda: {"reverified": [], "retired": []})


def items(ws: Workspace) -> list[dict[str, Any]]:
    """What the walk walks, in the order a person meets it: the review queue's candidates
    (`knowledge_base.candidates`), each marked with its queue. A second queue joins here."""
    return [{**c, "queue": "candidates"} for c in kb.candidates(ws)]


def review(as_json: bool) -> int:
    """`knowledge review [--json]`."""
    ws = open_workspace()
    if as_json:
        emit_json(kb.candidates(ws))
        return OK
    editor_command()  # an unparsable $EDITOR is refused now (exit 2), not halfway through
    queue = items(ws)
    second = stalewalk.queue(ws)
    if not queue and not second:
        _say("No candidate awaits review, and no verified record needs a second look. "
             "(`majordomus knowledge status` shows the store.)")
        return OK
    tally = Tally()
    going = True
    if queue:
        here = sum(1 for c in queue if c["this_branch"])
        _say("\n".join(wrap(f"{len(queue)} candidate(s) await review, {here} of them from this branch: this "
                            "branch first, oldest first.")))
        _say("\n".join(wrap(f"For each: {ACTIONS}" + (" (one key, no Enter)." if interactive() else "."))))
    try:
        for number, item in enumerate(queue, 1):
            if not _one(ws, number, len(queue), item, tally):
                going = False
                break
        if going and second:
            stalewalk.walk(ws, second, lambda rid: _evidence(ws, rid), tally.second)
    except (KeyboardInterrupt, EndOfInput):
        _say()
    _summary(ws, tally, len(queue))
    return OK


def _one(ws: Workspace, number: int, total: int, item: dict[str, Any], tally: Tally) -> bool:
    """Review one candidate; False when the person quits."""
    rid = item["id"]
    while True:
        try:
            shown = kb.record(ws, rid)
        except FatalError as exc:  # gone since the queue was read (another act, a rename)
            _say(f"{rid}: {exc.message}; next.")
            return True
        if (shown.get("meta") or {}).get("status", "candidate") != "candidate":
            _say(f"{rid} is no longer a candidate; next.")
            return True
        _show(number, total, item, shown)
        choice = key(f"{ACTIONS} ? ")
        if choice == "q":
            return False
        if choice == "s":
            tally.skipped.append(rid)
            return True
        if choice == "p" and _promote(ws, rid, shown):
            tally.promoted.append(rid)
            return True
        if choice == "r" and _reject(ws, rid):
            tally.rejected.append(rid)
            return True
        if choice == "e":
            if _edit(ws, shown) and rid not in tally.edited:
                tally.edited.append(rid)
            continue
        if choice not in ("p", "r"):
            _say("Press p, r, e, s or q." if interactive() else "Type p, r, e, s or q, then Enter.")


def _show(number: int, total: int, item: dict[str, Any], shown: dict[str, Any]) -> None:
    meta = shown.get("meta") or {}
    where = f"this branch ({item['branch']})" if item["this_branch"] else (
        f"branch {item['branch']}" if item["branch"] else "unattributed: this checkout cannot place its episode")
    since = f" — from {item['age_source']}: {item['age_detail']}" if item["age_source"] else ""
    lines = ["", f"{RULE * min(64, width() - 12)} {number} of {total}", *wrap(str(meta.get("title") or item["title"])),
             *wrap(f"{meta.get('class', item['class'])} · candidate {shown['id']} · {where}", "  "),
             *wrap(f"{waited(item['age_minutes'])}{since}", "  ")]
    if shown.get("problem"):
        lines += wrap(f"does not parse: {shown['problem']}", "  ")
    body = (shown.get("body") or "").rstrip("\n")
    if body:
        lines += ["", *wrap(body, "  ")]
    refs = shown.get("references") or []
    if refs:
        lines += ["", "  Evidence"] + [w for r in refs for w in wrap(_in_words(r), "    ", "      ")]
    tracked = "tracked" if shown["tracked"] else "not tracked by git yet: `git add` it"
    lines += ["", *wrap(f"{shown['path']} ({tracked})", "  ")]
    _say("\n".join(lines))


def _in_words(ref: dict[str, Any]) -> str:
    """One reference as a person reads it: what it names first, then the reference as written."""
    said = ref["label"] or ("not found in this checkout" if ref["resolved"] is False else "")
    where = ref["ref"] if ref["field"] == "derived_from" else f"{ref['field']} {ref['ref']}"
    return f"{said} ({where})" if said else where


def _evidence(ws: Workspace, rid: str) -> str | None:
    """The evidence, typed here (an empty line ends it) or written in $EDITOR (`:e`)."""
    _say("Evidence, in your own words: type it and end with an empty line, or type :e to write it in "
         "$EDITOR. Nothing typed cancels.")
    typed: list[str] = []
    while True:
        line = ask("  | ")
        if not line.strip():
            break
        if not typed and line.strip() == ":e":
            return _evidence_in_editor(ws, rid)
        typed.append(line)
    return "\n".join(typed) + "\n" if typed else None


def _evidence_in_editor(ws: Workspace, rid: str) -> str | None:
    """The evidence written in $EDITOR. What an editor that failed or was killed leaves is kept
    and opened again by the next `:e`: nothing the person wrote is lost."""
    path = ws.state / "review" / f"{rid}.evidence.md"
    template = (f"{DROPPED} The evidence for promoting {rid}, in your own words. Lines starting "
                f"with {DROPPED} are dropped;\n{DROPPED} an empty file cancels.\n").encode("utf-8")
    if not path.is_file():
        atomic_write(path, template, root=ws.root)
    if not run_editor(path):
        if path.is_file() and read_bytes(path) != template:
            _say(f"What you wrote is kept in {ws.rel(path)}: :e opens it again.")
        else:
            remove(path, root=ws.root)
        return None
    text = read_bytes(path).decode("utf-8", errors="replace") if path.is_file() else ""
    remove(path, root=ws.root)
    kept = [line for line in text.split("\n") if not line.startswith(DROPPED)]
    evidence = "\n".join(kept).strip("\n")
    return evidence + "\n" if evidence.strip() else None


def _promote(ws: Workspace, rid: str, shown: dict[str, Any]) -> bool:
    current = str((shown.get("meta") or {}).get("class") or "convention")
    while True:
        answer = ask(f"Class [{current}] ({', '.join(CLASSES)}; Enter keeps it): ")
        cls = answer.strip().lower() or current
        if cls in CLASSES:
            break
        _say(f"{cls!r} is not a class: one of {', '.join(CLASSES)}.")
    evidence = _evidence(ws, rid)
    if evidence is None:
        _say("Cancelled: nothing promoted.")
        return False
    try:
        act = acts.promote(ws, rid, evidence, cls if cls != current else None)
    except FatalError as exc:
        _say(f"Refused: {exc.message}")
        return False
    staged = "staged" if act.staged is None else f"not staged: {act.staged}"
    _say(f"Promoted {rid} to {ws.rel(act.path)}: {act.status}, class {cls}, by {act.by} ({staged}).")
    return True


def _replacements(ws: Workspace, rid: str) -> list[tuple[str, str, str]]:
    """(id, status, title) of every record that may replace `rid`: the store's, not superseded."""
    found = []
    for entry in listing(ws).entries:
        if entry.id == rid:
            continue
        meta = records.front(entry.path) or {}
        status = str(meta.get("status") or "")
        if status in ("candidate", "verified"):
            found.append((entry.id, status, str(meta.get("title") or "").split("\n", 1)[0]))
    return sorted(found, key=lambda r: (r[1] != "verified", r[2].casefold(), r[0]))  # verified first, by title


def _reject(ws: Workspace, rid: str) -> bool:
    _say("Why is it rejected? One line in your own words; or :by to pick the record that replaces it. "
          "Nothing typed cancels.")
    reason: str | None = ask("  > ")
    if reason is None or not reason.strip():
        _say("Cancelled: nothing rejected.")
        return False
    by_id = None
    if reason.strip() == ":by":
        choices = _replacements(ws, rid)
        if not choices:
            _say("No other record could replace it: reject it with a reason instead.")
            return False
        for n, (other, status, title) in enumerate(choices, 1):
            _say("\n".join(wrap(f"{n:>3}  {one_line(title)}  ({one_line(status)}, {one_line(other)})", "  ", "       ")))
        picked = ask("The number of the record that replaces it (Enter cancels): ")
        if not picked.strip():
            _say("Cancelled: nothing rejected.")
            return False
        if not picked.strip().isdigit() or not 1 <= int(picked) <= len(choices):
            _say(f"{picked.strip()!r} is not one of the numbers shown: nothing rejected.")
            return False
        by_id = choices[int(picked) - 1][0]
        reason = ask("And why, in one line (Enter to say nothing more): ")
        reason = reason if reason and reason.strip() else None
    try:
        act = acts.reject(ws, rid, reason, by_id)
    except FatalError as exc:
        _say(f"Refused: {exc.message}")
        return False
    _say(f"Rejected {rid}" + (f", superseded by {by_id}" if by_id else "") + f": {ws.rel(act.path)}.")
    return True


def _edit(ws: Workspace, shown: dict[str, Any]) -> bool:
    """The third act: the person's editor on the candidate's file. True when the bytes changed."""
    path = ws.root / shown["path"]
    before = path.read_bytes()
    if not run_editor(path):
        return False
    try:
        after = path.read_bytes()
    except FileNotFoundError:
        _say(f"Edited: {shown['path']} is gone (deleting hands the id back to the deriver).")
        return True
    if after == before:
        _say("Unchanged.")
        return False
    _say(f"Edited {shown['path']}: the deriver leaves an edited candidate alone. "
          "Commit it beside the candidates.")
    return True


def _summary(ws: Workspace, tally: Tally, total: int) -> None:
    done = len(tally.promoted) + len(tally.rejected) + len(tally.skipped)
    left = len(kb.candidates(ws))
    _say(f"\nReviewed {done} of {total}: {len(tally.promoted)} promoted, {len(tally.rejected)} rejected, "
          f"{len(tally.edited)} edited, {len(tally.skipped)} skipped. {left} candidate(s) still await review"
          + ("; `majordomus knowledge review` again to continue." if left else "."))
    again = tally.second
    if again["reverified"] or again["retired"]:
        _say(f"Verified records looked at again: {len(again['reverified'])} re-verified, "
             f"{len(again['retired'])} retired.")
    if tally.promoted or tally.rejected or tally.edited or again["reverified"] or again["retired"]:
        _say("Commit .ai/repo/knowledge/ so every clone sees the acts.")
