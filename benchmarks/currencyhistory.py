"""A seeded git history and verified records anchored in it, with the ground truth of which
records may be stale: what benchmarks/currency.py measures the judgement against, and what
tests/knowledge/test_currency_judgement.py checks at a small size.

The history is written with one `git fast-import` (thousands of commits in about a second): an
initial commit of `files` files, then `commits` commits that each modify, rename, delete or add
one file, most of them outside the small pool of files records are anchored to. Each record is
verified at a random commit, anchored to one to three files that exist there; it may be stale
exactly when a later commit modified, renamed or deleted one of them. A few records are verified
at a commit this clone never had (unknown) and a few have no anchors (current).

Nothing of the project is imported: the records are written as text in knowledge/v1's shape.
"""
from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

CURATED = ".ai/repo/knowledge/curated"


@dataclass
class History:
    root: Path
    shas: list[str]  # commit i's sha; commit 0 holds every initial file
    truth: dict[str, str] = field(default_factory=dict)  # record id -> may_be_stale | current | unknown
    anchors: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _git(root: Path, *args: str, data: bytes | None = None) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    return subprocess.run(["git", *args], cwd=root, input=data, check=True, capture_output=True,
                          env=env).stdout.decode()


def build(root: Path, seed: int = 26, commits: int = 1000, files: int = 400, pool: int = 40,
          records: int = 300, touch_pool: float = 0.1) -> History:
    """The repository at `root` (created), its records under CURATED, and the ground truth."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    anchored = [f"src/core/m{i:03d}.py" for i in range(pool)]  # files records are anchored to
    # in folders of about twenty files: fast-import writes each changed folder's tree a commit
    others = [f"lib/d{i % max((files - pool) // 20, 1):03d}/x{i:04d}.py" for i in range(files - pool)]
    out: list[bytes] = []
    when = 1_767_225_600  # 2026-01-01, one minute a commit: a fixed clock, the same bytes each run

    def commit(mark: int, message: str, ops: list[str]) -> None:
        out.append(f"commit refs/heads/main\nmark :{mark}\n"
                   f"committer Bench <bench@example.invalid> {when + mark * 60} +0000\n".encode())
        msg = message.encode()
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        for op in ops:
            out.append(op.encode() + b"\n")
        out.append(b"\n")

    def blob(path: str, n: int) -> str:
        text = f"# {path}\nvalue = {n}\n" + "".join(f"line {k} of {path}\n" for k in range(8))
        return f"M 100644 inline {path}\ndata {len(text.encode())}\n{text}"

    commit(1, "initial", [blob(p, 0) for p in anchored + others])
    alive: list[list[str]] = [list(anchored)]  # the pool as it is after commit i
    touched: list[set[str]] = [set()]  # the pool paths commit i modified, renamed away or deleted
    fresh = 0
    for i in range(1, commits + 1):
        names = alive[-1]
        hit: set[str] = set()
        use_pool = rng.random() < touch_pool and len(names) > 3
        group = names if use_pool else others
        op = rng.random()
        target = rng.choice(group)
        fresh += 1
        if op < 0.70:
            ops, words = [blob(target, i)], f"edit {target}"
            hit.add(target)
        elif op < 0.85:
            new = target.rsplit(".", 1)[0] + f"_r{fresh}.py"
            ops, words = [f"R {target} {new}"], f"rename {target} to {new}"
            group[group.index(target)] = new
            hit.add(target)
        elif op < 0.95 and len(group) > 3:
            ops, words = [f"D {target}"], f"delete {target}"
            group.remove(target)
            hit.add(target)
        else:
            new = f"{'src/core' if use_pool else target.rsplit('/', 1)[0]}/n{fresh:05d}.py"
            ops, words = [blob(new, i)], f"add {new}"
            group.append(new)
        commit(i + 1, words, ops)
        alive.append(list(names))
        touched.append(hit if use_pool else set())
    marks = root / ".marks"
    _git(root, "fast-import", "--quiet", f"--export-marks={marks}", data=b"".join(out))
    by_mark = dict(line.split() for line in marks.read_text().splitlines())
    shas = [by_mark[f":{i + 1}"] for i in range(commits + 1)]
    marks.unlink()
    _git(root, "reset", "-q", "--hard", "main")
    history = History(root, shas)
    after: list[frozenset[str]] = [frozenset()] * (commits + 1)  # pool paths changed after commit i
    for i in range(commits - 1, -1, -1):
        after[i] = after[i + 1] | touched[i + 1]
    folder = root / CURATED
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(records):
        rid = f"r{n:05d}"
        at = rng.randrange(0, commits + 1)
        kind = rng.random()
        if kind < 0.03:  # verified at a commit this clone never had
            paths, sha, truth = tuple(rng.sample(alive[at], 1)), f"{rng.getrandbits(160):040x}", "unknown"
        elif kind < 0.06:
            paths, sha, truth = (), shas[at], "current"
        else:
            paths = tuple(sorted(rng.sample(alive[at], rng.randint(1, 3))))
            sha = shas[at]
            truth = "may_be_stale" if after[at] & set(paths) else "current"
        history.truth[rid], history.anchors[rid] = truth, paths
        (folder / f"{rid}.md").write_text(text(rid, paths, sha), encoding="utf-8")
    return history


def text(rid: str, paths: tuple[str, ...], sha: str) -> str:
    """A verified record in knowledge/v1's shape, anchored to `paths`, promoted at `sha`."""
    anchors = ["anchors:", *[f"  - {p}" for p in paths]] if paths else []
    return "\n".join([
        "---", f"id: {rid}", "kind: knowledge/v1", "class: fact", "status: verified", "epistemics: decided",
        f'title: "Generated record {rid}"', 'date: "2026-01-02"', "provenance:", "  origin: authored",
        "  derived_from:", '    - "test:generated"', *anchors, "reviews:", "  - act: promoted",
        '    at: "2026-01-02T10:00:00Z"', '    by: "Bench"', f"    commit: {sha}", "    seen: 0",
        "    digest: 0a1b2c3d4e5f", "---", f"Generated record {rid}.", ""])


def score(truth: dict[str, str], judged: dict[str, str]) -> tuple[float, float, list[str]]:
    """Precision and recall of "may be stale" against `truth`, and every record judged otherwise
    than its truth says."""
    said = {r for r, s in judged.items() if s == "may_be_stale"}
    real = {r for r, s in truth.items() if s == "may_be_stale"}
    hits = len(said & real)
    precision = hits / len(said) if said else 1.0
    recall = hits / len(real) if real else 1.0
    wrong = sorted(r for r in truth if judged.get(r) != truth[r])
    return precision, recall, wrong
