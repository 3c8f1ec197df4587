"""git through its command line: one process per question, batched where the question is many.

The caller's environment never decides which repository git reads: every `GIT_*` variable is
dropped before git runs (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`,
`GIT_NAMESPACE`, `GIT_CONFIG_PARAMETERS`, `GIT_LITERAL_PATHSPECS` ... would each make git answer
about another repository, another index or another reading of our pathspecs), except the
few that say who commits and which configuration files a person keeps (`KEPT`).
"""
from __future__ import annotations

import mmap
import os
import time
from pathlib import Path

from majordomus.base.fsio import read_regular
from majordomus.base.lean import TYPE_CHECKING, pattern

if TYPE_CHECKING:
    import signal
    from typing import Any, NamedTuple
else:  # the C module, loaded with the interpreter: `signal` wraps its numbers in enums (~0.7 ms)
    import _signal as signal

    from majordomus.base.lean import NamedTuple

_ENV = {"LC_ALL": "C", "LANG": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
# The GIT_* variables a caller may set: identity, where a person's configuration lives, how far up
# a repository is looked for (a ceiling only narrows), where
# git's own programs are, and tracing. Any other GIT_* is dropped (an allow-list, so a variable
# a later git adds cannot redirect us either).
KEPT = frozenset({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                  "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
                  "GIT_CONFIG_NOSYSTEM", "GIT_CEILING_DIRECTORIES", "GIT_EXEC_PATH", "GIT_TRACE",
                  "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF", "GIT_TRACE_PERFORMANCE",
                  "GIT_TRACE_SETUP"})


class GitError(RuntimeError):
    pass


def environment() -> dict[str, str]:
    """The environment git runs in: the caller's, without the GIT_* variables that would choose
    another repository, work tree, index, object store, namespace or configuration for it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT}
    env.update(_ENV)
    return env


TIMEOUT_S = 300.0  # a git process that has not answered in this long is killed (a hung mount, a lock)


def argv(root: Path, *args: str) -> list[str]:
    """The command line of every git process: `git -C ROOT ARGS` (no `cwd`: `posix_spawnp` has
    none)."""
    return ["git", "-C", str(root), *args]


class Running:
    """A git process `spawn` started: its output is read as it comes, so it runs while the caller
    goes on (the start hook imports its open path meanwhile); `wait` collects it."""

    __slots__ = ("args", "pid", "fds", "data", "done")

    def __init__(self, args: tuple[str, ...], pid: int, fds: list[int], data: bytes) -> None:
        self.args, self.pid, self.fds, self.data = args, pid, fds, data
        self.done: tuple[int, bytes, bytes] | None = None

    def wait(self, timeout: float = TIMEOUT_S) -> tuple[int, str, str]:
        """(exit code, stdout, stderr), decoded as `subprocess` decodes text (UTF-8, errors
        replaced, universal newlines). Past `timeout` the process is killed and GitError raised."""
        code, out, err = self.wait_bytes(timeout)
        text = [b.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n") for b in (out, err)]
        return code, text[0], text[1]

    def wait_bytes(self, timeout: float = TIMEOUT_S) -> tuple[int, bytes, bytes]:
        """`wait`'s answer as git wrote it (a `-z` listing of paths that are not UTF-8)."""
        if self.done is None:
            if not self.fds:  # killed by an earlier wait
                raise GitError(f"git {' '.join(self.args)}: killed before it answered")
            try:
                self.done = self._collect(time.monotonic() + timeout)
            except BaseException:  # out of time, or a signal stopped the caller: git stops too
                self._end()
                raise
            finally:
                for fd in self.fds:
                    os.close(fd)
                self.fds = []
        return self.done

    def running_after(self, seconds: float) -> bool:
        """Whether git is still at work after at most `seconds` spent waiting for it to end (its
        error output closed); its answer is left for `wait` to read."""
        if not self.fds:
            return False
        import select

        poller = select.poll()
        poller.register(self.fds[1], 0)  # no event asked: its end (POLLHUP) alone is reported
        return not poller.poll(max(seconds * 1000, 0))

    def _collect(self, deadline: float) -> tuple[int, bytes, bytes]:
        import select

        out, err, feed = self.fds[:3]
        chunks: dict[int, list[bytes]] = {out: [], err: []}
        poller = select.poll()
        for fd in (out, err):
            poller.register(fd, select.POLLIN)
        poller.register(feed, select.POLLOUT)
        live, data = {out, err, feed}, self.data
        while live:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._late()
            for fd, _ in poller.poll(max(left * 1000, 1)):
                if fd == feed:
                    try:
                        data = data[os.write(fd, data[:65536]):]
                    except OSError:  # git closed its stdin: what it reads it has
                        data = b""
                    if data:
                        continue
                else:
                    chunk = os.read(fd, 65536)
                    if chunk:
                        chunks[fd].append(chunk)
                        continue
                poller.unregister(fd)
                live.discard(fd)
                if fd == feed:  # all written: git reads the end of its input
                    self.fds.remove(fd)
                    os.close(fd)
        while True:  # the pipes are closed: git is exiting
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = 0  # reaped: its number may be another process's now
                break
            if time.monotonic() > deadline:
                raise self._late()
            _exit_of(self.pid, deadline)
        return os.waitstatus_to_exitcode(status), b"".join(chunks[out]), b"".join(chunks[err])

    def end(self) -> None:
        """Stop the process and reap it when its answer was never collected (a caller that asked
        ahead and no longer needs it); a later `wait` says it was killed."""
        if self.done is None and self.fds:
            self._end()
            for fd in self.fds:
                os.close(fd)
            self.fds = []

    def _late(self) -> GitError:
        return GitError(f"git {' '.join(self.args)}: no answer in time: killed")

    def _end(self) -> None:
        """Kill and reap the process, unless it was reaped already."""
        if self.pid > 0:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = 0


def _exit_of(pid: int, deadline: float) -> None:
    """Wait until the process `pid` has exited (not reaped), or `deadline`: on its pidfd where the
    kernel has one (Linux 5.3), which wakes at the exit itself; else a millisecond's sleep, which a
    git call paid whole each time (its pipes close as it exits, a moment before it can be reaped)."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here (another system, an older kernel)
        time.sleep(0.001)
        return
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.poll(max((deadline - time.monotonic()) * 1000, 1))
    finally:
        os.close(fd)


def spawn(root: Path, *args: str, input: str | None = None) -> Running:
    """Start `git -C ROOT ARGS` (os.posix_spawnp and pipes: the hook path does not import
    `subprocess`, with its threading, selectors and locale); OSError when git cannot be started."""
    out, err, feed = os.pipe(), os.pipe(), os.pipe()
    try:
        os.set_blocking(feed[1], False)
        pid = os.posix_spawnp("git", argv(root, *args), environment(), file_actions=[
            (os.POSIX_SPAWN_DUP2, feed[0], 0), (os.POSIX_SPAWN_DUP2, out[1], 1),
            (os.POSIX_SPAWN_DUP2, err[1], 2)],
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))  # as `subprocess` restores them
    except BaseException:
        for fd in (*out, *err, *feed):
            os.close(fd)
        raise
    for fd in (out[1], err[1], feed[0]):
        os.close(fd)
    return Running(args, pid, [out[0], err[0], feed[1]], (input or "").encode("utf-8"))


def run(root: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    code, out, err = spawn(root, *args, input=input).wait()
    if check and code != 0:
        raise GitError(f"git {' '.join(args)}: {err.strip() or code}")
    return out


class Head(NamedTuple):
    branch: str | None  # None when detached
    sha: str | None  # None before the first commit
    reflog: int | None = None  # bytes in this checkout's HEAD reflog now (where the next entry starts)


def head(root: Path) -> Head:
    """Branch, commit and HEAD's reflog position, in one git call (a second only before the first
    commit)."""
    out = run(root, "rev-parse", "HEAD", "--abbrev-ref", "HEAD", "--git-path", "logs/HEAD",
              check=False).splitlines()
    if len(out) == 3:
        return Head(None if out[1] == "HEAD" else out[1], out[0], _size(root / out[2]))
    branch = run(root, "symbolic-ref", "--short", "-q", "HEAD", check=False).strip()
    return Head(branch or None, None, 0)


_DETACHED = pattern(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\n?")  # HEAD's file naming a commit


def _branch_ref(text: str) -> str | None:
    """The name a HEAD file of `ref: refs/heads/<name>` and at most a newline holds, as
    `ref: refs/heads/([^\\s]+)\\n?` matched whole takes it (a name of no whitespace: what
    `str.split` splits at is what `\\s` matches), without `re`: with it come `enum` and its kin,
    a tenth of `knowledge candidates`' instructions at 20k. None for any other text."""
    if not text.startswith("ref: refs/heads/"):
        return None
    name = text[16:-1] if text.endswith("\n") else text[16:]
    return name if name.split() == [name] else None


def branch(root: Path) -> str | None:
    """The checked-out branch (None when detached), read from HEAD's file without a process: a
    reader that only orders by branch does not pay for git's start. Git's own answer (`head`)
    whenever the file is not plainly `ref: refs/heads/<name>` or a commit (a `.git` that is
    neither a folder nor a `gitdir:` file, the reftable backend's placeholder, a link)."""
    try:
        dot = root / ".git"
        if not dot.is_dir():
            pointer = read_regular(dot, 4096).decode("utf-8")
            dot = root / pointer.removeprefix("gitdir: ").strip() if pointer.startswith("gitdir: ") else dot
        text = read_regular(dot / "HEAD", 4096).decode("utf-8")
    except (OSError, ValueError):
        return head(root).branch
    named = _branch_ref(text)
    if named is not None and named != ".invalid":
        return named
    if _DETACHED().fullmatch(text):
        return None
    return head(root).branch


class Refs(NamedTuple):
    """HEAD and the trunk, as one `git for-each-ref` states them."""

    current: str | None  # the checked-out branch that has a commit; None when detached or unborn
    head: Head  # branch and commit of HEAD (`reflog` not asked: None)
    trunks: frozenset[str]  # the local names of the remotes' default branches
    known: bool = True  # False: git could not be run (not on PATH), so nothing above is known


UNKNOWN = Refs(None, Head(None, None), frozenset(), known=False)


def refs(root: Path) -> Refs:
    """The checked-out branch and its commit, and the local names of the remotes' default branches
    (`main` for `refs/remotes/origin/HEAD -> refs/remotes/origin/main`): one `git for-each-ref`.
    Only a HEAD that is on no branch with a commit (detached, or before the first commit) costs
    `head`'s process too."""
    out = run(root, "for-each-ref", "--format=%(HEAD) %(objectname) %(refname) %(symref)", "refs/heads/",
              "refs/remotes/*/HEAD", check=False)
    current, sha, names = None, None, set()
    for line in out.splitlines():
        mark, _, rest = line.partition(" ")
        parts = rest.split()
        if len(parts) < 2:
            continue
        if parts[1].startswith("refs/heads/"):
            if mark == "*":
                current, sha = parts[1][len("refs/heads/"):], parts[0]
        elif len(parts) == 3 and parts[1].startswith("refs/remotes/") and parts[1].endswith("/HEAD"):
            prefix = parts[1][: -len("HEAD")]
            if parts[2].startswith(prefix):
                names.add(parts[2][len(prefix):])
    where = Head(current, sha) if current is not None else head(root)
    return Refs(current, where, frozenset(names))


def on_path() -> bool:
    """Whether a `git` program is on PATH (`shutil.which`'s question, without its import): where
    it is not, an answer read from git's files must not stand in for the failure git's absence
    is reported as."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", "git")
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return True
    return False


_SHA = pattern(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # a commit's name, SHA-1 or SHA-256
_SHA1 = pattern(r"[0-9a-f]{40}")
_HEX = frozenset("0123456789abcdefABCDEF")


def _cited(name: str) -> bool:
    """Whether `name` is a commit's as a record or the ledger cites it, full or abbreviated (4 to
    64 hex digits): only such a name reaches git's command line (a cited `--output=FILE` would
    have git write FILE). Without a pattern: the readers that ask it import no `re`."""
    return 4 <= len(name) <= 64 and _HEX.issuperset(name)


def refs_from_files(root: Path) -> Refs | None:
    """`refs`' answer read from the files git keeps them in, without a process: HEAD (this
    checkout's, a linked worktree's own), the branch it names as a loose ref file or a line of
    `packed-refs` (the loose file wins, as in git), and the remotes' HEADs. None whenever
    anything is unusual (the reftable backend, a symbolic ref that names another symbolic ref, a
    file of another shape, one that cannot be read): then `refs` asks git."""
    files = _RefFiles.of(root)
    if files is None:
        return None
    try:
        text = read_regular(files.where / "HEAD", 4096).decode("utf-8").removesuffix("\n")
        name = _branch_ref(text + "\n")  # (a branch's text is never a commit's: no pattern compiled for it)
        if name is None and _SHA().fullmatch(text):
            return Refs(None, Head(None, text), files.trunks())
        if name is None or name == ".invalid":
            return None
        sha = files.commit(f"refs/heads/{name}")
        return Refs(name if sha else None, Head(name, sha), files.trunks())
    except (_Unusual, OSError, ValueError):
        return None


class _Unusual(Exception):
    """A ref git must be asked about: a symbolic ref, a file of another shape, one unreadable."""


class _RefFiles:
    """The refs of one repository as files: loose ref files over `packed-refs` (read once, when
    a ref is not loose)."""

    def __init__(self, where: Path, common: Path) -> None:
        self.where, self.common = where, common
        self._packed: dict[str, str] | None = None

    @classmethod
    def of(cls, root: Path) -> _RefFiles | None:
        where, common = git_dir(root), common_dir(root)
        if where is None or common is None or (common / "reftable").exists():
            return None
        return cls(where, common)

    def packed(self) -> dict[str, str]:
        """ref -> commit of `packed-refs` (empty when there is none)."""
        if self._packed is None:
            try:
                data = read_regular(self.common / "packed-refs", 1 << 26).decode("utf-8")
            except FileNotFoundError:
                data = ""
            except (OSError, ValueError) as exc:
                raise _Unusual from exc
            self._packed = {}
            for row in data.splitlines():
                sha, _, ref = row.partition(" ")
                if _SHA().fullmatch(sha) and ref:
                    self._packed[ref] = sha
        return self._packed

    def text(self, ref: str) -> str | None:
        """The loose file of `ref` (its newline dropped), None when there is none."""
        try:
            return read_regular(self.common / ref, 4096).decode("utf-8").removesuffix("\n")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except (OSError, ValueError) as exc:
            raise _Unusual from exc

    def commit(self, ref: str) -> str | None:
        """The commit `ref` names (its loose file's, else `packed-refs`'); None when neither has it."""
        text = self.text(ref)
        if text is None:
            return self.packed().get(ref)
        if not _SHA().fullmatch(text):
            raise _Unusual(ref)
        return text

    def trunks(self) -> frozenset[str]:
        """The local names of the remotes' default branches: each `refs/remotes/<r>/HEAD` that
        names a ref that is there (git's `for-each-ref` leaves a dangling one out)."""
        heads = remote_heads_in(self.common)
        if heads is None:
            raise _Unusual("refs/remotes")
        names = set()
        for remote, target in heads:
            prefix = f"refs/remotes/{remote}/"
            if target is not None and target.startswith(prefix) and target != prefix and self.commit(target):
                names.add(target[len(prefix):])
        return frozenset(names)


def refs_of(root: Path, state: Status) -> Refs | None:
    """`refs`' answer from a `status` and the remotes' HEAD files, without another process: what a
    start that asked git its status knows of the trunk. None when the refs are not kept as files
    (the reftable backend) or cannot be read: then `refs` asks git."""
    heads = remote_heads(root)
    if heads is None:
        return None
    names = {target[len(f"refs/remotes/{remote}/"):] for remote, target in heads
             if target is not None and target.startswith(f"refs/remotes/{remote}/")}
    current = state.head.branch if state.head.sha is not None else None
    return Refs(current, Head(state.head.branch, state.head.sha), frozenset(n for n in names if n))


def remote_heads(root: Path) -> list[tuple[str, str | None]] | None:
    """(remote, the ref its HEAD names, None when it names none) of each remote folder, read from
    the files, without a process. None when the refs are not kept as files (the reftable backend)
    or cannot be read."""
    common = common_dir(root)
    if common is None or (common / "reftable").exists():
        return None
    return remote_heads_in(common)


def remote_heads_in(common: Path) -> list[tuple[str, str | None]] | None:
    """`remote_heads` of the git folder `common` (where the refs are)."""
    try:
        listed = sorted(os.listdir(common / "refs" / "remotes"))
    except FileNotFoundError:
        return []
    except OSError:
        return None
    found: list[tuple[str, str | None]] = []
    for remote in listed:
        try:
            text = read_regular(common / "refs" / "remotes" / remote / "HEAD", 4096).decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            found.append((remote, None))
            continue
        except (OSError, UnicodeDecodeError):
            return None
        found.append((remote, text[len("ref: "):].strip() if text.startswith("ref: refs/remotes/") else None))
    return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def toplevel(path: Path) -> Path | None:
    out = run(path, "rev-parse", "--show-toplevel", check=False).strip()
    return Path(out) if out else None


def tracked(root: Path, *paths: str) -> list[str] | None:
    """The files git's index holds under `paths` (literal paths, no glob), in one git call; None
    when git cannot say."""
    return _tracked(spawn(root, "--literal-pathspecs", "ls-files", "-z", "--", *paths))


def _tracked(asked: Running) -> list[str] | None:
    code, out, _ = asked.wait_bytes()
    if code != 0:
        return None
    # decoded whole, then split: the same names (no UTF-8 sequence spans a NUL), one call not 40,000
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


class Listing:
    """The files git's index holds, from one `git ls-files` of the whole checkout asked on first use:
    the answer to every question a run has about what is tracked (doctor: the queue's tracking, the
    credential screen's files, the `file:` references; `knowledge check`: the last two), each of
    which took a git call of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[str] | None = None
        self._asked = False
        self._running: Running | None = None

    def start(self) -> None:
        """Ask git now, its answer read by the first `files` (doctor asks before its rules run, so
        git lists while they work); a git that cannot be started is asked again by `files`."""
        if not self._asked and self._running is None:
            try:
                self._running = spawn(self.root, "--literal-pathspecs", "ls-files", "-z", "--")
            except OSError:
                pass

    def end(self) -> None:
        """Stop a git asked ahead whose answer was never read."""
        if self._running is not None:
            self._running.end()

    def files(self) -> list[str] | None:
        """Every tracked path, repository-relative; None when git cannot say."""
        if not self._asked:
            self._asked = True
            asked, self._running = self._running, None
            self._files = _tracked(asked) if asked is not None else tracked(self.root)
        return self._files

    def under(self, *folders: str) -> list[str] | None:
        """The tracked paths under `folders` (repository-relative, no glob), as `tracked` of them
        says; None when git cannot say."""
        found = self.files()
        if found is None:
            return None
        prefixes = tuple(f.rstrip("/") + "/" for f in folders)
        return [p for p in found if p.startswith(prefixes) or p in folders]


# What a question whose answer is trusted for the files git does not name tells git, whatever the
# checkout's configuration says: compare every field of a file's stat (ctime trusted, the default
# checkStat) and tell names apart by case (with `core.ignorecase` an untracked file whose name a
# tracked one holds in another case is neither listed nor named).
EVERY_STAT = ("-c", "core.trustctime=true", "-c", "core.checkstat=default", "-c", "core.ignorecase=false")


def as_held(root: Path, *paths: str) -> Running:
    """`git ls-files` of `paths`, each entry tagged (`-v`), NUL-separated, started: every file git's
    index holds ("H ", or another tag: assume-unchanged in lower case, skip-worktree, unmerged),
    again each whose file differs from the index by its stat or, racily clean, its content ("C ":
    changed or gone), and every file the index does not hold ("? "). git looks at every file (no
    file system monitor) under `EVERY_STAT`."""
    return spawn(root, "-c", "core.fsmonitor=false", *EVERY_STAT,
                 "--literal-pathspecs", "ls-files", "-v", "-c", "-m", "-o", "-z", "--", *paths)


def changed_held(root: Path, *paths: str) -> Running:
    """`as_held`'s "C " (and, for a file flagged assume-unchanged that is gone, "c ") entries alone,
    started: `git ls-files -v -m` under the same trust switches, each file git's index holds
    stat'ed, no file the index does not hold listed. The other entries of `as_held` are the index's
    own (its tags) and the folders' (the untracked files): a caller that kept them while the index
    file and every folder kept their stamps asks git for these alone."""
    return spawn(root, "-c", "core.fsmonitor=false", *EVERY_STAT,
                 "--literal-pathspecs", "ls-files", "-v", "-m", "-z", "--", *paths)


def git_dir(root: Path) -> Path | None:
    """This checkout's git folder, found without running git: `.git`, or, when `.git` is a file (a
    linked worktree, a submodule), the folder its `gitdir:` names; None when neither is there."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = read_regular(dot, 4096).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir: "):
        return None
    gitdir = Path(text[len("gitdir: "):].strip())
    return gitdir if gitdir.is_absolute() else root / gitdir


def common_dir(root: Path) -> Path | None:
    """The folder the checkout's refs and objects are in: the git folder, or for a linked worktree
    the one its `commondir` file names. Without running git."""
    where = git_dir(root)
    if where is None:
        return None
    try:
        common = read_regular(where / "commondir", 4096).decode("utf-8").strip()
    except FileNotFoundError:
        return where
    except (OSError, UnicodeDecodeError):
        return None
    return Path(common) if Path(common).is_absolute() else where / common


def history_files(root: Path) -> list[Path] | None:
    """The files whose stat moves when the history git walks from an unmoved HEAD changes, read
    without running git: the shallow clone's cut (`shallow`, which a deepening fetch rewrites), the
    old grafts file (`info/grafts`) and, only in a repository that has replace refs (`git replace`:
    a `refs/replace/` folder, or `packed-refs` naming one, found by one search of its bytes), that
    folder and `packed-refs`. None when the git folder is not found."""
    common = common_dir(root)
    if common is None:
        return None
    found = [common / "shallow", common / "info" / "grafts"]
    replace, packed = common / "refs" / "replace", common / "packed-refs"
    if os.path.lexists(replace) or _holds(packed, b" refs/replace/"):
        found += [replace, packed]
    return found


def _holds(path: Path, needle: bytes) -> bool:
    """Whether the regular file at `path` holds `needle` (False when it is not there or empty)."""
    try:
        with open(path, "rb") as handle:
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return data.find(needle) >= 0
    except (OSError, ValueError):  # absent, or empty (mmap refuses a file of no bytes)
        return False


def index_file(root: Path) -> Path | None:
    """This checkout's index file, found without running git (`git_dir`'s `index`)."""
    where = git_dir(root)
    return where / "index" if where is not None else None


def flagged(root: Path, *paths: str) -> list[str] | None:
    """The entries git's index holds under `paths` whose files git's status does not compare with
    them: flagged assume-unchanged (`update-index --assume-unchanged`, `core.ignoreStat`: a tag in
    lower case), skip-worktree ("S") or tagged otherwise than "H " (`ls-files -v`). An edit of such
    a file is named by no status. None when git cannot say."""
    code, out, _ = spawn(root, "--literal-pathspecs", "ls-files", "-v", "-z", "--", *paths).wait_bytes()
    if code != 0:
        return None
    if out.count(b"\0") == out.startswith(b"H ") + out.count(b"\0H "):  # each entry "<tag> <path>\0"
        return []
    return [e[2:].decode("utf-8", "replace") for e in out.split(b"\0") if e and not e.startswith(b"H ")]


def trunk_ref_files(root: Path) -> list[Path] | None:
    """The files and folders whose stat changes when a remote's default branch (what `changed_paths`
    differs from) is set, removed or moved, read without running git: `packed-refs`, the remotes'
    folders, each `refs/remotes/<remote>/HEAD` and the ref it names (and that ref's folder). None
    when the refs are not kept as files (the reftable backend) or cannot be read."""
    common = common_dir(root)
    heads = remote_heads(root)
    if common is None or heads is None:
        return None
    remotes = common / "refs" / "remotes"
    found = [common / "packed-refs", common / "refs", remotes]
    for remote, target in heads:
        found += [remotes / remote, remotes / remote / "HEAD"]
        if target is not None:
            found += [(common / target).parent, common / target]
    return found


def tracked_under(root: Path, folder: str) -> list[str] | None:
    """The files git's index holds under `folder` (`.ai/local`), or `folder` itself when git holds
    it as one entry (a submodule's gitlink: a clone made with `--recurse-submodules` has another
    repository's files there). The index file is searched for the folder's path first (a version 2
    or 3 index writes each path whole): when it is not there, nothing is tracked under it and no
    git process runs, which is every start of every sound repository; otherwise (or for an index
    git compresses, version 4, or splits: a split index keeps most entries in a
    `sharedindex.<sha>` file beside it) one `git ls-files` says. A folder holding it that is a
    checkout of its own (`.ai` a submodule: a `.git` in it) is asked what it tracks there. None
    when git cannot say."""
    parts = folder.split("/")
    for n in range(1, len(parts)):
        holder = "/".join(parts[:n])
        if os.path.lexists(root / holder / ".git"):  # one lstat: a sound repository has none
            inner = tracked(root / holder, "/".join(parts[n:]))
            if inner is None or inner:
                return None if inner is None else [f"{holder}/{p}" for p in inner]
    index = index_file(root)
    if index is not None:
        try:
            with open(index, "rb") as handle:
                if handle.read(8)[4:] in (b"\0\0\0\2", b"\0\0\0\3"):
                    handle.seek(0)
                    with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                        if data.find(folder.encode("utf-8")) < 0 \
                                and not any(n.startswith("sharedindex.") for n in os.listdir(index.parent)):
                            return []
        except FileNotFoundError:
            return []  # nothing was ever added
        except (OSError, ValueError):
            pass  # ask git
    return tracked(root, folder)


def commits_since(root: Path, sha: str | None) -> int | None:
    """How many commits HEAD has that `sha` has not (all of HEAD's, when `sha` is None: the
    repository had no commit then), in one git call; None when git cannot say (no HEAD, or `sha`
    is not in this repository any more, or no full object name: `_SHA`)."""
    if sha and not _SHA().fullmatch(sha):
        return None
    out = run(root, "rev-list", "--count", f"{sha}..HEAD" if sha else "HEAD", "--", check=False).strip()
    return int(out) if out.isdigit() else None


BRANCH_COMMITS = 200  # how far back `changed_paths` reads a branch's own commits
# The one question a start asks git: HEAD's commit and branch, and every path the working tree or
# the index changed (untracked folders named with their `/`), without counting commits against
# an upstream, under `EVERY_STAT`: the prebuilt briefing takes a file git does not name as unchanged.
STATUS = (*EVERY_STAT, "status", "--porcelain=v2", "--branch", "--no-ahead-behind", "-z", "--untracked-files=normal")
# A trunk is a remote's default branch, `refs/remotes/<name>/HEAD` with a name of one folder: what
# for-each-ref's pattern matches (its `*` stops at `/`) and `own_key` lists. `--glob`'s `*` crosses
# `/`, so the log excludes the deeper ones (a remote named `team/alice`): else a fetch of that
# remote would change the answer under an unchanged key.
_TRUNKS = ("for-each-ref", "--format=%(refname)", "refs/remotes/*/HEAD")
_BRANCH_LOG = ("log", "--format=", "--name-only", "-z", f"-n{BRANCH_COMMITS}", "HEAD", "--not",
               "--exclude=refs/remotes/*/*/HEAD", "--glob=refs/remotes/*/HEAD")


class Status(NamedTuple):
    """What `STATUS` says: HEAD (`reflog` from the file, without a process) and the changed paths."""

    head: Head
    paths: frozenset[str]


def parse_status(root: Path, out: str) -> Status:
    """`STATUS`'s output (-z: no path is quoted). A rename or copy names its source too."""
    sha: str | None = None
    name: str | None = None
    found: set[str] = set()
    entries = out.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if entry.startswith("# branch.oid "):
            sha = entry[len("# branch.oid "):].strip()
            sha = None if sha == "(initial)" else sha
        elif entry.startswith("# branch.head "):
            name = entry[len("# branch.head "):]
            if name == "(detached)":  # a branch may be named so: HEAD's file tells
                name = branch(root)
        elif entry[:2] in ("1 ", "u "):
            found.add(entry.split(" ", 8 if entry[0] == "1" else 10)[-1])
        elif entry[:2] == "2 ":
            found.add(entry.split(" ", 9)[-1])
            if i < len(entries) and entries[i]:
                found.add(entries[i])
            i += 1
        elif entry[:2] == "? ":
            found.add(entry[2:])
    where = git_dir(root)
    reflog = _size(where / "logs" / "HEAD") if where is not None and sha is not None else 0
    return Status(Head(name, sha, reflog), frozenset(found))


def status(root: Path) -> Status:
    """HEAD and the changed paths, in one git process (`STATUS`); GitError when git cannot say."""
    return status_of(root, ask_status(root))


def ask_status(root: Path) -> Running:
    """`status`'s git process, started: the start hook asks it before importing its open path
    and reads the answer (`status_of`) when it needs it."""
    return spawn(root, "-c", "core.quotePath=false", *STATUS)


def status_of(root: Path, asked: Running) -> Status:
    code, out, err = asked.wait()
    if code != 0:
        raise GitError(f"git {' '.join(asked.args)}: {err.strip() or code}")
    return parse_status(root, out)


def worktree(root: Path) -> tuple[Status | None, frozenset[str]]:
    """`status` (None when git could not say) and the paths of HEAD's own commits (those no
    remote default branch holds, the newest BRANCH_COMMITS; none without a remote default branch),
    in one batch of three git processes."""
    said, remotes, log = run_many(root, STATUS, _TRUNKS, _BRANCH_LOG)
    return (parse_status(root, said[1]) if said[0] == 0 else None), _own(remotes, log)


def worktree_own(root: Path) -> frozenset[str]:
    """`worktree`'s second set alone (the caller has the status): one batch of two processes."""
    return _own(*run_many(root, _TRUNKS, _BRANCH_LOG))


def own_key(root: Path) -> list[Any] | None:
    """What `worktree_own`'s answer is a function of, read from git's files without a process:
    HEAD's commit and each remote's HEAD (the ref it names and that ref's commit, or the commit
    it holds). Equal keys, equal answers: a cache of the answer is kept under it. None when the
    files cannot say (`refs_from_files`' unusual cases, a remote HEAD of another shape)."""
    found, files = refs_from_files(root), _RefFiles.of(root)
    heads = remote_heads_in(files.common) if files is not None else None
    if found is None or files is None or heads is None:
        return None
    key: list[Any] = [found.head.sha, BRANCH_COMMITS]
    try:
        for remote, target in heads:
            if target is None:  # a HEAD that is no symbolic ref: the commit it holds, if any
                key.append([remote, None, files.commit(f"refs/remotes/{remote}/HEAD")])
            else:
                key.append([remote, target, files.commit(target)])
    except _Unusual:
        return None
    return key


def _own(remotes: tuple[int, str], log: tuple[int, str]) -> frozenset[str]:
    if remotes[0] == 0 and remotes[1].strip() and log[0] == 0:
        return frozenset(p.strip("\n") for p in log[1].split("\0") if p.strip("\n"))
    return frozenset()


def changed_paths(root: Path) -> frozenset[str]:
    """Paths this branch or the working tree changed (`worktree`'s two sets), in one batch of
    three git processes: the working tree's status, the remotes' default branches, and the files
    of HEAD's own commits. Without a remote default branch there is no trunk to differ from, and
    only the working tree counts. An untracked folder is named with its trailing `/`."""
    state, own = worktree(root)
    return (state.paths if state is not None else frozenset()) | own


def run_many(root: Path, *commands: tuple[str, ...]) -> list[tuple[int, str]]:
    """Several read-only git commands started together and awaited together: one batch, so a
    reader that needs two answers pays for one process's latency. Returns (code, stdout) each."""
    procs = [spawn(root, "-c", "core.quotePath=false", *args) for args in commands]
    return [proc.wait()[:2] for proc in procs]


# A reflog entry whose message says this checkout made the commit it moved HEAD to: `git commit`
# (also --amend, a merge's commit, the initial one), cherry-pick, revert, am, a rebase's picks
# and rewrites, a merge or pull that made a merge commit. A fast-forward, a checkout, a reset or a
# rebase's start brings commits made elsewhere and is none of these.
_MADE = (r"^(?:commit|cherry-pick|revert|am)\b|\((?:pick|reword|edit|squash|fixup)\):"
         r"|: Merge made by ")
_MADE_BY = pattern(_MADE)  # compiled on first use: most runs never read a reflog


class Made(NamedTuple):
    """What HEAD's reflog says this checkout did since a position: the commits it made."""

    shas: frozenset[str]
    problem: str | None = None  # why the reflog cannot tell (then `shas` is empty)


def made_since(root: Path, position: int, head_then: str | None) -> Made:
    """The commits this checkout made after `position` in its HEAD reflog (a `Head.reflog`), whose
    entry before it moved HEAD to `head_then`. The reflog is per checkout, so a commit made in
    another clone and pulled, merged or fast-forwarded in is never among them."""
    where = run(root, "rev-parse", "--git-path", "logs/HEAD", check=False).strip()
    try:
        with open(root / where, "rb") as handle:
            handle.seek(max(position - 4096, 0))
            data = handle.read()
    except OSError:
        data = b""
    start = min(position, 4096)
    if not data and position == 0:
        return Made(frozenset(), "HEAD has no reflog in this checkout (core.logAllRefUpdates off?)")
    before = data[:start]
    if len(data) < start or (position and not before.endswith(b"\n")) or \
            (head_then and before and before.rsplit(b"\n", 2)[-2].split(b" ", 2)[1:2] != [head_then.encode()]):
        return Made(frozenset(), "HEAD's reflog was rewritten since the open (expired or deleted)")
    shas = set()
    for entry in data[start:].decode("utf-8", "replace").splitlines():
        ids, _, message = entry.partition("\t")
        fields = ids.split(" ", 2)
        if len(fields) >= 2 and _MADE_BY().search(message):
            shas.add(fields[1])
    return Made(frozenset(shas))


class Touch(NamedTuple):
    """One commit and the paths it changed, each with its status letter (A, M, D ...)."""

    sha: str
    changes: tuple[tuple[str, str], ...]


def touching(root: Path, until: str, since: str | None, paths: tuple[str, ...]) -> list[Touch] | None:
    """Commits reachable from `until` and not from `since`, oldest first, that change `paths`;
    None when either revision is not in the repository. Read with -z: a path is never C-quoted."""
    rev = (until, "--not", since) if since else (until,)
    try:
        out = run(root, "log", "-z", "--reverse", "--no-renames", "--format=%x1e%H", "--name-status",
                  *rev, "--", *paths)
    except GitError:
        return None
    found = []
    for chunk in out.split("\x1e")[1:]:
        sha, _, rest = chunk.partition("\0")
        fields = rest.removeprefix("\n").split("\0")
        changes = tuple((fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2) if fields[i + 1])
        found.append(Touch(sha.strip(), changes))
    return found


def changed_since(root: Path, sha: str | None) -> list[str]:
    """Every path git says changed since commit `sha`: committed, staged or in the working tree,
    deleted ones included, and every untracked file not ignored (each file of a new folder named
    on its own). `sha` None (a repository with no commit at the open): every path. One batch.
    GitError when `sha` is no full object name (`_SHA`: a kept value that reads as an option,
    `--output=FILE`, never reaches git's command line) or not a commit here."""
    if sha and not _SHA().fullmatch(sha):
        raise GitError(f"git diff: {sha!r} is no commit's full name")
    tracked = ("diff", "--name-only", "--no-renames", "-z", sha, "--") if sha else ("ls-files", "-z")
    results = run_many(root, tracked, ("ls-files", "--others", "--exclude-standard", "-z"))
    if results[0][0] != 0:
        raise GitError(f"git {' '.join(tracked)}: exit {results[0][0]}")
    return sorted({path for _, out in results for path in out.split("\0") if path})


def changed_between(root: Path, old: str, new: str, folder: str) -> list[str] | None:
    """The paths under `folder` whose content differs between commits `old` and `new` (renames as
    a deletion and an addition), in one git call; None when git cannot say (a commit gone since,
    after a rebase and a gc, or not a commit). Each commit is taken only as a full object name
    (`_SHA`): a kept `old` that reads as an option (`--output=FILE`) never reaches git's command line."""
    if not (_SHA().fullmatch(old) and _SHA().fullmatch(new)):
        return None
    code, out, _ = spawn(root, "-c", "core.quotePath=false", "diff-tree", "-r", "--no-renames", "--name-only",
                         "-z", old, new, "--", folder).wait()
    return [p for p in out.split("\0") if p] if code == 0 else None


def subjects(root: Path, shas: list[str]) -> dict[str, str]:
    """Full sha -> subject of each commit `shas` names (full or abbreviated), in one git call; a
    sha naming no commit here is simply absent from the answer."""
    asked = [s for s in shas if _cited(s)]
    if not asked:
        return {}
    out = run(root, "log", "--no-walk=unsorted", "--ignore-missing", "--format=%H%x09%s", *asked,
              "--", check=False)
    found = {}
    for row in out.splitlines():
        sha, tab, subject = row.partition("\t")
        if tab:
            found[sha] = subject
    return found


def identity(root: Path) -> str | None:
    """Who acts here: the author name git would sign a commit with (`git var GIT_AUTHOR_IDENT`:
    the environment's, else `user.name`), or None when git knows none."""
    code, out, _ = spawn(root, "var", "GIT_AUTHOR_IDENT").wait()
    name = out.rsplit("<", 1)[0].strip() if code == 0 and "<" in out else ""
    return name or None


def stage(root: Path, added: list[str], removed: list[str]) -> None:
    """Stage exactly these paths, as `git mv` and `git add` would: `added` (files now in the tree)
    and `removed` (files gone from it, staged as deletions where git tracked them)."""
    if removed:
        run(root, "rm", "--cached", "--quiet", "--ignore-unmatch", "--", *removed)
    if added:
        run(root, "add", "--", *added)


def files_of(root: Path, shas: list[str]) -> dict[str, list[str]]:
    """The paths each commit of `shas` touched (its first parent's diff; renames as the new
    name), in one `git show`; a sha this clone does not have, or no commit's name (`_cited`), is
    left out."""
    shas = [s for s in shas if _cited(s)]
    if not shas:
        return {}
    out = run(root, "-c", "core.quotePath=false", "show", "--no-renames", "--name-only", "--format=%x00%H",
              "--ignore-missing", *shas, "--", check=False)
    found: dict[str, list[str]] = {}
    for chunk in out.split("\0")[1:]:
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        if lines:
            found[lines[0].strip()] = sorted(set(lines[1:]))
    return found


def config_get(root: Path, key: str) -> str | None:
    code, out, _ = spawn(root, "config", "--get", key).wait()
    return out.strip() if code == 0 else None


def config_set(root: Path, key: str, value: str) -> None:
    """Set `key` in this repository's own configuration (`.git/config`, shared by its worktrees)."""
    run(root, "config", "--local", key, value)

def logs(root: Path, ranges: list[tuple[str, str | None]]) -> list[list[tuple[str, str]] | None]:
    """For each (until, since): the commits reachable from `until` and not from `since`, oldest
    first, merges left out, as (sha, subject); None when a revision is not in the repository.
    One batch of processes for all of them (a derivation's tasks)."""
    if not ranges:
        return []
    commands = [("log", "--reverse", "--no-merges", "--format=%H%x09%s", until,
                 *(("--not", since) if since else ()), "--") for until, since in ranges]
    found: list[list[tuple[str, str]] | None] = []
    for code, out in run_many(root, *commands):
        if code != 0:
            found.append(None)
            continue
        rows = [row.partition("\t") for row in out.splitlines()]
        found.append([(sha, subject) for sha, tab, subject in rows if tab])
    return found


def tracked_scopes(root: Path, paths: list[str]) -> set[str]:
    """Those of `paths` that name a tracked file, or a folder holding one: one `git ls-files`."""
    if not paths:
        return set()
    out = run(root, "ls-files", "-z", "--", *paths, check=False)
    files = [f for f in out.split("\0") if f]
    return {p for p in paths if any(f == p or f.startswith(p.rstrip("/") + "/") or p == "." for f in files)}


def commit_words(root: Path, shas: list[str]) -> dict[str, tuple[str, str]]:
    """Full sha -> (subject, author time as UTC ISO 8601 with Z) of each commit of `shas` this
    clone has (a name that is no commit's, `_cited`, is left out), in one `git log --no-walk`."""
    shas = [s for s in shas if _cited(s)]
    if not shas:
        return {}
    out = run(root, "log", "--no-walk=unsorted", "--ignore-missing", "--format=%H%x09%at%x09%s", *shas, "--",
              check=False)
    found: dict[str, tuple[str, str]] = {}
    for row in out.splitlines():
        sha, _, rest = row.partition("\t")
        stamp, _, subject = rest.partition("\t")
        if stamp.isdigit():
            found[sha] = (subject, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(stamp))))
    return found

def commit(root: Path, sha: str) -> dict[str, Any] | None:
    """The commit `sha` names (full or abbreviated), for a person to read: its full sha, author,
    author date, message and the paths it changed, in one git call; None when it names none here."""
    if not _cited(sha):
        return None
    out = run(root, "log", "-1", "--no-walk", "--format=%H%x00%an%x00%aI%x00%B%x00", "--name-only", sha, "--",
              check=False)
    parts = out.split("\0")
    if len(parts) < 5:
        return None
    return {"sha": parts[0], "author": parts[1], "date": parts[2], "message": parts[3].strip("\n"),
            "paths": [p for p in parts[4].split("\n") if p]}

def present(root: Path, shas: list[str]) -> dict[str, int]:
    """Full sha -> committer time of each of `shas` (full 40-hex) this clone has as a commit, in
    one git call; one it does not have (rebased away, beyond a shallow clone's depth) is absent."""
    asked = sorted({s for s in shas if _SHA1().fullmatch(s)})
    if not asked:
        return {}
    out = run(root, "log", "--no-walk=unsorted", "--ignore-missing", "--format=%H %ct", *asked, "--",
              check=False)
    found = {}
    for row in out.splitlines():
        sha, _, when = row.partition(" ")
        if when.isdigit():
            found[sha] = int(when)
    return found


class Logged(NamedTuple):
    """One commit of a `history`: its parents, subject, and what it did to each path: (status
    letter, path, the new name for a rename or copy, else None)."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    changes: tuple[tuple[str, str, str | None], ...]


def history_argv(base: str, head: str = "HEAD") -> tuple[str, ...]:
    """The one walk of a currency read: every commit `head` has and `base` has not, parents first,
    each with its changed paths, renames followed (-M); merges show no diff of their own (each
    side's commits are listed themselves). Read with -z: a path is never C-quoted."""
    return ("log", "-z", "--topo-order", "--reverse", "-M", "--name-status",
            "--format=%x1e%H %P%x1f%s", head, "--not", base, "--")


def history(root: Path, base: str, head: str = "HEAD") -> list[Logged] | None:
    """`history_argv`'s commits, oldest first; None when git cannot walk it (a revision missing)."""
    try:
        out = run(root, *history_argv(base, head))
    except GitError:
        return None
    found = []
    for chunk in out.split("\x1e")[1:]:
        ids, _, rest = chunk.partition("\x1f")
        subject, _, names = rest.partition("\0")
        shas = ids.split()
        fields = names.removeprefix("\n").split("\0")
        changes: list[tuple[str, str, str | None]] = []
        i = 0
        while i + 1 < len(fields):
            status = fields[i]
            if status[:1] in ("R", "C") and i + 2 < len(fields):
                changes.append((status[:1], fields[i + 1], fields[i + 2]))
                i += 3
            else:
                if status:
                    changes.append((status[:1], fields[i + 1], None))
                i += 2
        found.append(Logged(shas[0], tuple(shas[1:]), subject, tuple(changes)))
    return found
