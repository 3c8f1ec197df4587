"""Credentials in what the repository tracks: `knowledge check` screens every file git's index
holds under `.ai/repo/` (session records, rules, decision records, the policy, records), its name
included, and the majordomus block of `AGENTS.md`, whatever wrote them (a writer that screened,
an old version that did not, a hand edit, a merge).

The knowledge records it has parsed are screened field by field by the integrity check, which
names the field; here they are passed their names only. One `git ls-files` call; a file is read
only when it is a regular file reached through no link (`fsio.read_text`), and the screen's cheap
pre-test keeps detect-secrets unloaded unless a text looks like a credential.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from majordomus.base import fsio, git
from majordomus.base.credentials import credential_in
from majordomus.knowledge.export import BEGIN, END
from majordomus.store.workspace import Workspace

AGENTS_MD = "AGENTS.md"
FIX = ("remove it (and from git's history, then revoke it: it may have been pushed), "
       "then `majordomus knowledge check`")


def screen(ws: Workspace, parsed: Iterable[str],
           finding: Callable[[str, str | None, str, str], None]) -> None:
    """Report each tracked file under `.ai/repo/` (and the AGENTS.md block) that carries a
    credential, in its name or its text; `parsed`: the records the caller screened by field."""
    done = set(parsed)
    for rel in git.tracked(ws.root, ".ai/repo") or []:
        kind = credential_in(rel)
        if kind:
            finding(rel, "name", f"its file name carries a credential ({kind})", "rename it: " + FIX)
            continue
        if rel in done:
            continue
        text = _text(ws, rel)
        kind = credential_in(text)
        if kind:
            finding(rel, None, f"carries a credential ({kind}) in a tracked file", FIX)
    block = _block(_text(ws, AGENTS_MD), BEGIN, END)
    kind = credential_in(block)
    if kind:
        finding(AGENTS_MD, "majordomus block", f"carries a credential ({kind}) in a tracked file",
                "remove the record that carries it, then `majordomus knowledge export --agents-md`")


def _text(ws: Workspace, rel: str) -> str | None:
    try:
        return fsio.read_bytes(ws.root / rel).decode("utf-8", "replace")
    except OSError:
        return None  # gone, a link, a pipe, too large or not text: the other checks name it


def _block(text: str | None, begin: str, end: str) -> str | None:
    if not text:
        return None
    start = text.find(begin)
    stop = text.find(end, start + 1) if start >= 0 else -1
    return text[start:stop] if 0 <= start < stop else None
