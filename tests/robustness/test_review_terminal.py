"""`majordomus knowledge review` under a person's hands (issue 28): Ctrl-C while `$EDITOR` runs
belongs to the editor — the review neither kills it nor loses what it writes (git ignores SIGINT
while its editor runs, and so does the review) — and an `$EDITOR` no shell could split (an
unbalanced quote) is refused in one line, exit 2, never an internal error. In a real
pseudo-terminal."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import MAJORDOMUS, Repo

pexpect = pytest.importorskip("pexpect", reason="pexpect (a test dependency: pip install -e '.[test]')")

TIMEOUT = 60
PROMPT = "[p]romote  [r]eject  [e]dit  [s]kip  [q]uit ? "

# An editor that, like vim or nano, takes Ctrl-C as one of its keys: it says it is ready, waits
# for the interrupt, then writes the evidence and exits 0. `got` is cleared before it says it is
# ready: cleared after, a Ctrl-C sent at once (a loaded machine) was forgotten and it waited for ever.
EDITOR = """#!/bin/sh
got=
trap 'got=1' INT
echo "editor ready"
while [ -z "$got" ]; do sleep 0.1; done
printf 'written after Ctrl-C in the editor\\n' >> "$1"
echo "editor done"
"""


@pytest.fixture
def queue(repo: Repo, tmp_path: Path) -> tuple[Repo, str, Path]:
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    repo.mj("decision", "add", "One decision to review", "--why", "the test needs one", check=True)
    assert repo.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    (rid,) = [p.stem for p in repo.candidates()]
    editor = tmp_path / "editor.sh"
    editor.write_text(EDITOR, encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    return repo, rid, editor


def _spawn(repo: Repo, editor: str) -> pexpect.spawn:
    env = dict(os.environ, TERM="xterm", EDITOR=editor)
    env.pop("VISUAL", None)
    return pexpect.spawn(MAJORDOMUS, ["knowledge", "review"], cwd=str(repo.root), env=env, encoding="utf-8",
                         timeout=TIMEOUT, dimensions=(50, 120))


def _promote_key(child: pexpect.spawn) -> None:
    """p: one key (a review that reads lines gets its Enter after a pause)."""
    child.send("p")
    if child.expect_exact(["Class [", pexpect.TIMEOUT], timeout=10) == 1:
        child.sendline("")
        child.expect_exact("Class [")


def test_ctrl_c_in_the_editor_is_the_editors(queue: tuple[Repo, str, Path]) -> None:
    repo, rid, editor = queue
    child = _spawn(repo, str(editor))
    child.expect_exact(PROMPT)
    _promote_key(child)
    child.sendline("")
    child.expect_exact("  | ")
    child.sendline(":e")
    child.expect_exact("editor ready")
    child.sendintr()  # Ctrl-C, to the terminal's foreground group: the editor and the review
    child.expect_exact("editor done")
    child.expect_exact(f"Promoted {rid}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert [l["id"] for l in repo.events("knowledge.promoted")] == [rid]
    promoted = repo.root / ".ai/repo/knowledge/curated" / f"{rid}.md"
    assert "written after Ctrl-C in the editor" in promoted.read_text(encoding="utf-8")


def test_an_editor_killed_leaves_its_text_for_the_next_open(queue: tuple[Repo, str, Path]) -> None:
    """An editor that dies under Ctrl-C (its default) loses nothing it had saved: the next `:e`
    opens what it left."""
    repo, rid, editor = queue
    dying = editor.with_name("dying.sh")
    dying.write_text("#!/bin/sh\nprintf 'half a thought\\n' >> \"$1\"\necho 'editor ready'\nsleep 30\n",
                     encoding="utf-8")
    dying.chmod(0o755)
    child = _spawn(repo, str(dying))
    child.expect_exact(PROMPT)
    _promote_key(child)
    child.sendline("")
    child.expect_exact("  | ")
    child.sendline(":e")
    child.expect_exact("editor ready")
    child.sendintr()
    child.expect_exact("is kept in .ai/local/state/review/")
    child.expect_exact(PROMPT)  # the review goes on: the same candidate again
    child.send("q")
    child.expect(pexpect.EOF)
    kept = repo.root / ".ai/local/state/review" / f"{rid}.evidence.md"
    assert "half a thought" in kept.read_text(encoding="utf-8")
    assert repo.events("knowledge.promoted") == []


def test_an_unparsable_editor_is_one_line_exit_2(queue: tuple[Repo, str, Path]) -> None:
    repo, _, _ = queue
    child = _spawn(repo, 'vim "unbalanced')
    if child.expect_exact([PROMPT, pexpect.EOF]) == 0:  # a review that starts anyway: ask for the editor
        child.sendline("e")
        child.expect(pexpect.EOF)
    out = str(child.before)
    child.close()
    assert "Traceback" not in out, out
    assert child.exitstatus == 2, out
    said = [l for l in out.replace("\r\n", "\n").strip().split("\n") if l.strip()]
    assert len(said) == 1 and "$EDITOR" in said[0] and "unbalanced" in said[0], said
