"""Compaction: it has no close to ride on, so it checkpoints and derives on its own switches
(`session.checkpoint_on_compact`, `session.knowledge_on_compact`)."""
from __future__ import annotations

from majordomus.context import snapshot
from majordomus.evidence import episodes, work
from majordomus.session.start import open_episode
from majordomus.store.workspace import Workspace
from majordomus.tasks import derive


def compact(ws: Workspace, episode: str, trigger: str) -> None:
    """Checkpoint and derive `episode` before its conversation is compacted; opens it first when
    no start was seen. A failed checkpoint never stops the derivation; it is raised after it."""
    if episodes.open_record(ws, episode) is None:
        opened = open_episode(ws, episode, source="compact", by="hook")
        snapshot.write_opening(ws, opened.episode, opened.record, opened.others_open)
    failure: Exception | None = None
    if ws.policy.on("session.checkpoint_on_compact"):
        try:
            work.checkpoint(ws, note=f"compaction ({trigger})", episode=episode)
        except Exception as exc:  # noqa: BLE001 - a failed checkpoint must not stop the derivation
            failure = exc
    if ws.policy.on("session.knowledge_on_compact"):
        derive.derive(ws, episode)
    if failure is not None:
        raise failure
