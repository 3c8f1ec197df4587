"""Faults that lose data: a full disk, a torn last ledger line, a retention trim under an open
episode, a cache carried by the repository, a broken or locked doit dep file, a start hook without
git or with an unwritable `$CLAUDE_ENV_FILE`, an id that names a folder's README. Each test makes
the fault for real (a small tmpfs, a truncated sqlite file, a real sqlite transaction, a PATH
without git) and runs the real command or hook."""
from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import MAJORDOMUS, Repo, make_repo

LEDGER = Path(".ai/local/ledger.jsonl")
DEP_FILE = Path(".ai/local/state/doit.sqlite3")


def _one_line(proc: subprocess.CompletedProcess[str], *codes: int) -> str:
    assert proc.returncode in codes, (proc.args, proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _lines(repo: Repo) -> list[dict[str, object]]:
    """Every ledger line, each of which must parse whole."""
    text = (repo.root / LEDGER).read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "the ledger ends in half a line"
    return [json.loads(line) for line in text.splitlines()]


def _tmp_files(repo: Repo) -> list[Path]:
    return [p for p in (repo.root / ".ai").rglob(".tmp.*")]


# --- a full disk ---------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of its own, unmounted afterwards; skipped where mounting is refused."""
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN): {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> Path:
    """Fill `disk` to its last byte; returns the filler file (remove it to free the space)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 1 << 12, 1 << 8, 1):
            chunk = b"\0" * size
            while True:
                try:
                    if os.write(fd, chunk) < size:
                        break
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    break
    finally:
        os.close(fd)
    return filler


def test_full_disk_never_leaves_half_a_line_or_a_temporary_file(small_disk: Path) -> None:
    repo = make_repo(small_disk / "repo")
    repo.mj("session", "start", "--id", "e1", check=True)
    repo.mj("decision", "add", "a decision before the disk fills", "--why", "to have one", check=True)
    before = (repo.root / LEDGER).read_bytes()
    filler = _fill(small_disk)
    # longer than the slack of the ledger's last page: the write can only be short
    long_text = "a decision on a full disk " + "x" * 9000
    decision = repo.mj("decision", "add", long_text, "--why", "the disk is full")
    line = _one_line(decision, 1)
    assert "No space left on device" in line, line
    assert (repo.root / LEDGER).read_bytes() == before, "a failed append kept part of its line"
    question = repo.mj("question", "add", "a question on a full disk " + "y" * 9000)
    _one_line(question, 1)
    assert (repo.root / LEDGER).read_bytes() == before
    assert _tmp_files(repo) == [], "a failed atomic write left its temporary file"
    filler.unlink()
    repo.mj("decision", "add", "after the disk was freed", "--why", "space again", check=True)
    texts = [line.get("text") for line in _lines(repo) if line["event"] == "decision.recorded"]
    assert texts == ["a decision before the disk fills", "after the disk was freed"]


# --- a torn last line ----------------------------------------------------------------------------

def test_an_append_after_a_torn_last_line_starts_a_fresh_line(repo: Repo) -> None:
    repo.mj("session", "start", "--id", "e1", check=True)
    with open(repo.root / LEDGER, "ab") as handle:  # a torn write: half a line, no newline
        handle.write(b'{"ts":"2026-01-01T00:00:00Z","event":"decision.recor')
    repo.mj("decision", "add", "the decision after a torn line", "--why", "kept", check=True)
    text = (repo.root / LEDGER).read_text(encoding="utf-8")
    assert text.splitlines()[-1].startswith('{"ts"'), "the new line was joined to the torn one"
    assert json.loads(text.splitlines()[-1])["text"] == "the decision after a torn line"
    derive = repo.mj("knowledge", "derive", "--episode", "e1")
    assert derive.returncode == 0, derive.stderr
    assert "wrote 1" in derive.stdout, derive.stdout


# --- the retention trim and open episodes --------------------------------------------------------

def test_the_retention_trim_keeps_an_open_episodes_window(repo: Repo) -> None:
    policy = repo.root / ".ai/repo/policy.yaml"
    policy.write_text(policy.read_text(encoding="utf-8").replace("retention_lines: 50000", "retention_lines: 200"),
                      encoding="utf-8")
    repo.mj("session", "start", "--id", "long", check=True)
    repo.mj("decision", "add", "long decision 0", "--why", "the long episode", check=True)
    # 19 more decisions of the long episode, then 50 short episodes closed meanwhile, as their
    # ledger lines (opened, a decision, a checkpoint, derived, closed: 250 lines), then one
    # short episode closed for real, which trims
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # after the open, as written
    with open(repo.root / LEDGER, "a", encoding="utf-8") as handle:
        for n in range(1, 20):
            handle.write(json.dumps({"ts": now, "event": "decision.recorded",
                                     "session": "long", "task": None, "text": f"long decision {n}",
                                     "why": "the long episode"}) + "\n")
        for n in range(50):
            for event in ("session.opened", "decision.recorded", "checkpoint.recorded",
                          "knowledge.derived", "session.closed"):
                handle.write(json.dumps({"ts": now, "event": event,
                                         "session": f"short{n}", "episode": f"short{n}"}) + "\n")
    repo.mj("session", "start", "--id", "short-last", check=True)
    close = repo.mj("session", "close", "--id", "short-last")
    assert close.returncode == 0, close.stderr
    assert any(line["event"] == "ledger.trimmed" for line in _lines(repo)), "the trim never ran"
    assert len(_lines(repo)) <= 200 + 21 + 2  # the cap, the open episode's window, the trim's line
    close = repo.mj("session", "close", "--id", "long")
    assert close.returncode == 0, close.stderr
    derived = [line for line in _lines(repo) if line["event"] == "knowledge.derived" and line.get("episode") == "long"]
    assert derived and derived[-1]["written"] == 20, derived


# --- a cache the repository carries --------------------------------------------------------------

def test_a_committed_policy_cache_never_wins_over_the_policy(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    origin.mj("knowledge", "status", check=True)  # any command writes the cache
    cache = origin.root / ".ai/local/state/policy.cache.json"
    data = json.loads(cache.read_text(encoding="utf-8"))
    data["values"]["ledger.retention_lines"] = 1
    data["values"]["session.knowledge_on_end"] = "off"
    cache.write_text(json.dumps(data), encoding="utf-8")
    origin.git("add", "-A")
    origin.git("add", "-f", ".ai/local/state/policy.cache.json")
    origin.commit("a careless commit of a cache")
    clone = Repo(tmp_path / "clone")
    subprocess.run(["git", "clone", "-q", str(origin.root), str(clone.root)], check=True)
    assert (clone.root / ".ai/local/state/policy.cache.json").exists()
    clone.mj("session", "start", "--id", "e1", check=True)
    clone.mj("decision", "add", "a decision the policy derives", "--why", "on_end is on", check=True)
    close = clone.mj("session", "close", "--id", "e1")
    assert close.returncode == 0, close.stderr
    lines = _lines(clone)
    assert not any(line["event"] == "ledger.trimmed" for line in lines), "retention 1 came from the cache"
    derived = [line for line in lines if line["event"] == "knowledge.derived"]
    assert derived and derived[-1]["written"] == 1, "the cache switched derivation off"


# --- doit's dep file -----------------------------------------------------------------------------

def _derive_twice(repo: Repo) -> None:
    """Two derivations, the second through doit (the first of an episode needs no dep file), and a
    decision left to derive."""
    repo.mj("session", "start", "--id", "e1", check=True)
    repo.mj("decision", "add", "the first decision", "--why", "a dep file", check=True)
    repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    repo.mj("decision", "add", "the second decision", "--why", "a dep file", check=True)
    repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert (repo.root / DEP_FILE).exists()
    repo.mj("decision", "add", "the third decision", "--why", "after the damage", check=True)


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_broken_dep_file_is_rebuilt(repo: Repo, damage: str) -> None:
    _derive_twice(repo)
    dep = repo.root / DEP_FILE
    data = dep.read_bytes()
    if damage == "truncated":  # sqlite's header intact, its pages cut short
        dep.write_bytes(data[: len(data) // 2 + 100])
    else:
        dep.write_bytes(b"not a database at all\n" * 50)
    derive = repo.mj("knowledge", "derive", "--episode", "e1")
    assert derive.returncode == 0, derive.stderr
    assert "rebuilt" in derive.stderr, derive.stderr
    assert "Traceback" not in derive.stderr
    assert "wrote 1" in derive.stdout, derive.stdout
    again = repo.mj("knowledge", "derive", "--episode", "e1")
    assert again.returncode == 0 and "nothing changed" in again.stdout, (again.stdout, again.stderr)


def test_a_locked_dep_file_is_waited_for_and_named_not_called_corrupted(repo: Repo) -> None:
    _derive_twice(repo)
    holder = sqlite3.connect(repo.root / DEP_FILE, isolation_level=None)
    holder.execute("begin exclusive")
    try:
        derive = repo.mj("knowledge", "derive", "--episode", "e1")
        line = _one_line(derive, 1)
        assert "locked" in line and "corrupt" not in line, line
    finally:
        holder.execute("rollback")
        holder.close()
    repo.mj("session", "start", "--id", "e2", check=True)
    derive = repo.mj("knowledge", "derive", "--episode", "e1")
    assert derive.returncode == 0, derive.stderr
    assert "wrote 1" in derive.stdout or "nothing changed" in derive.stdout, derive.stdout
    assert len(repo.candidates()) + len(list((repo.root / ".ai/local/state/outbox/candidates").glob("*.md"))) == 3


# --- the start hook, step by step ---------------------------------------------------------------

def _path_without_git(tmp_path: Path) -> str:
    """A PATH holding what the hook script needs (dirname, cat, majordomus) and no git."""
    bin_dir = tmp_path / "bin-without-git"
    bin_dir.mkdir()
    for tool in ("dirname", "cat"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    (bin_dir / "majordomus").symlink_to(MAJORDOMUS)
    return str(bin_dir)


def test_the_start_hook_without_git_still_opens_and_briefs(repo: Repo, tmp_path: Path) -> None:
    env = dict(os.environ, PATH=_path_without_git(tmp_path))
    proc = subprocess.run([str(repo.root / ".claude/hooks/majordomus-session-start")], cwd=repo.root,
                          input=json.dumps({"session_id": "e1", "source": "startup"}).encode(),
                          capture_output=True, env=env)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    assert b"Majordomus briefing: episode e1" in proc.stdout, (proc.stdout, proc.stderr)
    lines = _lines(repo)
    assert [line["episode"] for line in lines if line["event"] == "session.opened"] == ["e1"]
    failed = [line for line in lines if line["event"] == "provider.event.failed"]
    assert failed and any("git" in str(line["error"]) for line in failed), failed
    assert (repo.root / ".ai/local/state/episodes/e1.json").is_file()
    assert list((repo.root / ".ai/local/session-contexts").glob("*--e1.md")), "no opening snapshot"


def test_the_start_hook_with_an_unwritable_env_file_still_briefs(repo: Repo, tmp_path: Path) -> None:
    not_a_file = tmp_path / "env-file-is-a-folder"
    not_a_file.mkdir()
    proc = repo.hook("session-start", {"session_id": "e1", "source": "startup"},
                     env={"CLAUDE_ENV_FILE": str(not_a_file)})
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    assert b"Majordomus briefing: episode e1" in proc.stdout, proc.stderr
    failed = [line for line in _lines(repo) if line["event"] == "provider.event.failed"]
    assert failed and "CLAUDE_ENV_FILE" in str(failed[-1]["error"]), failed


# --- ids that name what is not a record ----------------------------------------------------------

@pytest.mark.parametrize("ident", ["README", "Readme.txt"])
def test_no_id_names_a_folders_readme(repo: Repo, ident: str) -> None:
    readmes = {p: p.read_bytes() for p in (repo.root / ".ai").rglob("README.md")}
    assert len(readmes) >= 4
    start = repo.mj("session", "start", "--id", ident)
    _one_line(start, 4)
    hook = repo.hook("session-start", {"session_id": ident, "source": "startup"})
    assert hook.returncode == 0
    repo.hook("session-end", {"session_id": ident, "reason": "other"})
    repo.mj("session", "close", "--id", ident)
    _one_line(repo.mj("knowledge", "record", ident), 3)  # a reader finds no record by that name
    for args in (("knowledge", "promote", ident), ("knowledge", "reject", ident, "--reason", "not one")):
        proc = repo.mj(*args, input="evidence in my own words\n")
        assert "README" in _one_line(proc, 4)
    assert {p: p.read_bytes() for p in (repo.root / ".ai").rglob("README.md")} == readmes
    assert not list((repo.root / ".ai").rglob("[Rr][Ee][Aa][Dd][Mm][Ee].json"))


def test_the_end_and_compact_hooks_without_git_still_close_and_record(repo: Repo, tmp_path: Path) -> None:
    """The close path without git: the end hook closes the episode, publishes its session record
    (to the outbox, since the branch cannot be told), derives its decision without commit
    provenance, records that git failed, and exits 0; the pre-compact hook likewise records
    what it could not do and derives."""
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    repo.mj("decision", "add", "use sqlite for the dep file", "--why", "one file", check=True)
    repo.hook("session-start", {"session_id": "e2", "source": "startup"})
    repo.mj("decision", "add", "keep the outbox local", "--why", "nothing on trunk",
            env={"MAJORDOMUS_EPISODE": "e2"}, check=True)
    env = dict(os.environ, PATH=_path_without_git(tmp_path))
    for name, payload in (("pre-compact", {"session_id": "e2", "trigger": "auto"}),
                          ("session-end", {"session_id": "e1", "reason": "other"})):
        proc = subprocess.run([str(repo.root / f".claude/hooks/majordomus-{name}")], cwd=repo.root,
                              input=json.dumps(payload).encode(), capture_output=True, env=env)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, (name, proc.stderr)
        failed = [line for line in _lines(repo) if line["event"] == "provider.event.failed"
                  and line["hook"] == name]
        assert failed and any("git" in str(line["error"]) for line in failed), (name, failed)
    lines = _lines(repo)
    closed = [line for line in lines if line["event"] == "session.closed"]
    assert [(line["episode"], line["head"], line["branch"]) for line in closed] == [("e1", None, None)]
    assert not (repo.root / ".ai/local/state/episodes/e1.json").exists()
    assert (repo.root / ".ai/local/state/episodes/e2.json").is_file()  # a compaction closes nothing
    derived = {line["episode"]: line for line in lines if line["event"] == "knowledge.derived"}
    assert derived["e1"]["written"] == 1 and derived["e2"]["written"] == 1, derived
    assert "git could not be run" in json.dumps(derived["e1"].get("provenance"))
    outbox = repo.root / ".ai/local/state/outbox"
    assert (outbox / "sessions/e1.md").is_file(), "no session record"
    texts = [p.read_text(encoding="utf-8") for p in (outbox / "candidates").glob("*.md")]
    assert any("use sqlite for the dep file" in t for t in texts) and any("keep the outbox local" in t for t in texts)
    # with git back, the next boundary on a branch carries the records into the tracked tree
    repo.git("switch", "-q", "-c", "feature")
    assert repo.hook("session-start", {"session_id": "e3", "source": "startup"}).returncode == 0
    assert (repo.root / ".ai/repo/sessions/e1.md").is_file()
