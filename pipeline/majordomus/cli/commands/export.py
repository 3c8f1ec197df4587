"""majordomus knowledge export --agents-md [FILE]: the verified records, for every other agent."""
from __future__ import annotations

from majordomus.base.errors import OK, USAGE, FatalError
from majordomus.base.output import line, say, show
from majordomus.cli.commands import Subparsers
from majordomus.knowledge import export as exporter
from majordomus.store.workspace import open_workspace


def export_verbs(verbs: Subparsers) -> None:
    """Add `export` to `majordomus knowledge`'s verbs."""

    p = verbs.add_parser("export", help="write the verified records into AGENTS.md's marker block",
                         description="Write the verified records (constraints first, newest first) into "
                         "one block between two marker lines of AGENTS.md (read by Codex, Cursor, Gemini "
                         "CLI, Copilot, Amp, Aider and others), or of FILE. Deterministic, at most "
                         f"{exporter.MAX_CHARS} characters, written only when it changes; text outside "
                         "the markers is never touched. A person runs it; no hook does.")
    p.add_argument("--agents-md", dest="agents_md", action="store_true", required=True,
                   help="the AGENTS.md block (the one export there is)")
    p.add_argument("file", metavar="FILE", nargs="?", help="the file (default: AGENTS.md at the root)")
    p.set_defaults(handler=lambda a: export(a.agents_md, a.file))


def export(agents_md: bool, file: str | None) -> int:
    """`knowledge export --agents-md [FILE]`."""

    if not agents_md:
        raise FatalError("say what to export: `majordomus knowledge export --agents-md [FILE]`", USAGE)
    ws = open_workspace()
    done = exporter.export(ws, file)
    rel = ws.rel(done.path)
    show(line(rel) + "\n")
    listed = f"{done.shown} of {done.total} verified record{'s' if done.total != 1 else ''}"
    say(f"{'wrote' if done.written else 'unchanged'} {rel}: {listed} in its majordomus block"
        + ("" if done.shown == done.total else f" (the rest: `{exporter.ALL_OF_THEM}`)"))
    return OK
