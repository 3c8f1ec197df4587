"""The one `Workspace`: a checkout's root, its paths, and (lazily) its policy and ledger."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import NOT_INITIALISED, FatalError

if TYPE_CHECKING:
    from pipeline.ledger import Ledger
    from pipeline.policy import Policy

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_id(value: str, what: str = "id") -> str:
    """An id that may become a path component: refused unless it matches the id pattern."""
    from pipeline.errors import refused

    if not isinstance(value, str) or not ID_PATTERN.match(value) or ".." in value:
        shown = repr(value)[:80]
        raise refused(f"{what} {shown} refused: an {what} is letters, digits, '.', '_' or '-', "
                      "starts with a letter or digit and holds no '..'")
    return value


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
            from pipeline.policycache import load_cached

            self._policy = load_cached(self.policy_path, self.state / "policy.cache.json")
        return self._policy

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            from pipeline.ledger import Ledger

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
