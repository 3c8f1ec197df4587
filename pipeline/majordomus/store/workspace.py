"""The one `Workspace`: a checkout's root, its paths, (lazily) its policy and ledger, and how long
its locks may be waited for.

Every lock is waited for a bounded time: a process stopped while holding one (a `knowledge
derive` suspended with Ctrl-Z) must not hang every hook behind it. A command waits up to
`COMMAND_WAIT_S` for each lock; a hook has one deadline for all its waits, `HOOK_WAIT_S` after
it started (`MAJORDOMUS_LOCK_WAIT=SECONDS` sets either). Past it, `Busy` is raised: the hook
records `provider.event.failed` and exits 0, and a derivation it could not run is left to the
next boundary (`session/pending.py`).
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from majordomus.base import git
from majordomus.base.errors import REFUSED, FatalError
from majordomus.base.fsio import locked, open_folder
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.output import line, say
from majordomus.store.ledger import Ledger
from majordomus.store.policycache import load_cached
from majordomus.store.root import checkout
from majordomus.store.root import (
    find_root as find_root,  # where it was, for its importers
)

if TYPE_CHECKING:
    from majordomus.store.ledger import Ledger
    from majordomus.store.policy import Policy

COMMAND_WAIT_S = 60.0  # a command's wait for any one lock
HOOK_WAIT_S = 20.0  # a hook's wait for all its locks together (Claude Code gives a hook 60 s)


def wait_bound(default: float) -> float:
    """`MAJORDOMUS_LOCK_WAIT` when it is a number of seconds (0 to a day), else `default` (a nan
    or an infinity is not within those bounds either)."""
    try:
        value = float(os.environ.get("MAJORDOMUS_LOCK_WAIT", ""))
    except ValueError:
        return default
    return value if 0 <= value <= 86_400 else default


class Workspace:
    """The repository a command works in: its paths, its policy and ledger (each read once), the
    lock waits' deadline. Built once per command and handed down."""

    __slots__ = ("root", "_policy", "_ledger", "_refs", "_git_error", "deadline", "ai", "repo", "local", "state",
                 "knowledge", "candidates", "curated", "sessions", "outbox", "contexts", "policy_path", "dep_file",
                 "warn", "_under")

    def __init__(self, root: Path, deadline: float | None = None) -> None:
        self.root = root
        self._under = os.fspath(root).rstrip("/") + "/"  # what a path under the root starts with, as text (`rel`)
        # the store's paths, joined once (a derivation of 500 records asked for them 10,000 times)
        self.ai = ai = root / ".ai"
        self.repo = repo = ai / "repo"
        self.local = local = ai / "local"
        self.state = state = local / "state"
        self.knowledge = knowledge = repo / "knowledge"
        self.candidates = knowledge / "candidates"
        self.curated = knowledge / "curated"
        self.sessions = repo / "sessions"
        self.outbox = state / "outbox"
        self.contexts = local / "session-contexts"
        self.policy_path = repo / "policy.yaml"
        self.dep_file = state / "doit.sqlite3"
        self._policy: Policy | None = None
        self._ledger: Ledger | None = None
        self._refs: git.Refs | None = None
        self._git_error: str | None = None  # why git could not be run, once it could not
        self.deadline = deadline  # a hook's: every wait ends by it
        self.warn = False  # a command's: say on stderr that the policy has problems, when it is read

    def __repr__(self) -> str:
        return f"Workspace({self.root!r})"

    def holds_a_repository(self) -> bool:
        """Whether a folder of the store (`.ai`, `.ai/repo`, `knowledge/`, a record folder) holds a
        `.git`: a submodule, or a `git init` there. git names such a folder as one entry (one `H` in
        its index, one path in its status) whatever changes in it again, so nothing vouched for by
        git's word is kept (doctor's judgement, the prebuilt briefing). Six `lstat`s."""
        return any(os.path.lexists(os.path.join(folder, ".git")) for folder in (
            self.ai, self.repo, self.knowledge, self.candidates, self.curated, self.sessions))

    def foreign_local(self) -> str | None:
        """Why `.ai/local/` is not this checkout's own, or None: git tracks files under it (a
        careless `git add -A` upstream, a hostile repository), so its ledger, open task and
        questions are another checkout's, and no reader presents them as this one's. The one line
        says so and the fix. Read off the index file, so a sound repository pays no git process."""
        tracked = git.tracked_under(self.root, ".ai/local")
        if not tracked:
            return None
        return (f".ai/local/ is tracked by git ({len(tracked)} file(s), e.g. {line(tracked[0])}): it is another "
                "checkout's local state (ledger, open task, questions), not read as this one's: run "
                "`git rm -r --cached .ai/local`, add `.ai/local/` to .gitignore and commit")

    def own_local(self) -> Workspace:
        """This workspace, unless its `.ai/local/` is tracked by git or is not a real folder (a
        link, a file): then refused (exit 4), for a reader that would print nothing but that local
        state (the ledger's history, the open questions, an episode's working context)."""
        foreign = self.foreign_local()
        if foreign:
            raise FatalError(foreign, REFUSED)
        try:
            os.close(open_folder(self.root, self.local, create=False))  # refuses a link, a file
        except FileNotFoundError:
            pass  # no local state yet: each reader says what is missing
        return self

    # --- locks, each waited for a bounded time -------------------------------------------------
    def wait_s(self) -> float:
        """How long the next lock may be waited for: what is left before the deadline (a hook),
        else a command's bound."""
        if self.deadline is None:
            return wait_bound(COMMAND_WAIT_S)
        return max(self.deadline - time.monotonic(), 0.0)

    def lock(self, path: Path, remove: bool = False) -> AbstractContextManager[None]:
        """Hold the lock `path` for the block, waiting `wait_s()` at most (`Busy` past it)."""
        return locked(path, self.wait_s(), remove, root=self.root)

    @contextmanager
    def waiting_at_most(self, seconds: float) -> Iterator[None]:
        """Within the block, no lock is waited for longer than `seconds` (work a boundary may
        leave for the next one)."""
        saved = self.deadline
        soon = time.monotonic() + seconds
        self.deadline = soon if saved is None else min(saved, soon)
        try:
            yield
        finally:
            self.deadline = saved

    # --- shared state, built once ------------------------------------------------------------
    @property
    def policy(self) -> Policy:
        if self._policy is None:
            self._policy = load_cached(self.policy_path, self.state / "policy.cache.json", self.root)
            broken = self._policy.summary(self.rel(self.policy_path)) if self.warn else None
            if broken:  # the command goes on, on defaults; the person running it sees why
                say(f"majordomus: warning: {broken}")
        return self._policy

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger(self.local, self.wait_s, self.root)
        return self._ledger

    def refs(self) -> git.Refs:
        """HEAD and the trunk as git states them, asked once per Workspace (one command, one
        request): the close, the derivation and the drain all route by them. Read from git's
        files (`git.refs_from_files`) where git is there to ask otherwise (without it, the close
        says git could not be run, as before), else one git process."""
        if self._refs is None:
            found = git.refs_from_files(self.root) if git.on_path() else None
            self._refs = found if found is not None else git.refs(self.root)
        return self._refs

    def know_refs(self, refs: git.Refs) -> None:
        """What the caller learnt of HEAD and the trunk from a git answer of its own (the start's
        status): `refs` asks no second time."""
        self._refs = refs

    def refs_or_unknown(self) -> tuple[git.Refs, str | None]:
        """`refs`, or when git cannot be run (not on PATH, a broken repository) `git.UNKNOWN` and
        why: a close goes on without a branch or head, and routes what it writes to the outbox."""
        try:
            return self.refs(), self._git_error
        except (OSError, git.GitError) as exc:
            self._refs = git.UNKNOWN
            why = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._git_error = f"git could not be run ({why.splitlines()[0][:200]})"
            return self._refs, self._git_error

    def rel(self, path: Path) -> str:
        """`path` relative to the root, with forward slashes. A path under the root (as joined
        from it: its text starts with the root's and a slash) is cut as text; `relative_to`
        compares parts (~5 µs a call, and the end hook names the prebuilt briefing's hundreds of
        untracked sources); it answers any other path, or raises ValueError."""
        text, under = os.fspath(path), self._under
        if os.sep == "/" and len(text) > len(under) and text.startswith(under):
            return text[len(under):]
        return path.relative_to(self.root).as_posix()

    @property
    def initialised(self) -> bool:
        return (self.repo).is_dir()


def open_workspace(start: Path | None = None, *, require_init: bool = True) -> Workspace:
    """The workspace of `start` (default: $MAJORDOMUS_ROOT or the current directory)."""
    ws = Workspace(checkout(start, require_init=require_init))
    ws.warn = True
    return ws
