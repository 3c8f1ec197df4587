"""A record is one assertion in one line (seed 001): a multi-line decision's title is its first line,
and the whole text stays in the body. The same holds for a resolved question (titled by its answer)."""
from __future__ import annotations

from conftest import Repo

from majordomus.store import records


def test_multi_line_decision_title_is_its_first_line(episode: Repo) -> None:
    task = episode.mj("start", "parser work", check=True).stdout.strip()
    text = "Tabs are refused in the parser\n\nThe lexer keeps one encoding of indentation.\nSee ADR 7."
    episode.mj("decision", "add", text, "--why", "two encodings of one thing", check=True)
    episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    ts = episode.events("decision.recorded")[-1]["ts"]
    day = ts[:10]
    assert path.read_text(encoding="utf-8") == f"""---
id: {path.stem}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "Tabs are refused in the parser"
date: "{day}"
provenance:
  origin: extracted
  derived_from:
    - "session:e1"
    - "decision:{task}"
---
Tabs are refused in the parser

The lexer keeps one encoding of indentation.
See ADR 7.

Why: two encodings of one thing

Evidence: decision.recorded at {ts}.
"""
    shown = episode.mj("knowledge", "candidates", check=True).stdout
    assert "Tabs are refused in the parser" in shown and "See ADR 7" not in shown
    assert episode.mj("knowledge", "check").returncode == 0


def test_a_decision_starting_with_blank_lines_takes_its_first_written_line(episode: Repo) -> None:
    episode.mj("decision", "add", "\n\n  Spaces, not tabs  \nsecond line", check=True)
    episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    record = records.load(path)
    assert record.meta["title"] == "Spaces, not tabs"
    assert "second line" in record.body


def test_multi_line_question_and_answer_make_a_one_line_title(episode: Repo) -> None:
    episode.mj("start", "parser work", check=True)
    qid = episode.mj("question", "add", "Which encoding wins?\nwe had two", check=True).stdout.strip()
    episode.mj("question", "resolve", qid, "Spaces.\nTabs are converted on read.", check=True)
    episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    record = records.load(path)
    assert record.meta["title"] == "Spaces."  # titled by the answer; the question is in the body
    assert "we had two" in record.body and "Tabs are converted on read." in record.body
