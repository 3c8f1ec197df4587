"""Compaction: it has no close to ride on, so it checkpoints and derives on its own switches
(`session.checkpoint_on_compact`, `session.knowledge_on_compact`).

A compaction that changes nothing records nothing: when the episode has recorded nothing since
its opening or its last checkpoint or derivation, and HEAD is where that line saw it, there is
nothing to checkpoint and nothing new to derive from. Gemini CLI fires its PreCompress before
every model turn, compressing or not; this is what keeps it from a checkpoint per turn.
"""
from __future__ import annotations

from majordomus.base import git
from majordomus.context import prebuilt, snapshot
from majordomus.evidence import episodes, work
from majordomus.session import pending
from majordomus.session.start import open_episode
from majordomus.store.workspace import Workspace
from majordomus.tasks import derive

# Lines that record no work: they never make a compaction worth recording.
BOOKKEEPING = frozenset({"provider.event.failed", "session.resumed", "session.refused",
                         "outbox.drained", "ledger.trimmed"})
# Lines after which what came before has been accounted for (the last two carry HEAD).
BOUNDARIES = frozenset({"knowledge.derived", "checkpoint.recorded", "session.opened"})


def nothing_new(ws: Workspace, episode: str) -> bool:
    """Whether `episode` recorded nothing since its last boundary line and HEAD has not moved."""
    head_then: str | None = None
    for line in reversed(ws.ledger.window(episode)):
        if line.event in BOOKKEEPING:
            continue
        if line.event not in BOUNDARIES:
            return False
        head = line.get("head")
        if isinstance(head, str):
            head_then = head
            break
    if head_then is None:
        return False
    try:
        return head_then == git.head(ws.root).sha
    except (OSError, git.GitError):  # git not on PATH: cannot tell, so the compaction is recorded
        return False


def compact(ws: Workspace, episode: str, trigger: str, agent: str | None = None) -> None:
    """Checkpoint and derive `episode` before its conversation is compacted; opens it first when
    no start was seen. A failed checkpoint never stops the derivation; it is raised after it."""
    if episodes.open_record(ws, episode) is None:
        opened = open_episode(ws, episode, source="compact", by="hook", agent=agent)
        snapshot.write_opening(ws, opened.episode, opened.record, opened.others_open)
    elif nothing_new(ws, episode):
        return
    failure: Exception | None = None
    if ws.policy.on("session.checkpoint_on_compact"):
        try:
            work.checkpoint(ws, note=f"compaction ({trigger})", episode=episode)
        except Exception as exc:  # noqa: BLE001 - a failed checkpoint must not stop the derivation
            failure = exc
    if ws.policy.on("session.knowledge_on_compact"):
        with pending.kept_on_busy(ws, episode):
            derive.derive(ws, episode)
    prebuilt.refresh(ws)  # the next start's briefing (this episode's own compact start composes)
    if failure is not None:
        raise failure
