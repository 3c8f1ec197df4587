"""Stored text never reaches a terminal with raw control characters: an OSC 52 sequence writes
the clipboard, a CSI clears the screen or recolours it, a carriage return overwrites what a line
said. Every human output escapes them (as `history` always did); `--json` stays JSON."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import MAJORDOMUS, Repo, make_repo

OSC52 = "\x1b]52;c;b3duZWQ=\x07"  # write "owned" to the clipboard
HOSTILE = f"{OSC52}\x1b[2J\x9b31m\x7fover\rwritten"
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")  # C0 but \t \n, DEL, C1 (UTF-8)


def run(repo: Repo, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> tuple[int, bytes]:
    full = dict(os.environ, **(env or {}))
    proc = subprocess.run([MAJORDOMUS, *args], cwd=repo.root, input=input, capture_output=True, env=full)
    return proc.returncode, proc.stdout + b"\n" + proc.stderr


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, str, bytes]:
    """Hostile text in every place a person or a tool can put it, and the start hook's briefing."""
    repo = make_repo(tmp_path_factory.mktemp("terminal") / "repo")
    repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)})
    env = {"MAJORDOMUS_EPISODE": "e1"}
    repo.mj("start", f"task {HOSTILE}", "--scope", f"src/{HOSTILE}", env=env, check=True)
    repo.mj("decision", "add", f"decided {HOSTILE}", "--why", f"because {HOSTILE}", env=env, check=True)
    qid = repo.mj("question", "add", f"asked {HOSTILE}", env=env, check=True).stdout.strip()
    repo.mj("question", "add", f"still open {HOSTILE}", env=env, check=True)
    repo.mj("question", "resolve", qid, f"answered {HOSTILE}", env=env, check=True)
    repo.mj("handover", "--next", f"next {HOSTILE}", env=env, check=True)
    repo.mj("checkpoint", "--note", f"note {HOSTILE}", env=env, check=True)
    repo.commit(f"subject {HOSTILE}", {f".ai/repo/adrs/0001-{OSC52[1:6]}.md": f"# {HOSTILE}\n"})
    derived = repo.mj("knowledge", "derive", "--episode", "e1", env=env, check=True)
    assert RAW.search(derived.stdout.encode() + derived.stderr.encode()) is None
    ids = [c["id"] for c in json.loads(repo.mj("knowledge", "candidates", "--json", check=True).stdout)]
    assert len(ids) == 2
    briefing = repo.hook("session-start", {"session_id": "e2", "source": "startup", "cwd": str(repo.root)})
    return repo, ids[0], briefing.stdout + briefing.stderr


HUMAN = [("knowledge", "candidates"), ("knowledge", "record", "{id}"), ("knowledge", "status"),
         ("knowledge", "edges"), ("knowledge", "derive", "--episode", "e1", "--dry-run"),
         ("question", "list"), ("context",), ("session", "context", "--episode", "e1"),
         ("history", "--episode", "e1"), ("knowledge", "check"), ("doctor",),
         ("session", "start", "--id", "e3")]


def test_every_human_output_escapes_control_characters(stored: tuple[Repo, str, bytes]) -> None:
    repo, rid, briefing = stored
    assert b"still open" in briefing and RAW.search(briefing) is None, briefing
    failures = []
    for args in HUMAN:
        args = tuple(a.format(id=rid) for a in args)
        code, out = run(repo, *args, env={"MAJORDOMUS_EPISODE": "e1"})
        if b"Traceback" in out or RAW.search(out):
            failures.append(f"`majordomus {' '.join(args)}` (exit {code}): {out[:600]!r}")
    assert not failures, "\n".join(failures)


def test_json_stays_json_and_keeps_the_text(stored: tuple[Repo, str, bytes]) -> None:
    """`--json` escapes the same characters inside its strings, so it parses to the stored text
    (a record's title is its text's first line, `\r` breaking it: the whole text is its body)."""
    repo, rid, _ = stored
    for args, find in ((("question", "list", "--json"), lambda d: d[0]["text"]),
                       (("knowledge", "record", rid, "--json"), lambda d: d["body"]),
                       (("session", "context", "--episode", "e1", "--json"), lambda d: d["decisions"][0]["text"])):
        code, _ = run(repo, *args)
        proc = subprocess.run([MAJORDOMUS, *args], cwd=repo.root, capture_output=True)
        assert code == 0 and RAW.search(proc.stdout) is None, (args, proc.stdout[:300])
        assert HOSTILE in find(json.loads(proc.stdout)), args


def test_a_hostile_record_file_is_escaped_too(tmp_path: Path) -> None:
    """A record committed by a hostile repository, not written by us: its title, body and id."""
    repo = make_repo(tmp_path / "repo")
    folder = repo.root / ".ai/repo/knowledge/candidates"
    esc = "\\e]52;c;b3duZWQ=\\a\\e[2J\\u009b"
    (folder / "x-1.md").write_text(
        f'---\nid: "x-1"\nkind: knowledge/v1\nclass: fact\nstatus: candidate\nepistemics: observed\n'
        f'title: "title {esc}"\ndate: "2026-01-01"\nprovenance:\n  origin: extracted\n  derived_from:\n'
        f'    - "session:{esc}"\n---\nbody \x1b]52;c;b3duZWQ=\x07 \x1b[2J\n', encoding="utf-8")
    for args in (("knowledge", "candidates"), ("knowledge", "record", "x-1"), ("knowledge", "edges"),
                 ("knowledge", "check"), ("knowledge", "status"), ("doctor",), ("context",)):
        code, out = run(repo, *args)
        assert b"Traceback" not in out and RAW.search(out) is None, (args, code, out[:600])


def test_the_review_loop_escapes_what_it_shows(stored: tuple[Repo, str, bytes]) -> None:
    """`knowledge review` at a real pseudo-terminal shows each candidate's title and body."""
    import pexpect

    repo, _, _ = stored
    child = pexpect.spawn(MAJORDOMUS, ["knowledge", "review"], cwd=str(repo.root),
                          env=dict(os.environ, TERM="dumb"), timeout=60, dimensions=(50, 200))
    child.expect_exact(b"[p]romote  [r]eject  [e]dit  [s]kip  [q]uit ? ")
    screen = bytes(child.before)
    child.sendline(b"q")
    child.expect(pexpect.EOF)
    assert b"decided" in screen and b"\\u001b]52" in screen, screen
    # the terminal's own line ends are \r\n; any other control byte came from stored text
    assert not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]|\r(?!\n)", screen), screen
