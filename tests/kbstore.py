"""A knowledge store with something of every kind in it, made the real way: an episode through the
real hooks derives two candidates; one is committed, one is left untracked; a person authors a
curated record and two superseded ones by hand (one naming a record that does not exist)."""
from __future__ import annotations

from dataclasses import dataclass

from conftest import Repo

KB = ".ai/repo/knowledge"

CURATED = """---
id: c-tabs
kind: knowledge/v1
class: constraint
status: verified
epistemics: decided
title: "Tabs are refused by the parser"
date: 2026-01-02
provenance:
  origin: authored
  derived_from:
    - "session:e1"
relations:
  - type: relates_to
    target: "file:README.md"
  - type: relates_to
    target: "knowledge:{decision}"
  - type: relates_to
    target: "knowledge:{lesson}"
---
The parser refuses a tab.

# Evidence
tests/parser_test.py fails on a tab.
"""

SUPERSEDED = """---
id: {id}
kind: knowledge/v1
class: convention
status: superseded
epistemics: decided
title: "An older rule"
date: "2026-01-01"
superseded_by: {by}
provenance:
  origin: authored
  derived_from:
    - "commit:{sha}"
---
The old rule.
"""

# a candidate written by hand into a store (the knowledge index's tests): {rid}, {title}
RECORD = """---
id: {rid}
kind: knowledge/v1
class: fact
status: candidate
epistemics: observed
title: "{title}"
date: "2026-01-03"
provenance:
  origin: extracted
  derived_from:
    - "session:e9"
---
{title}, as the work showed.
"""


@dataclass
class Store:
    repo: Repo
    decision: str  # the committed (tracked) candidate
    lesson: str  # the untracked candidate
    sha: str


def build(repo: Repo) -> Store:
    start = repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    assert start.returncode == 0, start.stderr
    repo.mj("start", "a task", "--scope", "lib", check=True)
    repo.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings", check=True)
    repo.mj("finish", "--outcome", "blocked", "--reason", "the lexer is shared with the formatter", check=True)
    end = repo.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0, end.stderr
    paths = {p.read_text().split("class: ", 1)[1].split("\n", 1)[0]: p for p in repo.candidates()}
    decision, lesson = paths["convention"], paths["lesson"]
    repo.git("add", "--", str(decision.relative_to(repo.root)), f"{KB}/candidates/README.md")
    sha = repo.commit("a candidate")
    repo.commit("records by hand", {
        f"{KB}/curated/c-tabs.md": CURATED.format(decision=decision.stem, lesson=lesson.stem),
        f"{KB}/candidates/old-rule.md": SUPERSEDED.format(id="old-rule", by="c-tabs", sha=sha),
        f"{KB}/candidates/older-rule.md": SUPERSEDED.format(id="older-rule", by="ghost", sha=sha),
    })
    return Store(repo, decision.stem, lesson.stem, sha)


CURATED_DIR = f"{KB}/curated"

VERIFIED = """---
id: {rid}
kind: knowledge/v1
class: {cls}
status: {status}
epistemics: decided
title: {title}
date: '{date}'
provenance:
  origin: extracted
  derived_from:
  - session:e0
{relations}---
{title}

# Evidence

checked by hand
"""


def curated(repo: Repo, rid: str, cls: str, title: str, date: str = "2026-01-02", status: str = "verified",
            relates: tuple[str, ...] = ()) -> None:
    """A record as `knowledge promote` writes one (yaml.dump's single quotes and plain scalars)."""
    relations = "".join(f"- type: relates_to\n  target: file:{p}\n" for p in relates)
    text = VERIFIED.format(rid=rid, cls=cls, status=status, title=title, date=date,
                         relations=f"relations:\n{relations}" if relations else "")
    path = repo.root / CURATED_DIR / f"{rid}.md"
    path.write_text(text, encoding="utf-8")


def anchored(repo: Repo, rid: str, anchors: tuple[str, ...], commit: str | None, title: str = "",
             cls: str = "constraint", at: str = "2026-01-02T10:00:00Z",
             more: tuple[dict[str, object], ...] = ()) -> None:
    """A verified record with anchors and a promote review at `commit` (the shape of knowledge/v1's
    `anchors` and `reviews`), written through the one record writer; `more`: later review acts."""
    from majordomus.store import records

    review: dict[str, object] = {"act": "promoted", "at": at, "by": "Ada"}
    if commit:
        review["commit"] = commit
    review.update({"seen": 0, "class": cls, "digest": "0a1b2c3d4e5f"})
    meta = {"id": rid, "kind": "knowledge/v1", "class": cls, "status": "verified", "epistemics": "decided",
            "title": title or f"Record {rid}", "date": at[:10],
            "provenance": {"origin": "authored", "derived_from": ["test:checked-by-hand"]},
            "anchors": list(anchors), "reviews": [review, *more]}
    path = repo.root / CURATED_DIR / f"{rid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(records.compose(meta, f"{meta['title']}\n\n# Evidence\n\nchecked by hand\n"), encoding="utf-8")
