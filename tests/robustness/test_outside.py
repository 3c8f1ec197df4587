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


def _limited(memory: int = MEMORY) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _run(repo: Repo, *argv: str, stdin: str = "", env: dict[str, str] | None = None,
         memory: int = MEMORY) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(list(argv), cwd=repo.root, input=stdin, capture_output=True, text=True,
                          env=full, timeout=LIMIT_S, preexec_fn=lambda: _limited(memory))


def _mj(repo: Repo, *args: str, stdin: str = "", env: dict[str, str] | None = None,
        memory: int = MEMORY) -> subprocess.CompletedProcess[str]:
    return _run(repo, MAJORDOMUS, *args, stdin=stdin, env=env, memory=memory)


def _hook(repo: Repo, name: str, payload: dict[str, Any], memory: int = MEMORY) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return _run(repo, str(repo.root / ".claude" / "hooks" / f"majordomus-{name}"), stdin=json.dumps(payload), env=env,
                memory=memory)


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
        if place == "policy":  # every key has its default: the command goes on, and says why in one line
            assert named.returncode == 0 and named.stderr.startswith("majordomus: warning: "), named.stderr
            assert named.stderr.count("\n") == 1, named.stderr
            assert _mj(shared, "doctor").returncode == 10
        elif place != "rule":
            _refused(named, 4, 5)  # sources.yaml refused as not initialised (5)
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


# --- readers and linked folders --------------------------------------------------------------------

SENTINEL = "OUTSIDE-SENTINEL-7f3a"
LINKED_FOLDERS = [".ai/repo", ".ai/repo/knowledge", ".ai/repo/knowledge/curated", ".ai/repo/sessions",
                  ".ai/repo/rules/project", ".ai/local"]


# the readers that print nothing but this checkout's local state (`Workspace.own_local`)
LOCAL_READERS = [("context",), ("session", "context"), ("history",), ("question", "list")]


@pytest.fixture(scope="module")
def readable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose episode e1 is closed (a candidate, a session record) and e2 is open."""
    repo = make_repo(tmp_path_factory.mktemp("linked") / "repo")
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    repo.mj("decision", "add", "a decision", "--why", "a record to read", check=True)
    repo.hook("session-end", {"session_id": "e1", "reason": "other"})
    repo.hook("session-start", {"session_id": "e2", "source": "startup"})
    return repo.root


def _plant(outside: Path) -> None:
    """The sentinel in every file a reader could show: a curated record, a session record, a rule,
    a ledger line (each where that folder's copy holds it)."""
    record = ("---\nid: sentinel-1\nkind: knowledge/v1\nclass: convention\nstatus: verified\nepistemics: decided\n"
              f"title: {SENTINEL} title\ndate: '2026-03-04'\nprovenance:\n  origin: extracted\n"
              f"  derived_from:\n  - session:e1\n---\n{SENTINEL} body\n")
    for path in outside.rglob("*"):
        if path.is_dir() and path.name == "curated":
            (path / "sentinel-1.md").write_text(record, encoding="utf-8")
        if path.is_dir() and path.name == "sessions":
            for session in path.glob("e1.md"):
                session.write_text(session.read_text(encoding="utf-8").replace("e1", f"e1 {SENTINEL}"), encoding="utf-8")
        if path.is_dir() and path.name == "project":
            (path / "sentinel.yaml").write_text(f"id: project.sentinel\ntitle: {SENTINEL} rule\n", encoding="utf-8")
        if path.name == "ledger.jsonl":
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "decision.recorded", "session": "e2",
                                         "task": None, "text": f"{SENTINEL} decision", "why": SENTINEL}) + "\n")
                handle.write(json.dumps({"ts": "2026-03-04T05:06:08Z", "event": "handover.recorded", "session": "e2",
                                         "task": None, "next": f"{SENTINEL} next"}) + "\n")
    if outside.name == "curated":
        (outside / "sentinel-1.md").write_text(record, encoding="utf-8")
    if outside.name == "project":
        (outside / "sentinel.yaml").write_text(f"id: project.sentinel\ntitle: {SENTINEL} rule\n", encoding="utf-8")
    if outside.name == "sessions":
        for session in outside.glob("e1.md"):
            session.write_text(session.read_text(encoding="utf-8").replace("e1", f"e1 {SENTINEL}"), encoding="utf-8")


@pytest.mark.parametrize("linked", LINKED_FOLDERS)
def test_readers_never_read_through_a_linked_folder(readable: Path, tmp_path: Path, linked: str) -> None:
    """A folder of the store linked out of the repository (a tracked link, or one a person made)
    is never read through, as a linked file is not: no reader, command or hook shows what the
    folder outside holds, and each still answers without a traceback (the hooks exit 0)."""
    repo = Repo(tmp_path / "repo")
    shutil.copytree(readable, repo.root, symlinks=True)
    folder = repo.root / linked
    outside = tmp_path / "elsewhere" / folder.name
    shutil.copytree(folder, outside, symlinks=True)
    _plant(outside)
    assert SENTINEL in "".join(p.read_text(encoding="utf-8", errors="replace")
                               for p in outside.rglob("*") if p.is_file())
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)
    outside_before = _snapshot(outside.parent)
    readers = [("knowledge", "candidates"), ("knowledge", "candidates", "--json"), ("knowledge", "status"),
               ("knowledge", "record", "sentinel-1"), ("knowledge", "edges", "--json"), ("knowledge", "check"),
               ("context",), ("session", "context"), ("history",), ("question", "list"), ("rules", "list"),
               ("check",), ("doctor",)]
    for args in readers:
        proc = _mj(repo, *args)
        said = proc.stdout + proc.stderr
        assert SENTINEL not in said, (linked, args, said[-2000:])
        assert "Traceback" not in proc.stderr and proc.returncode != 2, (linked, args, proc.returncode, proc.stderr)
        if linked == ".ai/local" and args in LOCAL_READERS:  # refused as every reader of local state is
            assert proc.returncode == 4 and proc.stderr == (
                "majordomus: .ai/local is a symbolic link: majordomus writes only to real folders and files "
                "inside the repository; replace it with a real one (or remove it)\n"), (args, proc.returncode, proc.stderr)
    if linked.startswith(".ai/repo/knowledge"):  # `knowledge check` names the linked folder, as it names a linked file
        check = json.loads(_mj(repo, "knowledge", "check", "--json").stdout)
        named = {f["file"] for f in check["findings"] if "symbolic link" in f["what"]}
        assert named == {".ai/repo/knowledge/curated"} | ({".ai/repo/knowledge/candidates"}
                                                         if linked == ".ai/repo/knowledge" else set()), check
    for name, payload in (("session-start", {"session_id": "e3", "source": "startup"}),
                          ("session-end", {"session_id": "e2", "reason": "other"})):
        proc = _hook(repo, name, payload)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (linked, name, proc.stderr)
        assert SENTINEL not in proc.stdout + proc.stderr, (linked, name, proc.stdout[-2000:])
    assert folder.is_symlink()
    assert _snapshot(outside.parent) == outside_before, "something was written through the link"


# --- a ledger that never ends ----------------------------------------------------------------------

SMALL = 256 << 20  # what a command may map in the runaway ledger's test
HOLE, TAIL = 320 << 20, 288 << 20


def _mj_small(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return _mj(repo, *args, memory=SMALL)


def _hook_small(repo: Repo, name: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return _hook(repo, name, payload, memory=SMALL)


def _decision(episode: str, text: str) -> bytes:
    return (json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "decision.recorded", "session": episode,
                        "task": None, "text": text, "why": "a reason"}) + "\n").encode()


def test_a_runaway_ledger_is_read_in_bounds(tmp_path: Path) -> None:
    """A runaway ledger, most of it two lines with no end in sight (sparse holes: one of 320 MiB
    ending in a newline, one of 288 MiB the file ends in), each more than a command may map here
    (256 MiB): every reader and hook skips both as malformed lines (ledger.LINE_LIMIT) and holds a
    few MiB, not the file; the evidence between them is derived; the retention trim streams the
    file down to its cap. (By hand, with holes of 1.25 and 1.1 GiB, the same held.)"""
    repo = make_repo(tmp_path / "repo")
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    repo.mj("decision", "add", "the decision before the hole", "--why", "a reason", check=True)
    ledger = repo.root / ".ai/local/ledger.jsonl"
    with open(ledger, "r+b") as handle:
        handle.seek(ledger.stat().st_size + (HOLE))  # NUL bytes, never written to disk
        handle.write(b"\n" + _decision("e1", "the decision after the hole"))
        handle.truncate(handle.tell() + TAIL)  # more, and no newline at the end
    assert ledger.stat().st_size > HOLE + TAIL and ledger.stat().st_blocks * 512 < 1 << 20

    history = _mj_small(repo, "history")
    assert history.returncode == 0 and "Traceback" not in history.stderr, history.stderr[-1500:]
    assert "the decision after the hole" in history.stdout
    assert "2 malformed ledger line(s) skipped" in history.stderr, history.stderr
    start = _hook_small(repo, "session-start", {"session_id": "e2", "source": "startup"})
    assert start.returncode == 0 and start.stderr == "", start.stderr[-1500:]
    assert "Majordomus briefing" in start.stdout
    end = _hook_small(repo, "session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0 and end.stderr == "", end.stderr[-1500:]
    listed = _mj_small(repo, "history", "--json", "--event", "knowledge.derived")  # the test never holds the file either
    derived = [line for line in json.loads(listed.stdout) if line["episode"] == "e1"]
    assert [line["written"] for line in derived] == [2], derived
    texts = "".join(p.read_text(encoding="utf-8") for p in repo.candidates())
    assert "the decision before the hole" in texts and "the decision after the hole" in texts
    for name in ("doctor", "check"):
        proc = _mj_small(repo, name)
        assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stdout + proc.stderr, proc.stderr[-1500:]

    # the retention trim: a cap of 6 lines, passed by the next close, streams the file down
    policy = repo.root / ".ai/repo/policy.yaml"
    policy.write_text(policy.read_text().replace("retention_lines: 50000", "retention_lines: 6"))
    compact = _hook_small(repo, "pre-compact", {"session_id": "e2", "trigger": "auto"})
    assert compact.returncode == 0 and compact.stderr == "", compact.stderr[-1500:]
    end = _hook_small(repo, "session-end", {"session_id": "e2", "reason": "other"})
    assert end.returncode == 0 and end.stderr == "", end.stderr[-1500:]
    assert ledger.stat().st_size < 1 << 20
    lines = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    assert [line["event"] for line in lines][-1] == "ledger.trimmed" and len(lines) <= 7
