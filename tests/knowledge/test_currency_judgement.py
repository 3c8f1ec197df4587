"""The judgement against a seeded history's ground truth (benchmarks/currencyhistory.py, the
generator `make bench` runs at 1,000 commits): about a hundred commits that modify, rename,
delete and add files at random; "may be stale" must have precision and recall 1.0, and the
unknown and current records must be exactly those the generator made so."""
from __future__ import annotations

import sys
from pathlib import Path

from conftest import PROJECT, Repo

from majordomus.knowledge import currency, known
from majordomus.store.workspace import Workspace

sys.path.insert(0, str(PROJECT / "benchmarks"))
from currencyhistory import build, score  # noqa: E402


def test_may_be_stale_is_exact_on_a_seeded_history(tmp_path: Path) -> None:
    for seed in (1, 26):
        root = tmp_path / f"h{seed}"
        history = build(root, seed=seed, commits=120, files=60, pool=12, records=80, touch_pool=0.15)
        Repo(root).mj("init", check=True)
        ws = Workspace(root)
        states = currency.of(ws, known.verified(ws.curated, ws))
        judged = {rid: s.state for rid, s in states.items()}
        precision, recall, wrong = score(history.truth, judged)
        assert (precision, recall, wrong) == (1.0, 1.0, [])
        said = set(judged.values())
        assert {"current", "may_be_stale", "unknown"} <= said  # each kind is exercised
