"""The opening snapshot: `.ai/local/session-contexts/<stamp>--<episode>.md`, written once when an
episode opens and never changed. It is evidence of what the episode started from."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.workspace import Workspace


def path_for(ws: Workspace, episode: str, opened: str) -> Path:
    stamp = opened.replace("-", "").replace(":", "")
    return ws.contexts / f"{stamp}--{episode}.md"


def write_opening(ws: Workspace, opened: Any) -> Path:
    from string import Template

    from pipeline.fsio import atomic_write
    from pipeline.resources import data_dir

    record = opened.record
    path = path_for(ws, opened.episode, record["opened"])
    if path.exists():
        return path
    template = Template((data_dir("templates") / "opening-snapshot.md.tmpl").read_text(encoding="utf-8"))
    atomic_write(path, template.substitute(
        episode=opened.episode, opened=record["opened"], source=record.get("source") or "-",
        by=record.get("by") or "-", branch=record.get("branch") or "(detached)",
        head=record.get("head") or "(no commit yet)",
        others=", ".join(opened.others_open) or "none"))
    return path
