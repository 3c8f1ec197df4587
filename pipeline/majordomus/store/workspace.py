"""The one `Workspace`: a checkout's root, its paths, and (lazily) its policy and ledger."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from majordomus.base.errors import NOT_INITIALISED, FatalError
from majordomus.store.ledger import Ledger
from majordomus.store.policycache import load_cached

if TYPE_CHECKING:
    from majordomus.store.ledger import Ledger
    from majordomus.store.policy import Policy

@dataclass
class Workspace:
    root: Path
    _policy: Policy | None = field(default=None, repr=False)
    _ledger: Ledger | None = field(default=None, repr=False)

    # --- paths -------------------------------------------------------------------------------
    @property
    def ai(self) -> Path:
        return self.root / ".ai"

    @property
    def repo(self) -> Path:
        return self.ai / "repo"

    @property
    def local(self) -> Path:
        return self.ai / "local"

    @property
    def state(self) -> Path:
        return self.local / "state"

    @property
    def knowledge(self) -> Path:
        return self.repo / "knowledge"

    @property
    def candidates(self) -> Path:
        return self.knowledge / "candidates"

    @property
    def curated(self) -> Path:
        return self.knowledge / "curated"

    @property
    def sessions(self) -> Path:
        return self.repo / "sessions"

    @property
    def outbox(self) -> Path:
        return self.state / "outbox"

    @property
    def contexts(self) -> Path:
        return self.local / "session-contexts"

    @property
    def policy_path(self) -> Path:
        return self.repo / "policy.yaml"

    @property
    def dep_file(self) -> Path:
        return self.state / "doit.sqlite3"

    # --- shared state, built once ------------------------------------------------------------
    @property
    def policy(self) -> Policy:
        if self._policy is None:
            self._policy = load_cached(self.policy_path, self.state / "policy.cache.json")
        return self._policy

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger(self.local)
        return self._ledger

    def rel(self, path: Path) -> str:
        """`path` relative to the root, with forward slashes."""
        return path.relative_to(self.root).as_posix()

    @property
    def initialised(self) -> bool:
        return (self.repo).is_dir()


def find_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` holding `.ai/repo` (else a `.git`)."""
    here = (start or Path.cwd()).resolve()
    git_root = None
    for folder in (here, *here.parents):
        if (folder / ".ai" / "repo").is_dir():
            return folder
        if git_root is None and (folder / ".git").exists():
            git_root = folder
    return git_root


def open_workspace(start: Path | None = None, *, require_init: bool = True) -> Workspace:
    """The workspace of `start` (default: $MAJORDOMUS_ROOT or the current directory)."""
    if start is None and os.environ.get("MAJORDOMUS_ROOT"):
        start = Path(os.environ["MAJORDOMUS_ROOT"])
    root = find_root(start)
    if root is None:
        raise FatalError("not inside a git repository: run `git init`, then `majordomus init`", NOT_INITIALISED)
    ws = Workspace(root)
    if require_init and not ws.initialised:
        raise FatalError(f"{root} is not initialised for majordomus: run `majordomus init`", NOT_INITIALISED)
    return ws
