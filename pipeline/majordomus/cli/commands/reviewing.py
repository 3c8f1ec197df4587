"""majordomus knowledge review: a person walks the review queue at a terminal.

The queue is `knowledge_base.candidates` (this branch first, oldest review age first), and each
candidate is shown through `knowledge_base.record` — the same answers the cockpit's pages and
`--json` give. Every act goes through `knowledge.review` (promote, reject: the same refusals, the
same ledger lines as `majordomus knowledge promote|reject`); the third act, an edit, is the
person's `$EDITOR` on the candidate's file. Nothing asks for an id that is not on the screen:
`reject --by` picks the replacing record from a numbered list.

With standard input not a terminal there is nothing to ask: one line says so, and `--json`
lists the queue for a pipe.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majordomus.base.errors import OK, USAGE, FatalError
from majordomus.base.fsio import atomic_write, read_bytes, remove
from majordomus.base.output import emit_json, show
from majordomus.base.output import line as one_line
from majordomus.cli.commands import Subparsers
from majordomus.knowledge import review as acts
from majordomus.knowledge.agenda import waited
from majordomus.readers import answers as kb
from majordomus.store import records
from majordomus.store.listing import listing
from majordomus.store.records import CLASSES
from majordomus.store.workspace import Workspace, open_workspace

ACTIONS = "[p]romote  [r]eject  [e]dit  [s]kip  [q]uit"
RULE = "─" * 64
DROPPED = "#~"  # a line of an editor's evidence file starting with this is a hint, dropped


def add_review(verbs: Subparsers) -> None:  # the `knowledge` verbs
    r = verbs.add_parser("review", help="walk the review queue at a terminal: promote, reject, edit, skip",
                         description="Show each candidate (this branch first, oldest review age first) "
                         "with its body, provenance resolved and review age, and ask: promote (evidence "
                         "typed or from $EDITOR, class may change), reject (a reason, or the record that "
                         "replaces it), edit in $EDITOR, skip, quit. Needs a terminal on standard input; "
                         "--json lists the queue instead.")
    r.add_argument("--json", action="store_true", help="print the queue, in review order, as JSON")
    r.set_defaults(handler=lambda a: review(a.json))


@dataclass
class Tally:
    promoted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def review(as_json: bool) -> int:
    """`knowledge review [--json]`."""
    ws = open_workspace()
    if as_json:
        emit_json(kb.candidates(ws))
        return OK
    if sys.stdin is None or not sys.stdin.isatty():
        raise FatalError("knowledge review asks at a terminal and standard input is not one: "
                         "`majordomus knowledge review --json` lists the queue, `majordomus knowledge "
                         "promote ID < evidence` and `reject ID --reason …` act on one", USAGE)
    queue = kb.candidates(ws)
    if not queue:
        _say("No candidate awaits review. (`majordomus knowledge status` shows the store.)")
        return OK
    here = sum(1 for c in queue if c["this_branch"])
    _say(f"{len(queue)} candidate(s) await review, {here} of them from this branch: this branch first, "
          "oldest first.")
    _say(f"For each: {ACTIONS}.")
    tally = Tally()
    try:
        for number, item in enumerate(queue, 1):
            if not _one(ws, number, len(queue), item, tally):
                break
    except (KeyboardInterrupt, EndOfInput):
        _say()
    _summary(ws, tally, len(queue))
    return OK


def _say(text: str = "") -> None:
    """One message to the person: its stored text (a title, a body, a reason) has its control
    characters escaped, as on every human output."""
    show(text + "\n")


class EndOfInput(Exception):
    """Ctrl-D: the person has nothing more to say; the review ends where it is."""


def _ask(prompt: str) -> str:
    """One line from the person; the end of input (Ctrl-D) ends the review."""
    try:
        return input(prompt)
    except EOFError:
        _say()
        raise EndOfInput from None


def _one(ws: Workspace, number: int, total: int, item: dict[str, Any], tally: Tally) -> bool:
    """Review one candidate; False when the person quits."""
    rid = item["id"]
    while True:
        try:
            shown = kb.record(ws, rid)
        except FatalError as exc:  # gone since the queue was read (another act, a rename)
            _say(f"{rid}: {exc.message}; next.")
            return True
        if (shown.get("meta") or {}).get("status", "candidate") != "candidate" or shown["source"] != "candidates":
            _say(f"{rid} is no longer a candidate; next.")
            return True
        _show(number, total, item, shown)
        answer = _ask(f"{ACTIONS} ? ")
        if answer.strip().lower() in ("q", "quit"):
            return False
        choice = answer.strip().lower()[:1]
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
            _say("Type p, r, e, s or q, then Enter.")


def _show(number: int, total: int, item: dict[str, Any], shown: dict[str, Any]) -> None:
    meta = shown.get("meta") or {}
    where = f"this branch ({item['branch']})" if item["this_branch"] else (
        f"branch {item['branch']}" if item["branch"] else "unattributed: this checkout cannot place its episode")
    lines = ["", f"{RULE} {number} of {total}", str(meta.get("title") or item["title"]),
             f"  {meta.get('class', item['class'])} · candidate {shown['id']} · {where}",
             f"  {waited(item['age_minutes'])}"
             + (f" — from {item['age_source']}: {item['age_detail']}" if item["age_source"] else "")]
    if shown.get("problem"):
        lines.append(f"  does not parse: {shown['problem']}")
    body = (shown.get("body") or "").rstrip("\n")
    if body:
        lines.append("")
        lines += [f"  {line}".rstrip() for line in body.split("\n")]
    refs = shown.get("references") or []
    if refs:
        lines += ["", "  Provenance"]
        width = max(len(r["ref"]) for r in refs)
        for r in refs:
            said = r["label"] if r["label"] else ("—" if r["resolved"] is None else "")
            lines.append(f"    {r['field']:<13} {r['ref']:<{width}}  {said}".rstrip())
    tracked = "tracked" if shown["tracked"] else "not tracked by git yet: `git add` it"
    lines += ["", f"  {shown['path']} ({tracked})"]
    _say("\n".join(lines))


def _editor() -> list[str] | None:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    return shlex.split(command) if command and command.strip() else None


def _run_editor(path: Path) -> bool:
    """Open `path` in the person's editor; False when there is none or it failed."""
    editor = _editor()
    if editor is None:
        _say("No editor: set $EDITOR (for example EDITOR=nano) and run the review again.")
        return False
    try:
        done = subprocess.run([*editor, str(path)], check=False)
    except OSError as exc:
        _say(f"The editor {editor[0]!r} did not start: {exc.strerror or exc}.")
        return False
    if done.returncode != 0:
        _say(f"The editor exited {done.returncode}: nothing taken from it.")
        return False
    return True


def _evidence(ws: Workspace, rid: str) -> str | None:
    """The evidence, typed here (an empty line ends it) or written in $EDITOR (`:e`)."""
    _say("Evidence, in your own words: type it and end with an empty line, or type :e to write it in "
          "$EDITOR. Nothing typed cancels.")
    typed: list[str] = []
    while True:
        line = _ask("  | ")
        if not line.strip():
            break
        if not typed and line.strip() == ":e":
            return _evidence_in_editor(ws, rid)
        typed.append(line)
    return "\n".join(typed) + "\n" if typed else None


def _evidence_in_editor(ws: Workspace, rid: str) -> str | None:
    path = ws.state / "review" / f"{rid}.evidence.md"
    atomic_write(path, (f"{DROPPED} The evidence for promoting {rid}, in your own words. Lines starting "
                        f"with {DROPPED} are dropped;\n{DROPPED} an empty file cancels.\n").encode("utf-8"),
                 root=ws.root)
    try:
        if not _run_editor(path):
            return None
        text = read_bytes(path).decode("utf-8", errors="replace")
    finally:
        remove(path, root=ws.root)
    kept = [line for line in text.split("\n") if not line.startswith(DROPPED)]
    evidence = "\n".join(kept).strip("\n")
    return evidence + "\n" if evidence.strip() else None


def _promote(ws: Workspace, rid: str, shown: dict[str, Any]) -> bool:
    current = str((shown.get("meta") or {}).get("class") or "convention")
    while True:
        answer = _ask(f"Class [{current}] ({', '.join(CLASSES)}; Enter keeps it): ")
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
    under = f"episode {act.episode}" if act.episode else "terminal (no episode open)"
    _say(f"Promoted {rid} to {ws.rel(act.path)}: verified, class {cls}, under {under}.")
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
    reason: str | None = _ask("  > ")
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
            _say(f"  {n:>3}  {one_line(title)}  ({one_line(status)}, {one_line(other)})")
        picked = _ask("The number of the record that replaces it (Enter cancels): ")
        if not picked.strip():
            _say("Cancelled: nothing rejected.")
            return False
        if not picked.strip().isdigit() or not 1 <= int(picked) <= len(choices):
            _say(f"{picked.strip()!r} is not one of the numbers shown: nothing rejected.")
            return False
        by_id = choices[int(picked) - 1][0]
        reason = _ask("And why, in one line (Enter to say nothing more): ")
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
    if not _run_editor(path):
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
    if tally.promoted or tally.rejected or tally.edited:
        _say("Commit .ai/repo/knowledge/ so every clone sees the acts.")
