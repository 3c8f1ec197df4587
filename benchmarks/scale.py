#!/usr/bin/env python3
"""Issue 17's table: every command that grows with history, at two store sizes, against the floor.

    .venv/bin/python benchmarks/scale.py [--size small|large|both] [--runs N] [--budget S]
                                         [--json] [--json-file PATH] [--keep]

Sizes: small is 20,000 ledger lines and 500 knowledge records; large is 1,000,000 lines and 20,000
records, with `ledger.retention_lines` raised so the cap trims nothing. The store is written
directly (no import of the project's code): one episode per record, each episode's ledger lines
as the commands write them (session.opened, task.started, the evidence line, checkpoints,
questions, tasks, handovers, knowledge.derived, session.closed, then knowledge.promoted or
knowledge.rejected), its record valid against knowledge/v1 (two fifths waiting for review, two
fifths rejected in place, one fifth promoted to curated/) and its session record, all committed:
`knowledge check` finds nothing, doctor only the overdue queue. Then every row runs the real `majordomus` command or the real hook script that
`majordomus capture install` wrote, fed the JSON Claude Code sends, in that repository.

Each row: median wall ms, its ratio to the venv's own `python -c pass` (timed interleaved with
the rows, same run), peak RSS of the child process tree (from wait4), and the git processes the
command started (a `git` wrapper first on PATH logs each; only in the untimed warm-up run, so
the wrapper's cost stays out of the timings, except that a warm-up over 2 s, where the wrapper's
milliseconds are noise, also counts as a timed run). A row stops early when its time budget runs out
(at least one timed run): the `runs` column says how many it got. Bytecode is compiled first
and PYTHONDONTWRITEBYTECODE is dropped from the children's environment.

Each hook cycle opens an episode, appends 20 decisions to its ledger window, closes it (which
derives 20 candidates) and re-derives it (nothing to do), so the store grows by 20 records per
cycle; the read rows run first, on the store at its stated size, inside one open episode.
Reported, never asserted: the exit status is 0 whether the targets hold or not.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
MJ = BIN / "majordomus"
FLOOR = "python -c pass"
SIZES = {"small": (20_000, 500), "large": (1_000_000, 20_000)}
DECISIONS = 20
HISTORY_EVENT = "session.closed"
MCP_PROTOCOL = "2025-11-25"  # the newest revision reached through the initialize handshake
SLOW_MS = 2000  # a warm-up run slower than this is also a timed sample
TIMEOUT_S = 900
TIME_BIN = shutil.which("time", path="/usr/bin:/bin")  # GNU time, for the peak RSS of the warm-up run  # one command's bound; a slower one stops the benchmark
IDENTITY = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
            "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z"}
EPOCH = 1735689600  # 2025-01-01T00:00:00Z: the synthetic ledger's first line
STEP_S = 30  # seconds between synthetic ledger lines: 1,000,000 lines span 347 days


# ----------------------------------------------------------------------------------------------
# the synthetic store


def _hex(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def episode_id(k: int) -> str:
    """A Claude Code session id: a UUID (version 4 in form), deterministic in `k`."""
    h = _hex("episode", k)
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
    t1 = "t-" + _hex("task", k, 1)[:8]
    area, choice = AREAS[k % len(AREAS)], CHOICES[k % len(CHOICES)]
    title = f"Keep {area} fast ({k})"
    fate = ("waiting", "rejected", "rejected", "waiting", "promoted")[k % 5]
    kind = ("decision", "decision", "decision", "fact", "lesson")[int(_hex("kind", k)[:8], 16) % 5]
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
            filler.append({"event": "question.opened", "question": "q-" + _hex("q", k, j)[:8], "task": t1,
                           "text": f"does {area} need {CHOICES[(k + j) % len(CHOICES)]}?"})
        else:
            t2 = "t-" + _hex("task", k, j + 2)[:8]
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


def build(root: Path, lines: int, records: int, env: dict[str, str]) -> Store:
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
        subprocess.run([str(MJ), *args], cwd=root, env=env, check=True, capture_output=True)
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


# ----------------------------------------------------------------------------------------------
# running a command


@dataclass
class Sample:
    ms: float
    rss_kib: int
    cpu_ms: float  # user + system time of the process tree
    code: int
    stdout: bytes
    stderr: bytes


def _killer(pid: int) -> threading.Timer:
    def kill() -> None:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    timer = threading.Timer(TIMEOUT_S, kill)
    timer.daemon = True
    timer.start()
    return timer


def _probed(cmd: list[str], probe: bool, report: Path) -> list[str]:
    return [TIME_BIN, "-f", "%M", "-o", str(report), *cmd] if probe and TIME_BIN else cmd


def _peak(probe: bool, report: Path, usage: Any) -> int:
    """Peak RSS in KiB of the largest process of the tree. wait4's ru_maxrss counts, for our own
    child, the RSS of this process at the fork (exec records the old image's high-water mark), so
    the probe runs the command under /usr/bin/time, whose child forks from a small process."""
    if probe and TIME_BIN:
        lines = [x for x in report.read_text().split("\n") if x.strip()]
        if lines and lines[-1].strip().isdigit():
            return int(lines[-1])
    return int(usage.ru_maxrss)


def _cpu(usage: Any) -> float:
    return float(usage.ru_utime + usage.ru_stime) * 1000


def run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None, probe: bool = False) -> Sample:
    """One run of `cmd`: wall ms from spawn to reaping; with `probe`, the peak RSS of its process
    tree (the largest of the command and every descendant it waited for)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(prefix="rss.") as report:
        cmd = _probed(cmd, probe, Path(report.name))
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
        timer = _killer(proc.pid)
        if stdin is not None and proc.stdin is not None:
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Sample(elapsed * 1000, _peak(probe, Path(report.name), usage), _cpu(usage), proc.returncode,
                      out.read(), err.read())


def checked(sample: Sample, what: str, hook: bool = False) -> Sample:
    if sample.code != 0 or (hook and b"failed" in sample.stderr):
        raise SystemExit(f"{what} failed (exit {sample.code}): {sample.stderr.decode(errors='replace')[-800:]}")
    return sample


def mcp_run(cwd: Path, env: dict[str, str], probe: bool = False) -> Sample:
    """`majordomus mcp` over stdio JSON-RPC, as a client speaks it: initialize, the initialized
    notification, tools/list. Wall ms from spawn to the tools/list answer; RSS after it exits."""
    def send(obj: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(obj) + "\n").encode())
        proc.stdin.flush()

    buffer = b""

    def answer(want: int, deadline: float) -> dict[str, Any]:
        nonlocal buffer
        while True:
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                msg: dict[str, Any] = json.loads(line)
                if msg.get("id") == want:
                    if "error" in msg:
                        raise SystemExit(f"majordomus mcp answered request {want} with {msg['error']}")
                    return msg
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise SystemExit(f"majordomus mcp did not answer request {want} in {TIMEOUT_S} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise SystemExit(f"majordomus mcp closed its output before answering request {want}")
            buffer += chunk

    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile(prefix="rss.") as report:
        started = time.perf_counter()
        proc = subprocess.Popen(_probed([str(MJ), "mcp"], probe, Path(report.name)), cwd=cwd, env=env,
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err)
        timer = _killer(proc.pid)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + TIMEOUT_S
        try:
            send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": MCP_PROTOCOL, "capabilities": {},
                             "clientInfo": {"name": "majordomus-bench", "version": "1"}}})
            init = answer(1, deadline)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            listed = answer(2, deadline)
        except (SystemExit, BrokenPipeError) as exc:
            proc.kill()
            proc.wait()
            err.seek(0)
            raise SystemExit(f"{exc or 'majordomus mcp stopped reading'}; its stderr: "
                             f"{err.read().decode(errors='replace')[-600:]}") from None
        elapsed = time.perf_counter() - started
        assert proc.stdin is not None
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        sel.close()
        if not listed.get("result", {}).get("tools"):
            raise SystemExit(f"majordomus mcp listed no tools: {listed}")
        err.seek(0)
        return Sample(elapsed * 1000, _peak(probe, Path(report.name), usage), _cpu(usage), proc.returncode,
                      json.dumps(init["result"]).encode(), err.read())


# ----------------------------------------------------------------------------------------------
# rows and targets


@dataclass(frozen=True)
class Target:
    ratio: float | None = None  # at most this many times the floor
    wall_ms: float | None = None
    rss_mib: float | None = None
    git: int | None = None  # at most this many git processes
    linear: bool = False  # grows no faster than the store (judged when both sizes ran)

    def text(self) -> str:
        parts = []
        if self.linear:
            parts.append("linear")
        if self.ratio is not None:
            parts.append(f"≤ {self.ratio:g}×")
        if self.wall_ms is not None:
            parts.append(f"≤ {self.wall_ms:g} ms")
        if self.rss_mib is not None:
            parts.append(f"≤ {self.rss_mib:g} MiB")
        if self.git is not None:
            parts.append(f"{self.git} git")
        return ", ".join(parts) or "—"


HOOK_ROWS = ("session-start hook (briefing)", f"session-end hook (close + derive {DECISIONS})", "no-op re-derive")
READ_ROWS: dict[str, list[str]] = {
    "knowledge candidates": ["knowledge", "candidates"],
    "knowledge status": ["knowledge", "status"],
    "context": ["context"],
    "session context": ["session", "context"],
    "doctor": ["doctor"],
    "knowledge check": ["knowledge", "check"],
    f"history --event {HISTORY_EVENT}": ["history", "--event", HISTORY_EVENT],
}
MCP_ROW = "mcp initialize + tools/list"
ORDER = [FLOOR, *HOOK_ROWS, *READ_ROWS, MCP_ROW]


def target(row: str, size: str) -> Target | None:
    small = size == "small"
    if row == HOOK_ROWS[0]:
        return Target(ratio=4 if small else 6, git=1)
    if row == HOOK_ROWS[1]:
        return Target(ratio=10 if small else 12, git=1)
    if row == HOOK_ROWS[2]:
        return Target(ratio=8 if small else 10, git=1)
    if row in ("knowledge candidates", "knowledge status", "context", "session context"):
        return Target(ratio=6 if small else 10)
    if row in ("doctor", "knowledge check"):
        return Target(ratio=15) if small else Target(linear=True, rss_mib=300)
    if row.startswith("history"):
        return Target(ratio=6) if small else Target(linear=True, rss_mib=100)
    if row == MCP_ROW:
        return Target(wall_ms=250) if small else None
    return None


@dataclass
class Row:
    name: str
    ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    rss_kib: int | None = None  # from the warm-up run, under the probe
    git: int | None = None  # from the warm-up run, through the git wrapper
    git_cmds: list[str] = field(default_factory=list)

    def add(self, s: Sample) -> None:
        self.ms.append(s.ms)
        self.cpu_ms.append(s.cpu_ms)

    def warm(self, s: Sample, cmds: list[str]) -> None:
        self.rss_kib, self.git, self.git_cmds = s.rss_kib, len(cmds), cmds


def judge(row: Row, tgt: Target | None, floor: float, growth: tuple[float, float] | None) -> tuple[bool | None, str]:
    """(holds, what misses) of one row; growth = (this row's large/small time, the store's growth)."""
    if tgt is None or not row.ms:
        return None, ""
    med = statistics.median(row.ms)
    misses = []
    if tgt.ratio is not None and med / floor > tgt.ratio:
        misses.append(f"{med / floor:.1f}× > {tgt.ratio:g}×")
    if tgt.wall_ms is not None and med > tgt.wall_ms:
        misses.append(f"{med:.0f} ms > {tgt.wall_ms:g} ms")
    if tgt.rss_mib is not None and row.rss_kib is not None and row.rss_kib / 1024 > tgt.rss_mib:
        misses.append(f"{row.rss_kib / 1024:.0f} MiB > {tgt.rss_mib:g} MiB")
    if tgt.git is not None and row.git is not None and row.git > tgt.git:
        misses.append(f"{row.git} git > {tgt.git}")
    if tgt.linear and growth is not None and growth[0] > growth[1]:
        misses.append(f"time ×{growth[0]:.0f} for a ×{growth[1]:.0f} ledger")
    if tgt.linear and growth is None:
        return not misses, "; ".join(misses + ["linearity not judged: it needs --size both"])
    return not misses, "; ".join(misses)


# ----------------------------------------------------------------------------------------------
# one size


def environments(tmp: Path) -> tuple[dict[str, str], dict[str, str], Path]:
    """(plain env, env whose PATH starts with a git wrapper that logs each run, the log)."""
    env = dict(os.environ)
    for key in ("MAJORDOMUS_EPISODE", "MAJORDOMUS_ROOT", "CLAUDE_ENV_FILE", "CLAUDE_PROJECT_DIR", "MJ_TIMING",
                "PYTHONDONTWRITEBYTECODE", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    real_git = shutil.which("git", path=env["PATH"])
    if real_git is None:
        raise SystemExit("git is not on PATH: install git")
    shim, log = tmp / "gitshim", tmp / "git.log"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real_git}" "$@"\n')
    (shim / "git").chmod(0o755)
    counted = dict(env, PATH=f"{shim}{os.pathsep}{env['PATH']}")
    return env, counted, log


def counted_run(log: Path, fn: Any) -> tuple[Any, list[str]]:
    log.write_text("")
    result = fn()
    return result, [c for c in log.read_text().splitlines() if c]


def hook_payload(root: Path, ep: str, event: str, **extra: str) -> bytes:
    """What Claude Code sends a hook on stdin (shape of agents/claude-code-2.1.197.json)."""
    payload = {"session_id": ep, "transcript_path": f"/home/user/.claude/projects/-bench/{ep}.jsonl",
               "cwd": str(root), "hook_event_name": event, **extra}
    return json.dumps(payload).encode()


def append_decisions(root: Path, ep: str, n: int, count: int) -> None:
    """`count` decisions in the open episode's window, as `majordomus decision add` writes them
    (appended under the ledger's lock file, like the command)."""
    import fcntl

    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    task = "t-" + _hex("bench-task", ep)[:8]
    lines = [{"ts": now, "event": "task.started", "session": ep, "task": task, "title": f"bench cycle {n}",
              "scope": None}]
    lines += [{"ts": now, "event": "decision.recorded", "session": ep, "task": task,
               "text": f"Bench decision {n}.{d}: use {CHOICES[d % len(CHOICES)]}", "why": f"cycle {n}"}
              for d in range(count)]
    data = "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines).encode()
    lock = root / ".ai/local/state/ledger.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with open(root / ".ai/local/ledger.jsonl", "ab") as ledger:
            ledger.write(data)
    finally:
        os.close(fd)


def measure(size: str, tmp: Path, runs: int, budget: float, progress: Any) -> dict[str, Any]:
    """Build the store of `size` under `tmp` and time every row on it."""
    lines, records = SIZES[size]
    env, counted, log = environments(tmp)
    root = tmp / "repo"
    root.mkdir()
    progress(f"{size}: building {lines:,} ledger lines, {records:,} records in {root}")
    store = build(root, lines, records, env)
    progress(f"{size}: built in {store.build_s:.1f} s ({store.ledger_bytes / 2**20:.0f} MiB ledger)")
    rows = {name: Row(name) for name in ORDER}
    floor_cmd = [str(BIN / "python"), "-c", "pass"]
    hooks = root / ".claude/hooks"

    def floor() -> None:
        rows[FLOOR].add(checked(run(floor_cmd, root, env), FLOOR))

    rows[FLOOR].warm(checked(run(floor_cmd, root, env, probe=True), FLOOR), [])

    # the read rows, inside one open episode, on the store at its stated size
    reading = episode_id(-1)
    checked(run([str(hooks / "majordomus-session-start")], root, env,
                 hook_payload(root, reading, "SessionStart", source="startup")), "session-start hook", True)
    for name, args in READ_ROWS.items():
        row = rows[name]
        warm, cmds = counted_run(log, lambda: checked(run([str(MJ), *args], root, counted, probe=True), name))
        row.warm(warm, cmds)
        spent = time.perf_counter()
        if warm.ms > SLOW_MS:  # the wrapper's cost is lost in the noise: the warm-up is a sample too
            row.add(warm)
            spent -= warm.ms / 1000
        while len(row.ms) < runs and time.perf_counter() - spent <= budget:
            floor()
            row.add(checked(run([str(MJ), *args], root, env), name))
        progress(f"{size}: {name}: {len(row.ms)} runs, median {statistics.median(row.ms):.0f} ms")
    checked(run([str(hooks / "majordomus-session-end")], root, env,
                hook_payload(root, reading, "SessionEnd", reason="other")), "session-end hook", True)

    # the hook cycles: cycle 0 is the warm-up, counted through the git wrapper
    spent = time.perf_counter()
    for n in range(runs + 1):
        ep = episode_id(10_000_000 + n)
        use = counted if n == 0 else env
        if n:
            floor()
        steps = [
            (HOOK_ROWS[0], lambda: checked(run([str(hooks / "majordomus-session-start")], root, use,
                                               hook_payload(root, ep, "SessionStart", source="startup"),
                                               probe=n == 0), HOOK_ROWS[0], True)),
            (HOOK_ROWS[1], lambda: checked(run([str(hooks / "majordomus-session-end")], root, use,
                                               hook_payload(root, ep, "SessionEnd", reason="other"),
                                               probe=n == 0), HOOK_ROWS[1], True)),
            (HOOK_ROWS[2], lambda: checked(run([str(MJ), "knowledge", "derive", "--episode", ep], root, use,
                                               probe=n == 0), HOOK_ROWS[2])),
        ]
        for name, step in steps:
            if name == HOOK_ROWS[1]:
                append_decisions(root, ep, n, DECISIONS)
            sample, cmds = counted_run(log, step)
            if n == 0:
                rows[name].warm(sample, cmds)
            else:
                rows[name].add(sample)
            if name == HOOK_ROWS[2] and b"nothing changed" not in sample.stdout + sample.stderr:
                raise SystemExit(f"re-derive of {ep} did something: {sample.stdout.decode()[-400:]}")
        if n and time.perf_counter() - spent > budget * 3:
            break
    progress(f"{size}: hook cycles: {len(rows[HOOK_ROWS[0]].ms)} timed")

    # the MCP server
    row = rows[MCP_ROW]
    row.warm(*counted_run(log, lambda: mcp_run(root, counted, probe=True)))
    spent = time.perf_counter()
    while len(row.ms) < runs and time.perf_counter() - spent <= budget:
        floor()
        row.add(mcp_run(root, env))
    progress(f"{size}: mcp: {len(row.ms)} runs, median {statistics.median(row.ms):.0f} ms")

    grown = sum(1 for p in (root / ".ai/repo/knowledge/candidates").glob("*.md") if p.name != "README.md")
    ledger_now = sum(1 for _ in open(root / ".ai/local/ledger.jsonl", "rb"))
    return {"size": size, "store": asdict(store) | {"root": str(root)}, "runs": runs,
            "candidates_at_end": grown, "ledger_lines_at_end": ledger_now, "rows": rows}


# ----------------------------------------------------------------------------------------------
# the report


def summarise(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_size = {r["size"]: r for r in results}
    out = []
    for res in results:
        rows: dict[str, Row] = res["rows"]
        floor = statistics.median(rows[FLOOR].ms)
        floor_cpu = statistics.median(rows[FLOOR].cpu_ms)
        lines_small, _ = SIZES["small"]
        table = []
        for name in ORDER:
            row = rows[name]
            tgt = target(name, res["size"])
            growth = None
            if res["size"] == "large" and "small" in by_size and by_size["small"]["rows"][name].ms:
                growth = (statistics.median(row.ms) / statistics.median(by_size["small"]["rows"][name].ms),
                          SIZES["large"][0] / lines_small)
            holds, misses = judge(row, tgt, floor, growth)
            med = statistics.median(row.ms) if row.ms else None
            table.append({"row": name, "runs": len(row.ms), "median_ms": med,
                          "median_cpu_ms": statistics.median(row.cpu_ms) if row.cpu_ms else None,
                          "cpu_ratio": statistics.median(row.cpu_ms) / floor_cpu if row.cpu_ms else None,
                          "ratio": med / floor if med is not None else None,
                          "peak_rss_mib": row.rss_kib / 1024 if row.rss_kib is not None else None,
                          "git": row.git, "git_commands": row.git_cmds, "target": tgt.text() if tgt else "—",
                          "holds": holds, "misses": misses,
                          "growth": growth[0] if growth else None})
        out.append({"size": res["size"], "store": res["store"], "runs_asked": res["runs"], "floor_ms": floor,
                    "floor_cpu_ms": floor_cpu,
                    "candidates_at_end": res["candidates_at_end"],
                    "ledger_lines_at_end": res["ledger_lines_at_end"], "table": table})
    return out


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        load = []
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(), "cpu": model,
            "python": platform.python_version(), "loadavg": " ".join(load)}


def render(summary: list[dict[str, Any]], meta: dict[str, Any], budget: float) -> str:
    out = [f"scale benchmark, {meta['date']}: {meta['cpus']} × {meta['cpu'] or 'cpu'}, Python {meta['python']}, "
           f"load {meta['loadavg_before']} before, {meta['loadavg_after']} after",
           "medians of the timed runs (wall, and CPU: user + system of the process tree); × floor against "
           "`python -c pass` of the same interpreter in the same run; peak RSS (largest process of the tree, "
           + ("/usr/bin/time" if TIME_BIN else "wait4, which counts this process's own RSS")
           + ") and git processes from the untimed warm-up run"]
    for s in summary:
        st = s["store"]
        out += ["", f"### {s['size']}: {st['lines']:,} ledger lines ({st['ledger_bytes'] / 2**20:.0f} MiB), "
                    f"{st['records']:,} records ({st['waiting']:,} waiting, {st['rejected']:,} rejected, "
                    f"{st['curated']:,} curated), "
                    f"{st['sessions']:,} session records",
                f"floor `python -c pass` {s['floor_ms']:.1f} ms wall, {s['floor_cpu_ms']:.1f} ms CPU; store built in {st['build_s']:.0f} s; "
                f"at the end: {s['candidates_at_end']:,} candidates, {s['ledger_lines_at_end']:,} ledger lines",
                "",
                "| command | runs | median ms | × floor | CPU ms | CPU × floor | peak RSS MiB | git | target | holds |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        short = False
        for r in s["table"]:
            runs = str(r["runs"])
            if r["row"] != FLOOR and r["runs"] < s["runs_asked"]:
                runs += "*"
                short = True
            verdict = "" if r["holds"] is None else ("yes" if r["holds"] else "**no**") + \
                (f": {r['misses']}" if r["misses"] else "")
            if r["growth"] is not None and r["holds"] is not None and "linear" in r["target"]:
                verdict += f" (×{r['growth']:.0f} from small)"
            med, cpu = (("—" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.1f}")
                        for v in (r["median_ms"], r["median_cpu_ms"]))
            ratio, cpu_ratio = ("—" if v is None else f"{v:.1f}" for v in (r["ratio"], r["cpu_ratio"]))
            rss = "—" if r["peak_rss_mib"] is None else f"{r['peak_rss_mib']:.0f}"
            git = "—" if r["git"] is None else str(r["git"])
            out.append(f"| {r['row']} | {runs} | {med} | {ratio} | {cpu} | {cpu_ratio} | {rss} | {git} | {r['target']} "
                       f"| {verdict} |")
        if short:
            out.append(f"\n\\* fewer runs than asked: the row's time budget ({budget:g} s; hook cycles {3 * budget:g} s) "
                       "ran out")
        gits = [(r["row"], r["git_commands"]) for r in s["table"] if r["row"] in HOOK_ROWS and r["git_commands"]]
        if gits:
            out.append("")
            out += [f"- git on {name}: " + "; ".join(f"`git {' '.join(c.split()[:3])}`" for c in cmds)
                    for name, cmds in gits]
    return "\n".join(out)


def compile_bytecode(env: dict[str, str]) -> None:
    """Bytecode for the installed packages and the project's source, as a used install has it."""
    purelib = subprocess.run([str(BIN / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             env=env, check=True, capture_output=True, text=True).stdout.strip()
    dirs = [purelib] + [str(HERE.parent / d) for d in ("pipeline",) if (HERE.parent / d).is_dir()]
    subprocess.run([str(BIN / "python"), "-m", "compileall", "-q", "-j0", *dirs], env=env,
                   check=False, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=("small", "large", "both"), default="both")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per row (default 7)")
    parser.add_argument("--budget", type=float, default=20.0,
                        help="seconds a row may spend on timed runs before it stops early (default 20)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--json-file", type=Path, help="also write the results as JSON to this file")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic repositories")
    args = parser.parse_args()
    if not MJ.exists():
        raise SystemExit(f"{MJ} is missing: run this with the venv's python (`make venv`, then "
                         ".venv/bin/python benchmarks/scale.py)")

    def progress(msg: str) -> None:
        print(f"[scale] {msg}", file=sys.stderr, flush=True)

    meta = machine()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    progress("compiling bytecode")
    compile_bytecode(env)
    sizes = ["small", "large"] if args.size == "both" else [args.size]
    temps: list[Path] = []
    try:
        results = []
        for size in sizes:
            temps.append(Path(tempfile.mkdtemp(prefix=f"majordomus-scale-{size}-")))
            results.append(measure(size, temps[-1], max(1, args.runs), args.budget, progress))
        meta["loadavg_before"] = meta.pop("loadavg")
        meta["loadavg_after"] = machine()["loadavg"]
        summary = summarise(results)
        answer = json.dumps({"meta": meta, "budget_s": args.budget, "sizes": summary}, indent=2)
        if args.json_file:
            args.json_file.write_text(answer + "\n", encoding="utf-8")
        if args.json:
            print(answer, flush=True)
        else:
            print(render(summary, meta, args.budget), flush=True)
    finally:
        for tmp in temps:  # after the report: on a disk mounted with discard, 40,000 unlinks take minutes
            if args.keep:
                progress(f"kept: {tmp}")
            else:
                progress(f"removing {tmp}")
                shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
