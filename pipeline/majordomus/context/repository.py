"""The repository context: the one definition of it (seed 004, ADR 0004).

Policy in force, rules in effect, knowledge counts by status, the active task, the open
questions, the last handover's Next Action and the outbox. The working context of an episode
(`majordomus session context`) and the start briefing refer to this rather than resolve it again;
the briefing uses the same readers (`active_task`, `open_questions`, `last_handover`).
"""
from __future__ import annotations

from typing import Any

from majordomus.context.blocks import Block
from majordomus.context.blocks import render as render_blocks
from majordomus.context.working import last_handover
from majordomus.evidence import episodes, work
from majordomus.knowledge import queue
from majordomus.outbox import staging as staged
from majordomus.rules import ruleset
from majordomus.store.workspace import Workspace


def rules(ws: Workspace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The effective rule set as `majordomus check|doctor|watch` load it, and the rule files that
    are not in effect because they cannot be read (each with its fix)."""

    loaded = ruleset.load(ws)
    found = [{"id": r.id, "origin": r.origin, "class": r.cls, "dispatch": list(r.dispatch),
              "path": ws.rel(r.path)} for r in loaded.rules]
    problems = [{"file": p.file, "field": p.field, "what": p.what, "fix": p.fix} for p in loaded.problems]
    return found, problems


def knowledge(ws: Workspace) -> dict[str, dict[str, int]]:
    """Records under candidates/ and curated/ counted by the `status` of their front matter, each
    folder's counts sorted by status (through the knowledge index: a record unchanged since it was
    read is not read again, and the counting is the index's)."""
    return queue.status_counts(ws)


def outbox(ws: Workspace) -> dict[str, Any]:
    """The outbox as `majordomus drain` and doctor see it: counts, paths and the records a drain keeps."""

    return staged.pending(ws)


def resolve(ws: Workspace) -> dict[str, Any]:
    """The repository context, as data."""

    policy = ws.policy
    effective, problems = rules(ws)
    data: dict[str, Any] = {
        "policy": {"path": ws.rel(ws.policy_path),
                   "values": {k: {"value": v, "declared": policy.declares(k)} for k, v in policy.values.items()},
                   "problems": [{"key": k or None, "problem": m} for k, m in policy.problems],
                   "summary": policy.summary(ws.rel(ws.policy_path))},
        "rules": effective,
        "rule_problems": problems,
        "knowledge": knowledge(ws),
        "active_task": work.active_task(ws),
        "open_questions": work.open_questions(ws),
        "last_handover": last_handover([line] if (line := ws.ledger.last_handover()) else []),
        "outbox": outbox(ws),
        "open_episodes": episodes.open_episodes(ws),
        "episode": episodes.current(ws),
    }
    foreign = ws.foreign_local()
    if foreign:  # another checkout's ledger, task and questions: never presented as this one's
        data.update(active_task=None, open_questions=[], last_handover=None, open_episodes=[], episode=None,
                    local_state=foreign)
    return data


def blocks(data: dict[str, Any]) -> list[Block]:
    p, k, box = data["policy"], data["knowledge"], data["outbox"]
    out = [Block("Repository context", 1, ["Resolved now; the working context of the open episode is "
                                           "`majordomus session context`."])]
    if data.get("local_state"):
        out.append(Block("Local state not read", 2, [data["local_state"]]))
    refused = {q["key"] for q in p["problems"]}
    out.append(Block(f"Policy in force ({p['path']})", 2, ([p["summary"]] if p["summary"] else []) + [
        f"- {key}: {v['value']}" + (" (default: the file's value is refused, `majordomus doctor` says why)"
                                    if key in refused else
                                    "" if v["declared"] else " (default: the file does not declare it)")
        for key, v in p["values"].items()]))
    out.append(Block(f"Rules in effect ({len(data['rules'])})", 2, [], [
        f"- {r['id']} ({r['origin']}, {r['class']}; from {', '.join(r['dispatch'])})" for r in data["rules"]]
        + [f"- not in effect: {p['file']}" + (f" [{p['field']}]" if p["field"] else "") + f": {p['what']} "
           f"(fix: {p['fix']})" for p in data["rule_problems"]],
        "none: .ai/repo/rules/vendor/ and project/ hold no rule (`majordomus rules vendor update` "
        "vendors the standard package)"))

    def counted(name: str) -> str:
        counts = k[name]
        return (f"- {name}/: " + (", ".join(f"{n} {s}" for s, n in counts.items()) if counts else "none"))
    out.append(Block("Knowledge by status", 2, [counted("candidates"), counted("curated")]))
    task = data["active_task"]
    out.append(Block("Active task", 2, [f"{task['task']}: {task['title']}"
                                        + (f" (scope {task['scope']})" if task.get("scope") else "")
                                        if task else "none: `majordomus start \"TITLE\"` starts one"]))
    questions = data["open_questions"]
    out.append(Block(f"Open questions ({len(questions)})", 2, [], [f"- {q['question']}: {q['text']}" for q in questions],
                     "none: `majordomus question add \"TEXT\"` asks one"))
    hand = data["last_handover"]
    out.append(Block("Last handover", 2, [f"Next Action: {hand['next']} ({hand['ts']}, episode {hand['episode'] or '-'})"
                                          if hand else "none: `majordomus handover --next \"…\"` records one"]))
    held = box["sessions"] + box["candidates"]
    out.append(Block("Outbox", 2, [
        f"{box['sessions']} session record(s) and {box['candidates']} candidate(s) wait in {box['where']}/: "
        "the next episode boundary on a branch moves them into the tracked sections (`majordomus drain`)"
        if held else f"empty ({box['where']}/ holds nothing)"]
        + [f"- kept, tracked already with other bytes: {path} (settle which copy is right, then "
           "`majordomus drain`)" for path in box["conflicts"]]))
    opened = data["open_episodes"]
    out.append(Block("Episode", 2, [f"open: {', '.join(opened)}; this shell's is {data['episode']}"
                                    if opened else "none open: `majordomus session start` opens one"]))
    return out


def render(data: dict[str, Any]) -> str:
    return render_blocks(blocks(data))
