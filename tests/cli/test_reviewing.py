"""`majordomus knowledge review` in a real pseudo-terminal (pexpect): a person reviews ten candidates
— promotes, rejects, edits, skips — by typing, reading the screen, never naming an id or opening
a file. Every act lands as `knowledge promote|reject` would land it: same files, same ledger lines,
same refusals."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import MAJORDOMUS, Repo

pexpect = pytest.importorskip("pexpect", reason="pexpect (a test dependency: pip install -e '.[test]')")

TIMEOUT = 60  # bounded waits: a loaded machine is slow, a hung review is a failure
CANDIDATES = ".ai/repo/knowledge/candidates"
CURATED = ".ai/repo/knowledge/curated"

EDITOR = """#!/bin/sh
# A person's editor, scripted: evidence files get evidence; a candidate gets a clearer title.
case "$1" in
  *.evidence.md) printf 'checked by hand in CI run 42\\n' >> "$1" ;;
  *) sed -i 's/^title: .*/title: "Parser refuses tabs, clarified by hand"/' "$1" ;;
esac
"""

DECISIONS_MAIN = [f"Main decision number {n}" for n in range(1, 7)]
DECISIONS_FEATURE = [f"Feature decision number {n}" for n in range(1, 4)]


def _episode(repo: Repo, episode: str, decisions: list[str], blocked: str | None = None) -> None:
    assert repo.hook("session-start", {"session_id": episode, "source": "startup"}).returncode == 0
    repo.mj("start", f"work of {episode}", check=True)
    for text in decisions:
        repo.mj("decision", "add", text, "--why", "reviewed in the test", check=True)
    if blocked:
        repo.mj("finish", "--outcome", "blocked", "--reason", blocked, check=True)
    assert repo.hook("session-end", {"session_id": episode, "reason": "other"}).returncode == 0


def _age(repo: Repo, ages: dict[str, str]) -> None:
    """Set the time each candidate entered the queue: its knowledge.derived line's `ts`, rewritten
    as if derived then (one line per candidate, so each has an age of its own)."""
    path = repo.root / ".ai/local/ledger.jsonl"
    lines = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    out = []
    for line in lines:
        if line["event"] != "knowledge.derived" or not line.get("paths"):
            out.append(line)
            continue
        for rel in line["paths"]:
            rid = rel.rsplit("/", 1)[-1][:-3]
            out.append({**line, "ts": ages.get(rid, line["ts"]), "paths": [rel], "written": 1})
    path.write_text("".join(json.dumps(l) + "\n" for l in out), encoding="utf-8")


def _title_of(repo: Repo, rid: str) -> str:
    text = (repo.root / CANDIDATES / f"{rid}.md").read_text(encoding="utf-8")
    return json.loads(text.split("\ntitle: ", 1)[1].split("\n", 1)[0])


@pytest.fixture
def queue(repo: Repo, tmp_path: Path) -> tuple[Repo, list[str], dict[str, str]]:
    """Ten candidates: seven from episode e1 on main (six decisions and a lesson), three from e2 on
    a feature branch; ages chosen so the order is known. Returns the ids in review order."""
    repo.git("add", "-A")
    repo.commit("adopt majordomus")
    _episode(repo, "e1", DECISIONS_MAIN, blocked="the lexer is shared with the formatter")
    repo.git("checkout", "-q", "-b", "feature")
    _episode(repo, "e2", DECISIONS_FEATURE)
    repo.git("checkout", "-q", "main")
    ids = {_title_of(repo, p.stem): p.stem for p in repo.candidates()}
    assert len(ids) == 10
    main = [ids[t] for t in DECISIONS_MAIN] + [ids["work of e1: the lexer is shared with the formatter"]]
    feature = [ids[t] for t in DECISIONS_FEATURE]
    ages = {rid: f"2026-01-0{1 + n // 3}T0{n % 3}:00:00Z" for n, rid in enumerate(main)}  # main[0] oldest
    ages.update({rid: f"2025-12-0{1 + n}T00:00:00Z" for n, rid in enumerate(feature)})  # older, other branch
    _age(repo, ages)
    editor = tmp_path / "editor.sh"
    editor.write_text(EDITOR, encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    return repo, main + feature, {"EDITOR": str(editor)}


def _spawn(repo: Repo, env: dict[str, str]) -> pexpect.spawn:
    full = dict(os.environ, TERM="xterm", **env)
    full.pop("VISUAL", None)
    child = pexpect.spawn(MAJORDOMUS, ["knowledge", "review"], cwd=str(repo.root), env=full, encoding="utf-8",
                          timeout=TIMEOUT, dimensions=(50, 120))
    child.logfile_read = open(repo.root.parent / "screen.log", "a", encoding="utf-8")  # noqa: SIM115 - the screen, kept for a failure
    return child


def _at(child: pexpect.spawn, number: int, title: str) -> str:
    """Wait for candidate `number` of 10 and its action prompt; return what the screen showed."""
    child.expect_exact(f"{number} of 10\r\n{title}\r\n")
    child.expect_exact("[p]romote  [r]eject  [e]dit  [s]kip  [q]uit ? ")
    return str(child.before)


def test_a_person_reviews_ten_candidates_at_the_terminal(queue: tuple[Repo, list[str], dict[str, str]]) -> None:
    repo, order, env = queue
    titles = DECISIONS_MAIN + ["work of e1: the lexer is shared with the formatter"] + DECISIONS_FEATURE
    started = time.monotonic()
    child = _spawn(repo, env)
    child.expect_exact("10 candidate(s) await review, 7 of them from this branch")

    # 1: promote, class changed, evidence typed
    screen = _at(child, 1, titles[0])
    assert "convention · candidate" in screen and "this branch (main)" in screen
    assert "waiting" in screen and "from ledger: knowledge.derived at ledger line" in screen
    assert "Why: reviewed in the test" in screen  # the body
    assert "session:e1" in screen and "episode e1, on main, opened" in screen  # provenance, resolved
    assert "recorded under task “work of e1”" in screen
    child.send("p")
    child.expect_exact("Class [convention]")
    child.sendline("constraint")
    child.expect_exact("  | ")
    child.sendline("the parser tests refuse tabs")
    child.expect_exact("  | ")
    child.sendline("")
    child.expect_exact(f"Promoted {order[0]} to {CURATED}/{order[0]}.md: verified, class constraint")

    # 2: promote, evidence written in $EDITOR
    _at(child, 2, titles[1])
    child.send("p")
    child.expect_exact("Class [")
    child.sendline("")  # keep the class
    child.expect_exact("  | ")
    child.sendline(":e")
    child.expect_exact(f"Promoted {order[1]}")

    # 3: reject with a reason
    _at(child, 3, titles[2])
    child.send("r")
    child.expect_exact("  > ")
    child.sendline("the formatter owns this now")
    child.expect_exact(f"Rejected {order[2]}: .ai/repo/knowledge/curated/{order[2]}.md.")

    # 4: reject, replaced by a record picked from a numbered list (no id typed)
    _at(child, 4, titles[3])
    child.send("r")
    child.expect_exact("  > ")
    child.sendline(":by")
    child.expect_exact(f"    1  {titles[0]}  (verified, {order[0]})")
    child.expect_exact("The number of the record that replaces it")
    child.sendline("1")
    child.expect_exact("And why")
    child.sendline("")
    child.expect_exact(f"Rejected {order[3]}, superseded by {order[0]}")

    # 5: a typo, then edit in $EDITOR (the third act), then the edited candidate is shown again; skip
    _at(child, 5, titles[4])
    child.send("x")
    child.expect_exact("Press p, r, e, s or q.")
    child.send("e")
    child.expect_exact(f"Edited {CANDIDATES}/{order[4]}.md")
    _at(child, 5, "Parser refuses tabs, clarified by hand")
    child.send("s")

    # 6: evidence carrying a transcript marker is refused (same refusal as the command), then promoted
    _at(child, 6, titles[5])
    child.send("p")
    child.expect_exact("Class [")
    child.sendline("")
    child.expect_exact("  | ")
    child.sendline("Human: is it true?")
    child.sendline("")
    child.expect_exact("Refused: evidence for")
    child.expect_exact("transcript marker")
    _at(child, 6, titles[5])
    child.send("p")
    child.expect_exact("Class [")
    child.sendline("lesson")
    child.sendline("seen in review")
    child.sendline("")
    child.expect_exact(f"Promoted {order[5]}")

    # 7: skip the lesson
    screen = _at(child, 7, titles[6])
    assert "lesson · candidate" in screen
    child.send("s")

    # 8..10: the other branch's, after this branch's although older
    screen = _at(child, 8, titles[7])
    assert "branch feature" in screen and "this branch" not in screen
    child.send("p")
    child.expect_exact("Class [")
    child.sendline("")
    child.sendline("verified on the feature branch")
    child.sendline("")
    child.expect_exact(f"Promoted {order[7]}")
    _at(child, 9, titles[8])
    child.send("r")
    child.expect_exact("  > ")
    child.sendline("not a decision after all")
    child.expect_exact(f"Rejected {order[8]}")
    _at(child, 10, titles[9])
    child.send("p")
    child.expect_exact("Class [")
    child.sendline("fact")
    child.sendline("measured in the benchmark")
    child.sendline("")
    child.expect_exact(f"Promoted {order[9]}")

    child.expect_exact("Reviewed 10 of 10: 5 promoted, 3 rejected, 1 edited, 2 skipped. "
                       "2 candidate(s) still await review")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert time.monotonic() - started < 120  # ten candidates in under two minutes, one command

    promoted = {l["id"]: l for l in repo.events("knowledge.promoted")}
    assert set(promoted) == {order[0], order[1], order[5], order[7], order[9]}
    assert [promoted[order[i]]["class"] for i in (0, 1, 5, 7, 9)] == [
        "constraint", "convention", "lesson", "convention", "fact"]
    assert "checked by hand in CI run 42\n" in (repo.root / CURATED / f"{order[1]}.md").read_text()
    assert "#~" not in (repo.root / CURATED / f"{order[1]}.md").read_text()
    rejected = {l["id"]: l for l in repo.events("knowledge.rejected")}
    assert set(rejected) == {order[2], order[3], order[8]}
    assert rejected[order[3]]["superseded_by"] == order[0] and rejected[order[3]]["reason"] is None
    assert rejected[order[2]]["reason"] == "the formatter owns this now"
    waiting = json.loads(repo.mj("knowledge", "review", "--json", check=True).stdout)
    assert [c["id"] for c in waiting] == [order[4], order[6]]
    assert repo.mj("knowledge", "check").returncode == 0
    assert not (repo.root / ".ai/local/state/review").exists() or not any((repo.root / ".ai/local/state/review").iterdir())


def test_quit_at_once_and_end_of_input(queue: tuple[Repo, list[str], dict[str, str]]) -> None:
    repo, order, env = queue
    child = _spawn(repo, env)
    _at(child, 1, DECISIONS_MAIN[0])
    child.send("q")
    child.expect_exact("Reviewed 0 of 10: 0 promoted, 0 rejected, 0 edited, 0 skipped. 10 candidate(s) still "
                       "await review; `majordomus\r\nknowledge review` again to continue.")  # wrapped at 120
    child.expect(pexpect.EOF)
    child = _spawn(repo, env)
    _at(child, 1, DECISIONS_MAIN[0])
    child.send("p")
    child.expect_exact("Class [convention]")
    child.sendeof()  # Ctrl-D: nothing promoted, the review ends
    child.expect_exact("Reviewed 0 of 10")
    child.expect(pexpect.EOF)
    assert repo.events("knowledge.promoted") == []


def test_json_lists_the_queue_in_review_order(queue: tuple[Repo, list[str], dict[str, str]]) -> None:
    repo, order, _ = queue
    listed = json.loads(repo.mj("knowledge", "review", "--json", check=True).stdout)
    assert [c["id"] for c in listed] == order
    first = listed[0]
    assert first["this_branch"] is True and first["branch"] == "main" and first["age_source"] == "ledger"
    assert listed[-1]["this_branch"] is False and listed[-1]["branch"] == "feature"
    assert all(c["age_minutes"] > 0 for c in listed)


def test_no_terminal_reads_a_line_a_key(queue: tuple[Repo, list[str], dict[str, str]]) -> None:
    """Standard input that is not a terminal: each key is a line (a pipe, a script)."""
    repo, order, _ = queue
    proc = subprocess.run([MAJORDOMUS, "knowledge", "review"], cwd=repo.root, input="s\nr\nnot needed\nq\n",
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert f"Rejected {order[1]}: {CURATED}/{order[1]}.md." in proc.stdout
    assert "Reviewed 2 of 10: 0 promoted, 1 rejected, 0 edited, 1 skipped." in proc.stdout
    assert [l["id"] for l in repo.events("knowledge.rejected")] == [order[1]]


def _lines(screen: str) -> list[str]:
    return [l for l in screen.replace("\r\n", "\n").split("\n")]


def test_wrapped_to_the_terminal_never_inside_a_word(repo: Repo) -> None:
    """At 48 columns: every line fits, every word of the title, the body and the evidence whole."""
    title = "A decision whose title runs well past the width of a narrow terminal window"
    why = "because the supercalifragilisticexpialidocious-parser-configuration-word must stay whole"
    _episode(repo, "e1", [title])
    rid = repo.candidates()[0].stem
    body = (repo.root / CANDIDATES / f"{rid}.md").read_text(encoding="utf-8")
    (repo.root / CANDIDATES / f"{rid}.md").write_text(body.rstrip("\n") + "\n\n" + why + "\n", encoding="utf-8")
    full = dict(os.environ, TERM="xterm")
    child = pexpect.spawn(MAJORDOMUS, ["knowledge", "review"], cwd=str(repo.root), env=full, encoding="utf-8",
                          timeout=TIMEOUT, dimensions=(50, 48))
    child.expect_exact("[p]romote  [r]eject  [e]dit  [s]kip  [q]uit ? ")
    screen = str(child.before)
    child.send("q")
    child.expect(pexpect.EOF)
    lines = _lines(screen)
    over = [l for l in lines if len(l) > 48 and len(l.split()) > 1]  # a word longer than a line stays whole
    assert not over, over
    words = " ".join(lines).split()
    for word in (title + " " + why).split():
        assert word in words, word  # never cut: each word whole on one line
    assert "  Evidence" in lines
    assert any("episode e1, on main" in l for l in lines)
    assert any("(session:e1)" in l for l in lines)


def test_the_terminal_is_restored_on_quit_and_on_sigterm(queue: tuple[Repo, list[str], dict[str, str]]) -> None:
    repo, _, env = queue
    script = f"{MAJORDOMUS} knowledge review; echo exited $?; stty -a"
    for how in ("quit", "sigterm"):
        child = pexpect.spawn("sh", ["-c", script], cwd=str(repo.root), env=dict(os.environ, TERM="xterm", **env),
                              encoding="utf-8", timeout=TIMEOUT, dimensions=(50, 120))
        child.expect_exact("[p]romote  [r]eject  [e]dit  [s]kip  [q]uit ? ")
        if how == "quit":
            child.send("q")
        else:
            kids = Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text().split()
            assert len(kids) == 1
            os.kill(int(kids[0]), signal.SIGTERM)
        child.expect(r"exited (\d+)")
        assert child.match.group(1) == "0", how  # SIGTERM ends the review as Ctrl-C does, with its summary
        child.expect(pexpect.EOF)
        modes = str(child.before).split()
        assert "icanon" in modes and "echo" in modes and "-icanon" not in modes, (how, modes)
