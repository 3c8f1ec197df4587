#!/usr/bin/env python3
"""Issues 17 and 31's table: every command that grows with history, at two store sizes, against the floor.

    .venv/bin/python benchmarks/scale.py [--size small|large|both] [--runs N] [--budget S]
                                         [--json] [--json-file PATH] [--keep]

Sizes: small is 20,000 ledger lines and 500 knowledge records; large is 1,000,000 lines and
20,000 records, with `ledger.retention_lines` raised so the cap trims nothing. The store
(benchmarks/scalestore.py) is written directly, without importing the project's code. Then every
row runs the real `majordomus` command, or the real hook script that `majordomus capture
install` wrote, fed the JSON Claude Code sends, in that repository (benchmarks/scalerun.py).

Each row: median wall and CPU ms, their ratios to the venv's own `python -c pass` (run before
every timed run of every row), peak RSS of the process tree and the git processes the command
started. RSS and git come from an untimed warm-up run: RSS under /usr/bin/time, git through a
wrapper first on PATH that logs each call, so neither costs the timed runs anything (a warm-up
over 2 s, where they are noise, also counts as a timed run). A row stops when its time budget
runs out, with at least one timed run: the `runs` column says how many it got. Bytecode is
compiled first and PYTHONDONTWRITEBYTECODE is dropped from the children's environment.

The read rows run first, on the store at its stated size, inside one open episode, after the
knowledge index was built by one untimed run of INDEX_BUILDERS (the rows measure the steady state
a user's readers see, not the index's first build). Each hook
cycle then opens an episode, appends 20 decisions to its window, closes it (deriving 20
candidates) and re-derives it (nothing to do), so the store grows by 20 records a cycle.
Reported, never asserted: the exit status is 0 whether the targets hold or not.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scalerun import TIME_BIN, Sample, checked, mcp_run, run  # noqa: E402
from scalestore import CHOICES, build, episode_id, hex_digest  # noqa: E402

from majordomus.base.git import STATUS  # noqa: E402  (the command line itself, not a copy of it)

BIN = Path(sys.executable).parent
MJ = BIN / "majordomus"
FLOOR = "python -c pass"
SIZES = {"small": (20_000, 500), "large": (1_000_000, 20_000)}
DECISIONS = 20
HISTORY_EVENT = "session.closed"
GIT_STATUS = ["git", "-c", "core.quotePath=false", *STATUS]  # as `git.ask_status` starts it
SLOW_MS = 2000  # a warm-up run slower than this is also a timed sample


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
# no target, for reference: the start hook's one git process alone, run just after each start (it
# is what the start cannot be faster than on a big working tree: one lstat per tracked file)
GIT_ROW = "git status alone (the start's one git call)"
READ_ROWS: dict[str, list[str]] = {
    "knowledge candidates": ["knowledge", "candidates"],
    "knowledge status": ["knowledge", "status"],
    "context": ["context"],
    "session context": ["session", "context"],
    "doctor": ["doctor"],
    "knowledge check": ["knowledge", "check"],
    f"history --event {HISTORY_EVENT}": ["history", "--event", HISTORY_EVENT],
}
# run once, untimed, before the read rows: together they build every view of the knowledge index
# (the queue's, the verified list's, the summary, the search's, doctor's integrity view) and its
# ledger facts, which a user's first reader builds once and every later one extends
INDEX_BUILDERS = (["knowledge", "status"], ["knowledge", "search", "--json"], ["doctor"])
MCP_ROW = "mcp initialize + tools/list"
# the first tools/call of each reader, in a fresh server (spawn to its answer, after initialize and
# tools/list), beside what the command line's `knowledge VERB --json` costs for the same answer
MCP_CALLS = ("candidates", "status", "search", "record")
MCP_CALL_ROWS = {f"mcp first call: {verb}": f"knowledge_base_{verb}" for verb in MCP_CALLS}
CLI_JSON_ROWS = {f"knowledge {verb} --json": verb for verb in MCP_CALLS}
ORDER = [FLOOR, HOOK_ROWS[0], GIT_ROW, *HOOK_ROWS[1:], *READ_ROWS, MCP_ROW,
         *(r for pair in zip(CLI_JSON_ROWS, MCP_CALL_ROWS) for r in pair)]


def target(row: str, size: str) -> Target | None:
    """Issue 31's goals where it sets one (the start and end hooks, the no-op re-derive, `knowledge
    candidates`, doctor, the MCP server's start), issue 17's for the other rows."""
    small = size == "small"
    if row == HOOK_ROWS[0]:
        return Target(ratio=3 if small else 4, git=1)
    if row == HOOK_ROWS[1]:
        return Target(ratio=8 if small else 10, git=1)
    if row == HOOK_ROWS[2]:
        return Target(ratio=4 if small else 5, git=1)
    if row == "knowledge candidates":
        return Target(ratio=4 if small else 5)
    if row in ("knowledge status", "context", "session context"):
        return Target(ratio=6 if small else 10)
    if row == "doctor":
        return Target(ratio=8) if small else Target(ratio=15, linear=True, rss_mib=300)
    if row == "knowledge check":
        return Target(ratio=15) if small else Target(linear=True, rss_mib=300)
    if row.startswith("history"):
        return Target(ratio=6) if small else Target(linear=True, rss_mib=100)
    if row == MCP_ROW:
        return Target(wall_ms=100)
    if row in MCP_CALL_ROWS or row in CLI_JSON_ROWS:  # as flat as the command line's readers
        return Target(ratio=6 if small else 10)
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
    """(holds, what misses) of one row; growth = (this row's large/small CPU time, the ledger's growth).
    Linearity is judged on CPU time: wall time on a shared machine moves with the load between
    the two sizes' runs, CPU time hardly."""
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
        misses.append(f"CPU ×{growth[0]:.0f} for a ×{growth[1]:.0f} ledger")
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
    task = "t-" + hex_digest("bench-task", ep)[:8]
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
    store = build(root, lines, records, env, MJ)
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
    for args in INDEX_BUILDERS:  # untimed: the rows measure the steady state, not the index's first build
        checked(run([str(MJ), *args], root, env), " ".join(args))
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
            (GIT_ROW, lambda: checked(run(GIT_STATUS, root, use), GIT_ROW)),
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
    row.warm(*counted_run(log, lambda: mcp_run(MJ, root, counted, probe=True)))
    spent = time.perf_counter()
    while len(row.ms) < runs and time.perf_counter() - spent <= budget:
        floor()
        row.add(mcp_run(MJ, root, env))
    progress(f"{size}: mcp: {len(row.ms)} runs, median {statistics.median(row.ms):.0f} ms")

    # each reader's first call, in a fresh server, and the command line's --json of the same
    curated = sorted(p.stem for p in (root / ".ai/repo/knowledge/curated").glob("*.md"))
    arguments: dict[str, dict[str, Any]] = {"candidates": {}, "status": {}, "search": {"text": "batched git"},
                                            "record": {"id": curated[0]}}
    argv = {"candidates": [], "status": [], "search": ["batched git"], "record": [curated[0]]}
    for (cli_name, verb), (mcp_name, tool) in zip(CLI_JSON_ROWS.items(), MCP_CALL_ROWS.items()):
        cli = [str(MJ), "knowledge", verb, *argv[verb], "--json"]
        rows[cli_name].warm(*counted_run(log, lambda: checked(run(cli, root, counted, probe=True), cli_name)))
        rows[mcp_name].warm(*counted_run(log, lambda: mcp_run(MJ, root, counted, probe=True,
                                                              call=(tool, arguments[verb]))))
        spent = time.perf_counter()
        while len(rows[mcp_name].ms) < runs and time.perf_counter() - spent <= budget:
            floor()
            rows[cli_name].add(checked(run(cli, root, env), cli_name))
            rows[mcp_name].add(mcp_run(MJ, root, env, call=(tool, arguments[verb])))
        progress(f"{size}: {mcp_name}: {len(rows[mcp_name].ms)} runs, median "
                 f"{statistics.median(rows[mcp_name].ms):.0f} ms (the command line's "
                 f"{statistics.median(rows[cli_name].ms):.0f} ms)")

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
                growth = (statistics.median(row.cpu_ms) / statistics.median(by_size["small"]["rows"][name].cpu_ms),
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
           "",
           "medians of the timed runs (wall, and CPU: user + system of the process tree); × floor against "
           "`python -c pass` of the same interpreter in the same run; peak RSS (largest process of the tree, "
           + ("/usr/bin/time" if TIME_BIN else "wait4, which counts this process's own RSS")
           + ") and git processes from the untimed warm-up run"]
    for s in summary:
        st = s["store"]
        out += ["", f"### {s['size']}: {st['lines']:,} ledger lines ({st['ledger_bytes'] / 2**20:.0f} MiB), "
                    f"{st['records']:,} records ({st['waiting']:,} waiting, {st['rejected']:,} rejected, "
                    f"{st['curated']:,} curated), {st['sessions']:,} session records",
                f"floor `python -c pass` {s['floor_ms']:.1f} ms wall, {s['floor_cpu_ms']:.1f} ms CPU; "
                f"store built in {st['build_s']:.0f} s"
                + (f" (issue 31: under 60 s, {'holds' if st['build_s'] < 60 else '**misses**'})"
                   if s['size'] == 'large' else "") + f"; at the end: {s['candidates_at_end']:,} candidates, "
                f"{s['ledger_lines_at_end']:,} ledger lines",
                "",
                "| command | runs | median ms | × floor | CPU ms | CPU × floor | peak RSS MiB | git | target "
                "| holds |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        short = False
        for r in s["table"]:
            runs = str(r["runs"])
            if r["row"] != FLOOR and r["runs"] < s["runs_asked"]:
                runs += "*"
                short = True
            verdict = "" if r["holds"] is None else ("yes" if r["holds"] else "**no**") + \
                (f": {r['misses']}" if r["misses"] else "")
            if r["growth"] is not None and "linear" in r["target"] and "CPU ×" not in r["misses"]:
                verdict += f" (CPU ×{r['growth']:.0f} from small)"
            med, cpu = (("—" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.1f}")
                        for v in (r["median_ms"], r["median_cpu_ms"]))
            ratio, cpu_ratio = ("—" if v is None else f"{v:.1f}" for v in (r["ratio"], r["cpu_ratio"]))
            rss = "—" if r["peak_rss_mib"] is None else f"{r['peak_rss_mib']:.0f}"
            git = "—" if r["git"] is None else str(r["git"])
            out.append(f"| {r['row']} | {runs} | {med} | {ratio} | {cpu} | {cpu_ratio} | {rss} | {git} "
                       f"| {r['target']} | {verdict} |")
        if short:
            out.append(f"\n\\* fewer runs than asked: the row's time budget ({budget:g} s; hook cycles "
                       f"{3 * budget:g} s) ran out")
        gits = [(r["row"], r["git_commands"]) for r in s["table"] if r["row"] in (*HOOK_ROWS, *CLI_JSON_ROWS, *MCP_CALL_ROWS) and r["git_commands"]]
        if gits:
            out.append("")
            out += [f"- git on {name}: " + "; ".join(f"`git {' '.join(_verb(c))}`" for c in cmds)
                    for name, cmds in gits]
    return "\n".join(out)


def _verb(command: str) -> list[str]:
    """A git command line's first words, without the `-C ROOT` every one starts with."""
    words = command.split()
    return (words[2:] if words[:1] == ["-C"] else words)[:3]


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
