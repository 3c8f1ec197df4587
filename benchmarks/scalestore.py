"""The synthetic store of benchmarks/scale.py, written directly (no import of the project's code).

One episode per record. Each episode's ledger lines are the ones the commands write:
session.opened, task.started, the evidence line (a decision, a verified task or a failed one),
checkpoints, small tasks, a question now and then, the one handover, knowledge.derived,
session.closed, then knowledge.promoted or knowledge.rejected after the close. Its record is
valid against knowledge/v1: two fifths wait for review (as the deriver renders them), two fifths
were rejected in place and one fifth promoted to curated/ (both as promote and reject rewrite
them). Each episode has its session record; everything is committed, references resolve, so
`knowledge check` finds nothing and doctor only the overdue review queue. Deterministic: the
same sizes give the same bytes.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IDENTITY = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
            "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z"}
EPOCH = 1735689600  # 2025-01-01T00:00:00Z: the synthetic ledger's first line
STEP_S = 30  # seconds between synthetic ledger lines: 1,000,000 lines span 347 days


def hex_digest(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def episode_id(k: int) -> str:
    """A Claude Code session id: a UUID (version 4 in form), deterministic in `k`."""
    h = hex_digest("episode", k)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def record_id(episode: str, *source: str) -> str:
    """`<episode>-<digest>`, the digest over the source object, as the deriver names a record."""
    blob = json.dumps(list(source), ensure_ascii=False, separators=(",", ":"))
    return f"{episode}-{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:12]}"


AREAS = ("the ledger", "the briefing", "the deriver", "the outbox", "the readers", "the rules",
         "the session record", "the policy loader", "the integrity check", "the MCP server")
CHOICES = ("an exclusive lock around appends", "atomic renames for every write", "one batched git call",
           "a text pre-filter before parsing", "UTC timestamps with a Z suffix", "the C YAML loader",
           "sorted output for stable bytes", "a bounded read of the file head")


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _single(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Store:
    root: Path
    lines: int
    records: int
    waiting: int = 0  # status candidate, in candidates/
    rejected: int = 0  # status superseded, in candidates/
    curated: int = 0  # status verified, in curated/
    sessions: int = 0
    ledger_bytes: int = 0
    build_s: float = 0.0


def _episode(k: int, budget: int, head: str, ts: Any, start: int) -> tuple[list[str], dict[str, str], str]:
    """(ledger lines, files by path, the record's fate) of synthetic episode `k`, its first line at
    `start`. Two fifths of the records wait for review, two fifths were rejected, one was promoted."""
    ep = episode_id(k)
    t1 = "t-" + hex_digest("task", k, 1)[:8]
    area, choice = AREAS[k % len(AREAS)], CHOICES[k % len(CHOICES)]
    title = f"Keep {area} fast ({k})"
    fate = ("waiting", "rejected", "rejected", "waiting", "promoted")[k % 5]
    kind = ("decision", "decision", "decision", "fact", "lesson")[int(hex_digest("kind", k)[:8], 16) % 5]
    if kind == "decision":
        text, why = f"Use {choice} in {area} (episode {k})", f"measured on the synthetic store, case {k % 97}"
        evidence = {"event": "decision.recorded", "task": t1, "text": text, "why": why}
        source: tuple[str, ...] = ("decision.recorded", text)
        cls, epi, rtitle, body = "convention", "decided", text, f"{text}\n\nWhy: {why}"
        refs = [f"session:{ep}", f"decision:{t1}"]
    elif kind == "fact":
        verify = f"pytest -q tests/test_mod{k % 50}.py"
        evidence = {"event": "task.finished", "task": t1, "title": title, "outcome": "completed",
                    "note": f".ai/local/state/completed/{t1}.md", "verify": verify}
        source = ("task.finished", t1, verify)
        cls, epi, rtitle = "fact", "observed", f"`{verify}` passes"
        body = f"The verification command `{verify}` exited 0 when task {title} completed."
        refs = [f"session:{ep}", f"task:{t1}"]
    else:
        reason = f"{area} needs {choice} first"
        evidence = {"event": "task.finished", "task": t1, "title": title, "outcome": "failed",
                    "note": f".ai/local/state/completed/{t1}.md", "reason": reason}
        source = ("task.finished", t1, "failed", reason)
        cls, epi, rtitle, body = "lesson", "observed", reason, f"Task {title} finished failed: {reason}"
        refs = [f"session:{ep}", f"task:{t1}"]
    if k % 25 == 0:
        refs.append(f"commit:{head}")
    relations = [f"file:src/mod{k % 50}.py"] if k % 7 == 0 else []
    rid = record_id(ep, *source)

    # opened, task.started, the evidence line, derived, closed (+ promoted or rejected): the rest is filler
    filler_n = budget - 5 - (0 if fate == "waiting" else 1)
    if filler_n < 0:
        raise SystemExit(f"an episode needs at least 6 ledger lines, not {budget}")
    # the filler: per 5 units two checkpoints, two small tasks and a question (7 lines); the
    # episode's one handover ends it
    filler: list[dict[str, Any]] = []
    j = 0
    while len(filler) < filler_n - 1:
        unit = j % 5
        if unit in (0, 2):
            filler.append({"event": "checkpoint.recorded", "task": t1,
                           "note": f"checkpoint {j} of episode {k}: {area} half done", "head": head})
        elif unit == 3:
            filler.append({"event": "question.opened", "question": "q-" + hex_digest("q", k, j)[:8], "task": t1,
                           "text": f"does {area} need {CHOICES[(k + j) % len(CHOICES)]}?"})
        else:
            t2 = "t-" + hex_digest("task", k, j + 2)[:8]
            filler.append({"event": "task.started", "task": t2, "title": f"tidy {area} ({j})",
                           "scope": f"src/mod{(k + j) % 50}.py"})
            filler.append({"event": "task.finished", "task": t2, "title": f"tidy {area} ({j})",
                           "outcome": "completed", "note": f".ai/local/state/completed/{t2}.md"})
        j += 1
    filler = filler[:filler_n - 1]
    if filler_n:
        filler.append({"event": "handover.recorded", "task": None, "next": f"continue {area} after episode {k}"})

    cand_path = f".ai/repo/knowledge/candidates/{rid}.md"
    acted_path = f".ai/repo/knowledge/curated/{rid}.md" if fate == "promoted" else cand_path
    half = len(filler) // 2
    body_lines: list[dict[str, Any]] = [
        {"event": "session.opened", "episode": ep, "source": "startup", "branch": "main", "head": head, "by": "hook"},
        {"event": "task.started", "task": t1, "title": title, "scope": None},
        *filler[:half], evidence, *filler[half:],
        {"event": "knowledge.derived", "episode": ep, "written": 1, "unchanged": 0, "paths": [cand_path]},
        {"event": "session.closed", "episode": ep, "reason": "other", "branch": "main", "head": head, "by": "hook"},
    ]
    stamps = [ts(start + i) for i in range(len(body_lines) + 1)]
    date = stamps[2 + half][:10]  # the evidence line's UTC day
    files: dict[str, str] = {}
    if fate == "waiting":  # as the deriver renders it
        files[cand_path] = "\n".join(
            ["---", f"id: {rid}", "kind: knowledge/v1", f"class: {cls}", "status: candidate", f"epistemics: {epi}",
             f"title: {_q(rtitle)}", f"date: {_q(date)}", "provenance:", "  origin: extracted",
             "  derived_from:"] + [f"    - {_q(r)}" for r in refs]
            + (["relations:"] + [x for t in relations for x in ("  - type: relates_to", f"    target: {_q(t)}")]
               if relations else [])
            + ["---", body, ""])
    else:  # as promote and reject rewrite it: YAML dumped, the act's section after the body
        status, section, note = (("verified", "# Evidence", f"reviewed in episode {k + 1}: the cited run is in CI")
                                 if fate == "promoted" else
                                 ("superseded", "# Rejected", f"not how {area} works any more ({k % 13})"))
        files[acted_path] = "\n".join(
            ["---", f"id: {rid}", "kind: knowledge/v1", f"class: {cls}", f"status: {status}", f"epistemics: {epi}",
             f"title: {_single(rtitle)}", f"date: {_single(date)}", "provenance:", "  origin: extracted",
             "  derived_from:"] + [f"  - {r}" for r in refs]
            + (["relations:"] + [x for t in relations for x in ("- type: relates_to", f"  target: {t}")]
               if relations else [])
            + ["---", body, "", section, "", note, ""])
    opened, closed = stamps[0], stamps[len(body_lines) - 1]
    files[f".ai/repo/sessions/{ep}.md"] = "\n".join(
        ["---", f"id: {_q(ep)}", "kind: session/v1", 'branch: "main"', f"opened: {_q(opened)}",
         f"closed: {_q(closed)}", 'source: "startup"', 'reason: "other"', f"head_open: {_q(head)}",
         f"head_close: {_q(head)}", "---",
         f"Episode {ep} opened {opened} (startup) on main and closed {closed} (other).", ""])
    out = []
    for i, obj in enumerate(body_lines):
        line = {"ts": stamps[i], "event": obj.pop("event"), "session": ep}
        line.update(obj)
        out.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    act: dict[str, Any] | None = None
    if fate == "promoted":
        act = {"event": "knowledge.promoted", "id": rid, "class": cls, "evidence_lines": 1, "path": acted_path,
               "by": "terminal", "sha256": hashlib.sha256(files[acted_path].encode("utf-8")).hexdigest()}
    elif fate == "rejected":
        act = {"event": "knowledge.rejected", "id": rid, "superseded_by": None, "reason": note, "path": acted_path,
               "by": "terminal"}
    if act is not None:  # a person's act at the terminal, after the episode closed
        out.append(json.dumps({"ts": stamps[len(body_lines)], "event": act.pop("event"), "session": None, **act},
                              ensure_ascii=False, separators=(",", ":")))
    return out, files, fate


def _git(root: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def build(root: Path, lines: int, records: int, env: dict[str, str], mj: Path) -> Store:
    """A committed repository whose ledger has exactly `lines` lines and whose store `records` records."""
    started = time.perf_counter()
    genv = {**env, **IDENTITY}
    _git(root, "init", "-q", "-b", "main", env=genv)
    (root / "README.md").write_text("# bench\n\nA synthetic repository for benchmarks/scale.py.\n")
    (root / "src").mkdir()
    for n in range(50):
        (root / f"src/mod{n}.py").write_text(f'"""Module {n}."""\nVALUE = {n}\n')
    _git(root, "add", "-A", env=genv)
    _git(root, "commit", "-q", "-m", "initial", env=genv)
    head = _git(root, "rev-parse", "HEAD", env=genv)
    for args in (["init"], ["capture", "install"]):
        subprocess.run([str(mj), *args], cwd=root, env=env, check=True, capture_output=True)
    policy = root / ".ai/repo/policy.yaml"
    text = policy.read_text(encoding="utf-8")
    cap = max(50_000, 4 * lines)
    if "retention_lines: 50000" not in text:
        raise SystemExit("policy.yaml has no `retention_lines: 50000` line to raise: update benchmarks/scale.py")
    policy.write_text(text.replace("retention_lines: 50000", f"retention_lines: {cap}"), encoding="utf-8")

    stamp_cache: dict[int, str] = {}

    def ts(i: int) -> str:
        s = stamp_cache.get(i)
        if s is None:
            s = stamp_cache[i] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(EPOCH + i * STEP_S))
        return s

    base, extra = divmod(lines, records)
    store = Store(root, lines, records)
    written = 0
    with open(root / ".ai/local/ledger.jsonl", "w", encoding="utf-8", newline="\n") as ledger:
        for k in range(records):
            budget = base + (1 if k < extra else 0)
            out, files, fate = _episode(k, budget, head, ts, written)
            if len(out) != budget:
                raise SystemExit(f"synthetic episode {k} has {len(out)} lines, not {budget}: fix benchmarks/scale.py")
            ledger.write("\n".join(out) + "\n")
            written += budget
            stamp_cache.clear()
            for rel, body in files.items():
                (root / rel).write_text(body, encoding="utf-8")
            store.sessions += 1
            if fate == "promoted":
                store.curated += 1
            elif fate == "rejected":
                store.rejected += 1
            else:
                store.waiting += 1
    store.ledger_bytes = (root / ".ai/local/ledger.jsonl").stat().st_size
    _git(root, "add", "-A", env=genv)
    _git(root, "commit", "-q", "-m", f"store: {records} records, {records} session records", env=genv)
    if _git(root, "status", "--porcelain", env=genv):
        raise SystemExit("the synthetic store left files git does not track: fix benchmarks/scale.py")
    store.build_s = time.perf_counter() - started
    return store


