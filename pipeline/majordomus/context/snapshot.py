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
    from string import Template


    path = path_for(ws, episode, record["opened"], record.get("span"))
    if path.exists():
        return path
    template = Template((data_dir("templates") / "opening-snapshot.md.tmpl").read_text(encoding="utf-8"))
    atomic_write(path, root=ws.root, data=template.substitute(
        episode=episode, opened=record["opened"], source=record.get("source") or "-",
        by=record.get("by") or "-", branch=record.get("branch") or "(detached)",
        head=record.get("head") or "(no commit yet)",
        others=", ".join(others_open) or "none"))
    return path
