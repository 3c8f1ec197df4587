"""A hostile repository must not reach outside: tracked symbolic links where our folders and
files go (every writer refuses, with one line, and nothing lands outside), a linked
`.claude/settings.json` for `capture install`, and files a repository carries that would read
forever or fill memory (a YAML alias bomb, a pipe, a link to /dev/zero) in every place one can
stand: the policy, sources.yaml, a rule file, a record."""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import MAJORDOMUS, Repo, make_repo

LIMIT_S = 60  # a hang guard, not a timing: a bounded read finishes in a fraction of it
MEMORY = 1 << 30  # what one command may map before the kernel refuses more (a bomb hits this first)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(folder.rglob("*"))}


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _run(repo: Repo, *argv: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(list(argv), cwd=repo.root, input=stdin, capture_output=True, text=True,
                          env=full, timeout=LIMIT_S, preexec_fn=_limited)


def _mj(repo: Repo, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return _run(repo, MAJORDOMUS, *args, stdin=stdin, env=env)


def _hook(repo: Repo, name: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return _run(repo, str(repo.root / ".claude" / "hooks" / f"majordomus-{name}"), stdin=json.dumps(payload), env=env)


def _refused(proc: subprocess.CompletedProcess[str], *codes: int) -> str:
    assert proc.returncode in codes, (proc.args, proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


# --- writers and tracked symbolic links ----------------------------------------------------------

def _open_with_decision(repo: Repo) -> None:
    repo.mj("session", "start", "--id", "e1", check=True)
    repo.mj("decision", "add", "a decision to derive", "--why", "a writer to try", check=True)


def _link(repo: Repo, rel: str, target: Path, keep: bool = False) -> None:
    """Replace `rel` in the checkout with a symbolic link to `target` (its content moved there
    first when `keep`), as a hostile repository would carry it."""
    path = repo.root / rel
    if keep and path.exists():
        os.rename(path, target)
    elif path.is_dir():
        shutil.rmtree(path)
        target.mkdir(exist_ok=True)
    elif path.exists():
        path.unlink()
    path.symlink_to(target)


# (link in the checkout, what the link points to: a folder or a file, how to make the repository
# ready, the writer to run, the exit codes it may end with)
CASES: dict[str, tuple[str, str, str, tuple[str, ...], tuple[int, ...]]] = {
    "ledger": (".ai/local/ledger.jsonl", "file", "open", ("decision", "add", "x", "--why", "y"), (4,)),
    "local folder": (".ai/local", "dir-keep", "open", ("decision", "add", "x", "--why", "y"), (4,)),
    "state folder": (".ai/local/state", "dir-keep", "fresh", ("session", "start", "--id", "e2"), (4,)),
    "open episode record": (".ai/local/state/episodes", "dir", "fresh", ("session", "start", "--id", "e2"), (4,)),
    "ledger lock": (".ai/local/state/ledger.lock", "file", "open", ("decision", "add", "x", "--why", "y"), (4,)),
    "knowledge lock": (".ai/local/state/knowledge.lock", "file", "decided", ("knowledge", "derive", "--episode", "e1"), (1, 4)),
    "dep file": (".ai/local/state/doit.sqlite3", "file", "decided", ("knowledge", "derive", "--episode", "e1"), (4,)),
    "dep file journal": (".ai/local/state/doit.sqlite3-journal", "file", "decided", ("knowledge", "derive", "--episode", "e1"), (4,)),
    "candidates": (".ai/repo/knowledge/candidates", "dir", "branch", ("knowledge", "derive", "--episode", "e1"), (1, 4)),
    "session records": (".ai/repo/sessions", "dir", "branch", ("session", "close", "--id", "e1"), (1, 4)),
    "task state": (".ai/local/state/task.json", "file", "fresh", ("start", "a task"), (1, 4)),
    "questions": (".ai/local/state/questions.lock", "file", "open", ("question", "add", "a question"), (4,)),
    "policy cache": (".ai/local/state/policy.cache.json", "file", "fresh", ("session", "start", "--id", "e2"), (0,)),
    "init into a linked .ai": (".ai", "dir", "bare", ("init",), (4,)),
}


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One repository per state a case starts from, made once; each case works on a copy."""
    made: dict[str, Path] = {}
    base = tmp_path_factory.mktemp("templates")
    for ready in ("bare", "fresh", "open", "branch"):
        repo = make_repo(base / ready, init=ready != "bare", capture=False)
        if ready == "branch":
            repo.git("checkout", "-q", "-b", "feature")
        if ready in ("open", "branch"):
            _open_with_decision(repo)
        made[ready] = repo.root
    made["decided"] = made["open"]
    return made


@pytest.mark.parametrize("case", list(CASES))
def test_writers_never_follow_a_link_out_of_the_checkout(templates: dict[str, Path], tmp_path: Path,
                                                         case: str) -> None:
    rel, kind, ready, argv, codes = CASES[case]
    repo = Repo(tmp_path / "repo")
    shutil.copytree(templates[ready], repo.root, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "target"
    if kind == "file":
        target.write_bytes(b"a user's own file\n")
        _link(repo, rel, target)
    else:
        _link(repo, rel, target, keep=kind == "dir-keep")
    before = _snapshot(outside)
    proc = _mj(repo, *argv)
    line = _refused(proc, *codes) if codes != (0,) else None
    assert _snapshot(outside) == before, f"{case}: a writer followed {rel} out of the checkout"
    if line is not None:
        assert "symbolic link" in line or "not a regular file" in line, line
    assert (repo.root / rel).is_symlink(), "the link itself was replaced"


def test_promote_never_writes_into_a_linked_curated_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    repo.git("checkout", "-q", "-b", "feature")
    _open_with_decision(repo)
    repo.mj("session", "close", "--id", "e1", check=True)
    [candidate] = repo.candidates()
    outside = tmp_path / "other-checkout-curated"
    _link(repo, ".ai/repo/knowledge/curated", outside)
    proc = _mj(repo, "knowledge", "promote", candidate.stem, stdin="I checked it against the code.\n")
    line = _refused(proc, 4)
    assert "curated" in line and "symbolic link" in line, line
    assert list(outside.iterdir()) == []
    assert candidate.exists(), "the candidate moved although nothing was promoted"


def test_capture_install_refuses_a_linked_settings_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    users = tmp_path / "home-claude-settings.json"
    users.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": "sk-ant-not-a-real-one"}}), encoding="utf-8")
    (repo.root / ".claude").mkdir()
    (repo.root / ".claude/settings.json").symlink_to(users)
    before = users.read_bytes()
    line = _refused(_mj(repo, "capture", "install"), 4)
    assert "settings.json" in line and "symbolic link" in line, line
    assert (repo.root / ".claude/settings.json").is_symlink(), "the linked file was copied in"
    assert users.read_bytes() == before
    assert repo.git("status", "--porcelain", "--untracked-files=all", "--", ".claude/settings.json") == "?? .claude/settings.json\n"


# --- reads that never end ------------------------------------------------------------------------

# nine lists of nine, nested nine deep through aliases: a few hundred bytes standing for 9**9
# strings, as the value of a key each file declares (a repr or a walk of it never ends)
BOMB = "[" + ", ".join(['&a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'] + [
    f"&{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]) + "]"

PLACES = {  # where, the text a bomb goes in, and a command that must name it
    "policy": (".ai/repo/policy.yaml", "session:\n  briefing_budget_lines: {}\n", ("knowledge", "status")),
    "sources": (".ai/repo/knowledge/sources.yaml", "classes:\n  bomb:\n    pathspec: {}\n", ("knowledge", "status")),
    "rule": (".ai/repo/rules/project/hostile.yaml", "id: project.bomb\nvalidator: {}\n", ("rules", "list")),
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = make_repo(tmp_path_factory.mktemp("outside") / "repo")
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    repo.mj("decision", "add", "a decision", "--why", "a record to read", check=True)
    return repo


def _place(repo: Repo, rel: str, what: str, form: str) -> bytes | None:
    path = repo.root / rel
    old = path.read_bytes() if path.is_file() else None
    path.unlink(missing_ok=True)
    if what == "alias bomb":
        path.write_text(form.format(BOMB), encoding="utf-8")
    elif what == "pipe":
        os.mkfifo(path)
    elif what == "/dev/zero":
        path.symlink_to("/dev/zero")
    return old


@pytest.mark.parametrize("what", ["alias bomb", "pipe", "/dev/zero"])
@pytest.mark.parametrize("place", list(PLACES))
def test_files_that_never_end_are_refused_not_read(shared: Repo, place: str, what: str) -> None:
    rel, form, naming = PLACES[place]
    old = _place(shared, rel, what, form)
    try:
        for args, codes in ((("doctor",), (0, 4, 5, 10, 11)),):
            proc = _mj(shared, *args)
            assert proc.returncode in codes, (args, proc.returncode, proc.stderr[-1500:])
            assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-1500:]
        named = _mj(shared, *naming)
        said = named.stdout + named.stderr
        assert {"alias bomb": "alias", "pipe": "not a regular file", "/dev/zero": "symbolic link"}[what] in said, said
        assert Path(rel).name in said, said
        if place != "rule":
            _refused(named, 4, 5)  # the policy refused as input (4), sources.yaml as not initialised (5)
        start = _hook(shared, "session-start", {"session_id": "e-read", "source": "startup"})
        assert start.returncode == 0 and "Traceback" not in start.stderr, start.stderr
        assert "Majordomus briefing" in start.stdout, start.stderr
    finally:
        path = shared.root / rel
        path.unlink(missing_ok=True)
        if old is not None:
            path.write_bytes(old)


def test_an_alias_bomb_in_a_record_is_a_finding(shared: Repo) -> None:
    record = shared.root / ".ai/repo/knowledge/candidates/bomb-1.md"
    record.write_text("---\nid: bomb-1\ntitle: " + BOMB + "\n---\nA body.\n", encoding="utf-8")
    try:
        check = _mj(shared, "knowledge", "check", "--json")
        assert check.returncode == 10, check.stderr[-1500:]
        findings = [f for f in json.loads(check.stdout)["findings"] if "bomb-1" in f["file"]]
        assert findings and any("alias" in f["what"] for f in findings), findings
        for args in (("knowledge", "candidates"), ("knowledge", "status"), ("knowledge", "record", "bomb-1")):
            proc = _mj(shared, *args)
            assert proc.returncode in (0, 3, 4) and "Traceback" not in proc.stderr, proc.stderr[-1500:]
    finally:
        record.unlink()
