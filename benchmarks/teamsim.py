#!/usr/bin/env python3
"""A team through one bare remote (issue 27): clones that each run agent episodes on feature
branches and review on main, pushing and pulling as people do, and the figures that say whether
the store holds up: merge conflicts inside `.ai/`, references that do not resolve (and whether
each is advisory with its reason), doctor's exit on every clone and on a fresh clone, ids in both
queues, and whether `.ai/repo` is the same bytes on every clone after the last pull.

What the run does, chosen by a seeded random generator (same seed, same run):
- an episode on a new feature branch: the real session-start hook, a task with `--scope`, a
  decision, a question resolved, a code commit, `finish`, the real session-end hook; the branch
  is then merged into main (a merge commit, or a squash merge as a forge does, or rebased first,
  or its code commit amended after the derivation cited it), or left unmerged and pushed as
  work in progress;
- an episode resumed on another branch (the same session id ends on two branches);
- an episode whose end never comes (an orphan);
- a review on main of a candidate this clone sees: promote or reject; the clone pushes when it
  can, so two clones review one candidate before either has pulled the other's act.
Every push that is refused pulls first (a merge or a rebase, at random) and counts the
conflicts git stopped on.

    .venv/bin/python benchmarks/teamsim.py [--clones 20] [--episodes 1000] [--seed 7] [--keep]

The test suite runs a small team (tests/team/test_simulation.py) and asserts the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
MAJORDOMUS = str(BIN / "majordomus")
IDENTITY = {"GIT_AUTHOR_EMAIL": "team@example.invalid", "GIT_COMMITTER_EMAIL": "team@example.invalid"}


def env_for(name: str | None = None) -> dict[str, str]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **IDENTITY)
    for key in ("MAJORDOMUS_EPISODE", "MAJORDOMUS_ROOT", "CLAUDE_ENV_FILE", "CLAUDE_PROJECT_DIR", "MJ_TIMING",
                "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        env.pop(key, None)
    if name:
        env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = name
    return env


@dataclass
class Figures:
    episodes: int = 0
    reviews: int = 0
    merges: int = 0
    conflicts_ai: list[str] = field(default_factory=list)  # paths under .ai/ git stopped on
    conflicts_other: list[str] = field(default_factory=list)
    conflict_lines: list[str] = field(default_factory=list)  # what git said of each
    hook_ms: list[tuple[int, str, float]] = field(default_factory=list)  # (episode number, hook, ms)
    failures: list[str] = field(default_factory=list)  # hooks or commands that failed


class Clone:
    def __init__(self, root: Path, name: str, figures: Figures) -> None:
        self.root, self.name, self.figures = root, name, figures
        self.env = env_for(name)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, env=self.env)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{self.name}: git {' '.join(args)}: {proc.stderr.strip()}")
        return proc

    def mj(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([MAJORDOMUS, *args], cwd=self.root, capture_output=True, text=True, env=self.env,
                              input=input)

    def hook(self, name: str, payload: dict[str, str], number: int) -> None:
        payload = dict(payload, cwd=str(self.root))
        started = time.perf_counter()
        proc = subprocess.run([str(self.root / ".claude" / "hooks" / f"majordomus-{name}")], cwd=self.root,
                              input=json.dumps(payload).encode(), capture_output=True, env=self.env)
        self.figures.hook_ms.append((number, name, (time.perf_counter() - started) * 1000))
        if proc.returncode != 0 or b"failed" in proc.stderr:
            self.figures.failures.append(f"{self.name} {name}: {proc.stderr.decode()[-300:]}")

    def sync(self, rng: random.Random, branch: str = "main") -> None:
        """Pull `branch` (a merge or a rebase), counting what git stopped on; a stop is resolved by
        taking the other side's file, as a person in a hurry would, so the run goes on."""
        mode = "--rebase" if rng.random() < 0.3 else "--no-rebase"
        proc = self.git("pull", "-q", mode, "--no-edit", "origin", branch, check=False)
        if proc.returncode == 0:
            return
        stopped = [p for p in self.git("diff", "--name-only", "--diff-filter=U").stdout.splitlines() if p]
        self.figures.conflict_lines += [ln for ln in (proc.stdout + proc.stderr).splitlines() if "CONFLICT" in ln]
        if not stopped:
            raise RuntimeError(f"{self.name}: pull failed without a conflict: {proc.stderr.strip()}")
        for path in stopped:
            (self.figures.conflicts_ai if path.startswith(".ai/") else self.figures.conflicts_other).append(path)
        self.git("checkout", "--theirs", "--", *stopped, check=False)
        self.git("add", "-A", "--", *stopped)
        if mode == "--rebase":
            self.git("-c", "core.editor=true", "rebase", "--continue", check=False)
        else:
            self.git("commit", "-q", "--no-edit")

    def settle(self) -> None:
        """After a merge: count the paths git stopped on and take the other side's file, as a
        person in a hurry would, so the run goes on."""
        stopped = [p for p in self.git("diff", "--name-only", "--diff-filter=U").stdout.splitlines() if p]
        for path in stopped:
            (self.figures.conflicts_ai if path.startswith(".ai/") else self.figures.conflicts_other).append(path)
        if stopped:
            self.git("checkout", "--theirs", "--", *stopped, check=False)
            self.git("add", "-A")
            self.git("commit", "-q", "--no-edit")

    def push_main(self, rng: random.Random) -> None:
        for _ in range(5):
            if self.git("push", "-q", "origin", "HEAD:main", check=False).returncode == 0:
                return
            self.sync(rng)
        raise RuntimeError(f"{self.name}: could not push main")


def make_origin(where: Path) -> Path:
    """The remote, holding a repository with majordomus initialised and its hooks committed."""
    seed = Clone(where / "seed", "Founder", Figures())
    seed.root.mkdir(parents=True)
    seed.git("init", "-q", "-b", "main")
    (seed.root / "README.md").write_text("a project\n")
    seed.git("add", "-A")
    seed.git("commit", "-q", "-m", "initial")
    for args in (("init",), ("capture", "install")):
        proc = seed.mj(*args)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
    seed.git("add", "-A")
    seed.git("commit", "-q", "-m", "majordomus init and capture install")
    remote = where / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    seed.git("push", "-q", str(remote), "main")
    return remote


def clone(remote: Path, root: Path, name: str, figures: Figures) -> Clone:
    subprocess.run(["git", "clone", "-q", str(remote), str(root)], check=True, env=env_for(name))
    c = Clone(root, name, figures)
    c.git("config", "user.name", name)
    c.git("config", "user.email", IDENTITY["GIT_AUTHOR_EMAIL"])
    c.mj("init")  # what a person does once per clone: lays .ai/local and registers the merge driver
    return c


class Team:
    def __init__(self, where: Path, clones: int, seed: int) -> None:
        self.where, self.rng, self.figures = where, random.Random(seed), Figures()
        self.remote = make_origin(where)
        self.clones = [clone(self.remote, where / f"c{i:02d}", f"Dev{i:02d}", self.figures) for i in range(clones)]
        self.number = 0
        self.resumable: list[tuple[Clone, str]] = []  # (clone, session id) of ended episodes

    def episode(self, c: Clone, how: str | None = None, amend: bool | None = None) -> None:
        """One episode on a feature branch, then `how` it lands: merge, squash, rebase, wip (pushed,
        never merged) or orphan (its end never comes); `amend`: the code commit amended after the
        derivation cited it. Both random unless given."""
        rng, n = self.rng, self.number
        if how is None:
            roll = rng.random()
            how = ("orphan" if roll < 0.07 else "wip" if roll < 0.15 else "squash" if roll < 0.3
                   else "rebase" if roll < 0.45 else "merge")
        if amend is None:
            amend = rng.random() < 0.1
        self.number += 1
        self.figures.episodes += 1
        sid = f"s{n:04d}"
        c.git("checkout", "-q", "main")
        c.sync(rng)
        branch = f"feat/{c.name.lower()}-{n}"
        c.git("checkout", "-q", "-b", branch)
        c.hook("session-start", {"session_id": sid, "source": "startup"}, n)
        module = f"src/m{n:04d}.py"
        c.mj("start", f"Module {n}", "--scope", module)
        c.mj("decision", "add", f"Module {n} keeps its state in one place", "--why", f"reason {n}")
        (c.root / "src").mkdir(exist_ok=True)
        (c.root / module).write_text(f"STATE_{n} = {{}}\n")
        c.git("add", "--", module)
        c.git("commit", "-q", "-m", f"Add module {n}")
        if rng.random() < 0.3:
            opened = c.mj("question", "add", f"Does module {n} need a lock?")
            qid = opened.stdout.strip().split()[0] if opened.stdout.strip() else ""
            if qid:
                c.mj("question", "resolve", qid, "No: one writer")
        c.mj("finish", "--outcome", "completed")
        if how == "orphan":  # its end never comes
            c.git("add", "-A", "--", ".ai/repo")
            c.git("commit", "-q", "-m", f"episode {sid} (work in progress)", check=False)
            c.git("push", "-q", "origin", branch, check=False)
            return
        c.hook("session-end", {"session_id": sid, "reason": "other"}, n)
        if amend:  # the code commit amended after the derivation cited it
            c.git("commit", "-q", "--amend", "--no-edit", "--", module, check=False)
        c.git("add", "-A", "--", ".ai/repo")
        c.git("commit", "-q", "-m", f"episode {sid}", check=False)
        self.resumable.append((c, sid))
        if how == "wip":
            c.git("push", "-q", "origin", branch, check=False)  # work in progress, never merged
            return
        c.git("checkout", "-q", "main")
        c.sync(rng)
        if how == "squash":  # a squash merge, as a forge does
            c.git("merge", "-q", "--squash", branch)
            c.git("commit", "-q", "-m", f"Module {n} (#{n})")
        elif how == "rebase":  # rebased onto main first
            c.git("checkout", "-q", branch)
            c.git("-c", "core.editor=true", "rebase", "-q", "main", check=False)
            c.git("checkout", "-q", "main")
            c.git("merge", "-q", "--no-edit", branch, check=False)
        else:
            c.git("merge", "-q", "--no-ff", "--no-edit", branch, check=False)
        c.settle()
        self.figures.merges += 1
        c.push_main(rng)

    def resume_elsewhere(self, c: Clone | None = None) -> None:
        """An ended episode resumed on another branch of its clone, and merged from there."""
        if not self.resumable:
            return
        owner, sid = self.resumable.pop(self.rng.randrange(len(self.resumable)))
        n = self.number
        self.number += 1
        owner.git("checkout", "-q", "main")
        owner.sync(self.rng)
        branch = f"resume/{sid}-{n}"
        owner.git("checkout", "-q", "-b", branch)
        owner.hook("session-start", {"session_id": sid, "source": "resume"}, n)
        owner.mj("decision", "add", f"Episode {sid} resumed: the lock stays out", "--why", "one writer")
        owner.hook("session-end", {"session_id": sid, "reason": "other"}, n)
        owner.git("add", "-A", "--", ".ai/repo")
        owner.git("commit", "-q", "-m", f"episode {sid} resumed", check=False)
        owner.git("checkout", "-q", "main")
        owner.git("merge", "-q", "--no-ff", "--no-edit", branch, check=False)
        owner.settle()
        owner.push_main(self.rng)

    def review(self, c: Clone, rid: str | None = None, act: str | None = None, push: bool | None = None) -> None:
        """A review on main of a candidate this clone sees, without pulling first (so two clones
        may act on one candidate before either sees the other's act)."""
        c.git("checkout", "-q", "main")
        queue = c.mj("knowledge", "candidates", "--json")
        try:
            items = json.loads(queue.stdout)
        except ValueError:
            return
        ids = [i["id"] for i in items if isinstance(i, dict) and "id" in i]
        if not ids:
            return
        rid = rid if rid in ids else self.rng.choice(sorted(ids))
        self.figures.reviews += 1
        act = act or ("promote" if self.rng.random() < 0.6 else "reject")
        if act == "promote":
            cls = self.rng.choice(["convention", "constraint"])
            proc = c.mj("knowledge", "promote", rid, "--class", cls, input=f"{c.name} checked {rid}\n")
        else:
            proc = c.mj("knowledge", "reject", rid, "--reason", f"{c.name}: not worth keeping")
        if proc.returncode != 0:
            self.figures.failures.append(f"{c.name} review {rid}: {proc.stderr.strip()[-300:]}")
            return
        c.git("commit", "-q", "-m", f"review {rid}")
        if push if push is not None else self.rng.random() < 0.5:
            c.push_main(self.rng)

    def run(self, episodes: int) -> None:
        while self.number < episodes:
            c = self.rng.choice(self.clones)
            roll = self.rng.random()
            if roll < 0.55:
                self.episode(c)
            elif roll < 0.62:
                self.resume_elsewhere(c)
            else:
                self.review(c)
        for c in self.clones:  # everyone pushes what they hold, then everyone pulls
            c.git("checkout", "-q", "main")
            c.push_main(self.rng)
        for c in self.clones:
            c.sync(self.rng)


def verdict(team: Team) -> dict[str, object]:
    """The figures after the last pull, on every clone and on a fresh clone of the remote."""
    fresh = clone(team.remote, team.where / "fresh", "Fresh", team.figures)
    everyone = team.clones + [fresh]
    trees = {c.name: c.git("rev-parse", "HEAD:.ai/repo").stdout.strip() for c in everyone}
    doctor = {c.name: c.mj("doctor").returncode for c in everyone}
    checks = {}
    both_queues = set()
    for c in everyone:
        proc = c.mj("knowledge", "check", "--json")
        report = json.loads(proc.stdout or "{}")
        checks[c.name] = {"exit": proc.returncode, "blocking": report.get("blocking"),
                          "advisory": [f["what"] for f in report.get("findings", []) if not f["blocking"]]}
        kb = c.root / ".ai/repo/knowledge"
        queued = {i["id"] for i in json.loads(c.mj("knowledge", "candidates", "--json").stdout or "[]")}
        reviewed = {p.stem for p in (kb / "curated").glob("*.md")
                    if "\nstatus: candidate\n" not in p.read_text(encoding="utf-8")}
        both_queues |= queued & reviewed
    unresolved = [w for r in checks.values() for w in r["advisory"] if "does not resolve" in w or "not in this clone" in w
                  or "rewritten" in w]
    f = team.figures
    return {
        "clones": len(team.clones), "episodes": f.episodes, "reviews": f.reviews, "merges": f.merges,
        "conflicts_in_ai": len(f.conflicts_ai), "conflicts_elsewhere": len(f.conflicts_other),
        "conflicted_paths": sorted(set(f.conflicts_ai))[:10], "conflict_lines": f.conflict_lines[:10],
        "doctor_exits": sorted(set(doctor.values())), "doctor_nonzero": sorted(k for k, v in doctor.items() if v),
        "check_blocking": sum(int(r["blocking"] or 0) for r in checks.values()),
        "advisory_references": len(unresolved), "advisory_examples": sorted(set(unresolved))[:3],
        "ids_in_both_queues": sorted(both_queues),
        "ai_repo_trees": len(set(trees.values())), "failures": f.failures[:5], "failure_count": len(f.failures),
    }


def quarters(figures: Figures, total: int) -> list[tuple[str, str, float, int]]:
    rows = []
    for hook in ("session-start", "session-end"):
        for q in range(4):
            lo, hi = q * total / 4, (q + 1) * total / 4
            times = [ms for n, h, ms in figures.hook_ms if h == hook and lo <= n < hi]
            if times:
                rows.append((hook, f"Q{q + 1}", statistics.median(times), len(times)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clones", type=int, default=20)
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", action="store_true", help="keep the team's folder and print it")
    args = ap.parse_args()
    where = Path(tempfile.mkdtemp(prefix="mj-team-"))
    started = time.perf_counter()
    try:
        team = Team(where, args.clones, args.seed)
        team.run(args.episodes)
        result = verdict(team)
        print(f"team simulation: {args.clones} clones, {args.episodes} steps, seed {args.seed}, "
              f"{time.perf_counter() - started:.0f} s")
        print("| figure | value |\n|---|---|")
        for key, value in result.items():
            print(f"| {key} | {value} |")
        print("\n| hook | quarter of the run | median ms | runs |\n|---|---|---|---|")
        for hook, quarter, ms, count in quarters(team.figures, team.number):
            print(f"| {hook} | {quarter} | {ms:.0f} | {count} |")
    finally:
        if args.keep:
            print(f"kept: {where}")
        else:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
