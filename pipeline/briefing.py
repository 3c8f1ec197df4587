"""The start briefing: what the session-start hook prints for the agent to read.

Sections, in order: active task; open questions; candidates awaiting review on this branch;
the last handover. Lists are bounded by `session.briefing_budget_lines`; absence is printed.
"""
from __future__ import annotations

from pipeline.workspace import Workspace

CEILING = 10_000  # Claude Code cuts hook context above this to a short preview


def _bounded(items: list[str], budget: int, more: str) -> list[str]:
    if len(items) <= budget:
        return items
    shown = max(budget - 1, 0)
    return items[:shown] + [f"  … {len(items) - shown} more: {more}"]


def compose(ws: Workspace, episode: str, source: str = "startup") -> str:
    from pipeline import candidates, git, work

    budget = int(ws.policy["session.briefing_budget_lines"])
    lines = [f"# Majordomus briefing — episode {episode} ({source})", ""]
    task = work.active_task(ws)
    lines.append("## Active task")
    lines.append(f"{task['task']}: {task['title']}" if task else
                 "none (majordomus start \"TITLE\" starts one)")
    lines.append("")
    questions = work.open_questions(ws)
    lines.append(f"## Open questions ({len(questions)})")
    if questions:
        lines += _bounded([f"- {q['question']}: {q['text']}" for q in questions], budget,
                          "majordomus question list")
    else:
        lines.append("none")
    lines.append("")
    branch = git.head(ws.root).branch
    queue = [c for c in candidates.waiting(ws) if c.branch == branch or c.branch is None]
    lines.append("## Candidates awaiting review on this branch")
    lines.append(f"{len(queue)} candidate{'s' if len(queue) != 1 else ''}")
    entries = [f"- {c.id}" + ("" if c.branch else " (unattributed: its episode is not known here)")
               for c in queue]
    lines += _bounded(entries, budget, "majordomus knowledge candidates")
    lines.append("")
    last = None
    for line in ws.ledger.read(contains='"handover.recorded"').lines:
        if line.event == "handover.recorded":
            last = line
    lines.append("## Last handover")
    lines.append(f"Next: {last.get('next')} ({last.ts}, episode {last.session})" if last else
                 "none (majordomus handover --next \"…\" records one)")
    text = "\n".join(lines) + "\n"
    if len(text) > CEILING:
        cut = text[: CEILING - 200].rsplit("\n", 1)[0]
        text = cut + "\n… briefing trimmed at 10,000 characters: `majordomus context` shows it all\n"
    return text
