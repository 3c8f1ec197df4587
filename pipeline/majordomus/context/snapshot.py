"""The opening snapshot: `.ai/local/session-contexts/<stamp>--<episode>.md` (`<stamp>-<span>--`
for a later span), written once when an episode's span opens and never changed. It is evidence of what the episode started from."""
from __future__ import annotations

from pathlib import Path

from majordomus.base.fsio import atomic_write
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.resources import data_dir
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any


def path_for(ws: Workspace, episode: str, opened: str, span: Any = None) -> Path:
    """The snapshot of the span opened at `opened`; a later span of a closed episode (`span` 2
    on) is numbered too, since a resume may open in the same second as the span it follows."""
    stamp = opened.replace("-", "").replace(":", "")
    number = f"-{span}" if isinstance(span, int) and span > 1 else ""
    return ws.contexts / f"{stamp}{number}--{episode}.md"


def write_opening(ws: Workspace, episode: str, record: dict[str, Any],
                  others_open: tuple[str, ...] = ()) -> Path:
    """Write the opening snapshot of `episode` from its open record, once."""
    path = path_for(ws, episode, record["opened"], record.get("span"))
    if path.exists():
        return path
    template = (data_dir("templates") / "opening-snapshot.md.tmpl").read_text(encoding="utf-8")
    atomic_write(path, root=ws.root, data=substitute(
        template, episode=episode, opened=record["opened"], source=record.get("source") or "-",
        by=record.get("by") or "-", branch=record.get("branch") or "(detached)",
        head=record.get("head") or "(no commit yet)",
        others=", ".join(others_open) or "none"))
    return path


def substitute(template: str, **values: str) -> str:
    """`string.Template(template).substitute(values)` for `$name` and `$$` (no `${name}`):
    `string` imports `re` and compiles Template's pattern, ~1 ms of every start for eleven
    placeholders. An unknown name is a KeyError, a `$` before no name a ValueError, as there."""
    head, *rest = template.split("$")
    out, literal = [head], False
    for n, part in enumerate(rest, 1):
        if not literal and not part and n == len(rest):
            raise ValueError("invalid placeholder in the template: a `$` at its end")
        if literal or not part:  # `$$`: one `$`, and what follows it is text
            out.append(part if literal else "$")
            literal = not literal and not part
            continue
        end = 0
        while end < len(part) and (part[end] == "_" or part[end].isascii() and part[end].isalnum()):
            end += 1
        if end == 0 or part[0].isdigit():
            raise ValueError(f"invalid placeholder in the template: ${part[:10]!r}")
        out += [str(values[part[:end]]), part[end:]]
    return "".join(out)
