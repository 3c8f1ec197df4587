"""The start briefing, built ahead of time: composed where its inputs change (the close and the
compaction boundaries, the review acts, a start that had to compose), printed by the next start
after a check of its inputs that costs a few `stat`s and the start's one git process.

The briefing is a function of the ledger, the records, the policy, the local state (the active
task, the open questions, the outbox) and git (HEAD, the branch, the paths changed). The prebuilt
text, `.ai/local/state/briefing.prebuilt.json`, keeps beside it what it was built from:

- the `filecache.stamp` of each file and folder read (the policy, the task and questions files,
  the record folders, the outbox and each file in it, the remote default branches' refs); a stamp
  too recent to vouch for itself is kept as a digest of the folder's names or the file's bytes;
- git: HEAD's commit and branch, the working tree's changed paths under `.ai/repo/` (each of those
  files stamped: an edit of one that was already changed shows in its stamp, an edit of any
  other in git's status), and the changed paths a verified record relates to (they order them);
- the ledger: its device, inode, length and the bytes before its end. What was appended since is
  read: a line the briefing reads (a task, a question, a handover, a dispute, a review act, any
  event not known to be irrelevant) makes the check fail; a `session.opened` only when it opens
  an episode a candidate names;
- the episodes the candidates name: the episode at work places its own candidates on this branch.

Any difference, a missing or unreadable file, a text the ceiling cut, a `compact` start (its
working context comes first): the start composes as before. The sources stay the truth: deleting
the file changes no output, only time.
"""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.base import fsio, git
from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.context.blocks import CEILING, client_chars, heading, single
from majordomus.store import filecache
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from majordomus.context.briefing import Seen

FILE = "briefing.prebuilt.json"
OWN_CACHE = "own.cache.json"  # the branch's own paths (`own`), by the refs they were computed from
VERSION = 2
LIMIT = 1 << 24  # bytes the prebuilt file may hold
TAIL_LIMIT = 1 << 18  # ledger bytes appended since the build a check reads, at most
WALK_LIMIT = 5_000  # files of an untracked folder under .ai/repo stamped, at most
CEILING_ROOM = 200  # `blocks.fit`'s room for the closing note: a text within it was never cut
# Ledger events the briefing never reads (the opening of an episode no candidate names
# included): appended after the build, they leave it true. Any other event fails the check.
# `knowledge.derived` and `outbox.drained` say what was written and moved: the files themselves
# are the briefing's inputs (stamped), not these lines.
IRRELEVANT = frozenset({"session.opened", "session.resumed", "session.closed", "session.refused",
                        "session.reminded", "decision.recorded", "checkpoint.recorded",
                        "provider.event.failed", "knowledge.derived", "outbox.drained"})
OPENINGS = frozenset({"session.opened", "session.resumed"})


def path(ws: Workspace) -> Path:
    return ws.state / FILE


def _in_repo(p: str) -> bool:
    """A changed path git states that is `.ai/repo/` or under it (or a folder holding it)."""
    return p.startswith(".ai/repo/") or ".ai/repo/".startswith(p)


def relevant(paths: frozenset[str], targets: list[str] | set[str]) -> list[str]:
    """Those of `paths` a record relating to one of `targets` is ordered by (`known.relates`)."""
    wanted = {t.rstrip("/") for t in targets}
    if not wanted:
        return []
    named: dict[str, bool] = {}  # a folder: whether it or a folder holding it is a target

    def within(q: str) -> bool:  # `q` or the folders holding it (each leading run of components)
        if q in wanted:
            return True
        head, slash, _ = q.rpartition("/")
        if not slash:
            return False
        hit = named.get(head)
        if hit is None:
            hit = named[head] = within(head)
        return hit

    return sorted(p for p in paths
                  if within(p.rstrip("/")) or (p.endswith("/") and any(t.startswith(p) for t in wanted)))


def _sources(ws: Workspace, repo_paths: list[str]) -> list[Path] | None:
    """Every file and folder whose stamp the check compares, git's index file first (`_compared`);
    None when there are too many to
    stamp (an untracked `.ai/repo/` of thousands of files: its starts compose) or git's status does
    not name each file changed (a folder of the store that holds a `.git`: a submodule, named as
    one path whatever changed in it again)."""
    index = git.index_file(ws.root)
    if ws.holds_a_repository() or index is None:
        return None
    found = [index, ws.policy_path, ws.state / "task.json", ws.state / "questions.json", ws.curated,
             ws.candidates, ws.sessions, ws.outbox / "candidates", ws.outbox / "sessions"]
    for folder in (ws.outbox / "candidates", ws.outbox / "sessions"):
        try:
            found += [folder / name for name in sorted(os.listdir(folder))]
        except OSError:
            pass
    refs = git.trunk_ref_files(ws.root)
    if refs is None:
        return None
    found += refs
    for rel in repo_paths:
        where = ws.root / rel
        found.append(where)
        if rel.endswith("/"):  # an untracked folder: each file in it (not .ai/local's)
            for top, dirs, files in os.walk(where):
                dirs[:] = sorted(d for d in dirs if Path(top, d) != ws.local)
                found += [Path(top, d) for d in dirs] + [Path(top, f) for f in sorted(files)]
                if len(found) > WALK_LIMIT:
                    return None
    return found


def _named(ws: Workspace, path: Path) -> str:
    """A source as the check finds it again (`ws.root / name`): repository-relative, or absolute
    for one outside the worktree (a linked worktree's refs live in the main repository's git
    folder)."""
    try:
        return ws.rel(path)
    except ValueError:
        return str(path)


def _ledger_unchanged(ws: Workspace, kept: Any, episodes: str) -> bool:
    """Whether the ledger is the one built from, with nothing appended since that the briefing
    reads (IRRELEVANT)."""
    appended = ws.ledger.appended_since(kept, TAIL_LIMIT)
    if appended is None:
        return False
    if appended and not appended.endswith(b"\n"):
        return False  # a line being written: the next start reads it whole
    for raw in appended.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            return False
        event = line.get("event") if isinstance(line, dict) else None
        if event not in IRRELEVANT:
            return False
        if event in OPENINGS and f" {line.get('episode') or line.get('session')} " in episodes:
            return False
    return True


# --- build and reuse -----------------------------------------------------------------------

class Prepared:
    """What a build knows before it composes: git's answers and the stamps, taken before the
    sources are read, so a change while it composes shows at the next check."""

    __slots__ = ("root", "status", "own", "sources", "stamps", "ledger", "flagged")

    def __init__(self, root: Path, status: git.Status, own: frozenset[str] | None, sources: list[Path],
                 stamps: list[Any], ledger: list[Any], flagged: frozenset[str] = frozenset()) -> None:
        self.root, self.status, self.own = root, status, own
        self.sources, self.stamps, self.ledger = sources, stamps, ledger
        self.flagged = flagged  # files under .ai/repo/ git's status does not compare (`_flagged`)

    def checked(self) -> git.Status:
        """git's status as the composition's check of the records takes it: the flagged files
        named too (an edit of one in place leaves its folder's stamp, and no status names it)."""
        return self.status._replace(paths=self.status.paths | self.flagged) if self.flagged else self.status

    def changed(self) -> frozenset[str]:
        """The paths this branch and the working tree changed; the branch's commits are asked
        for on first use (only a record that relates to a path needs them)."""
        if self.own is None:
            self.own = own(self.root)
        return self.status.paths | self.own


def own(root: Path) -> frozenset[str]:
    """`git.worktree_own`, kept in OWN_CACHE under the refs it was computed from (`git.own_key`):
    a boundary after which neither HEAD nor a remote's default branch moved asks git nothing. The
    key is read before and after git answers; an answer across a move is not kept."""
    where = root / ".ai" / "local" / "state" / OWN_CACHE
    key = git.own_key(root)
    if key is not None:
        try:
            kept = json.loads(fsio.read_regular(where, LIMIT))
            if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("own"), list):
                return frozenset(str(p) for p in kept["own"])
        except (OSError, ValueError):
            pass
    found = git.worktree_own(root)
    if key is not None and git.own_key(root) == key:
        try:
            fsio.atomic_write(where, json.dumps({"key": key, "own": sorted(found)}, ensure_ascii=False,
                                                separators=(",", ":")) + "\n", root=root)
        except OSError:
            pass  # not kept: the next boundary asks git again
    return found


def prepare(ws: Workspace, status: git.Status | None = None,
            meanwhile: Callable[[Callable[[float], bool]], object] | None = None) -> Prepared | None:
    """Ask git for its status (unless the caller has it; the paths of HEAD's own commits are asked
    for later, only when a record relates to a path; `meanwhile` runs while git answers, given
    git's `running_after`) and stamp
    the sources. A source that changed too recently for its stat to vouch for it (a boundary's own
    writes) is stamped by a digest, taken again as a stat when the text is kept (`save`), once the
    composition has let it settle.
    None when this checkout's briefing cannot be prebuilt (git cannot be asked, the root is not
    the repository's top, the refs are not files, too much is untracked)."""
    if not (ws.root / ".git").exists():
        return None  # git's paths are relative to another folder than the root's
    if status is None:
        try:
            asked = git.ask_status(ws.root)
            if meanwhile is not None:
                meanwhile(asked.running_after)
            status = git.status_of(ws.root, asked)
        except (OSError, git.GitError):
            return None
    ledger = ws.ledger.tail_stamp()
    sources = _sources(ws, sorted(p for p in status.paths if _in_repo(p)))
    if ledger is None or sources is None:
        return None
    stamps = [filecache.vouch(p) for p in sources]
    flagged = _flagged(ws, sources[0], stamps[0])
    if flagged is None:
        return None
    return Prepared(ws.root, status, None, sources, stamps, ledger, flagged)


def _flagged(ws: Workspace, index: Path, kept: Any) -> frozenset[str] | None:
    """The files under `.ai/repo/` git's status does not compare with git's index (`index`, stamped
    `kept` before this asks): flagged assume-unchanged or skip-worktree, whose edits no status
    names and which leave their folder's stamp (`git.flagged`); a text composed while there are
    any is not kept (`save`). A flag set later rewrites the index, which the check compares. The
    last build's answer (none) while the index keeps the stamp it was kept with; else one git
    process. None when git cannot say."""
    if type(kept) is list and len(kept) == 5:
        try:
            last = json.loads(fsio.read_regular(path(ws), LIMIT))
            if last.get("v") == VERSION and last["sources"][0] == _named(ws, index) and last["stamps"][0] == kept:
                return frozenset()
        except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
            pass
    try:
        found = git.flagged(ws.root, ".ai/repo")
    except (OSError, git.GitError):
        return None
    return None if found is None else frozenset(found)


def _settled(path: Path, kept: Any) -> Any:
    """`kept` (a `vouch` taken before the composition read `path`), or, when it is a digest that
    still holds and the stat can vouch now, that stat: the next start compares one `lstat`, not a
    listing or the bytes. The stat is taken first: a change after it shows in it (it settled), a
    change before it shows in the digest."""
    if not (isinstance(kept, list) and kept[:1] == ["d"]):
        return kept
    now = filecache.stamp(path)
    return now if now and filecache.vouched(kept, path) else kept


def save(ws: Workspace, prepared: Prepared, text: str, seen: Seen, episode: str = "") -> bool:
    """Keep `text` (composed for `episode`, "" for none, after `prepare`) for the next start;
    False (and nothing kept) when it could not serve another episode's start."""
    if seen.foreign or seen.volatile or seen.cut or (episode and episode in seen.episodes) or prepared.flagged:
        _forget(ws)
        return False
    first, _, body = text.partition("\n")
    status = prepared.status
    changed = prepared.changed() if seen.targets else frozenset()  # asks for the branch's own paths
    record = {
        "v": VERSION, "body": body,
        "head": status.head.sha, "branch": status.head.branch,
        "repo": sorted(p for p in status.paths if _in_repo(p)),
        "targets": sorted(seen.targets),
        "own": relevant(prepared.own or frozenset(), seen.targets),
        "relevant": relevant(changed, seen.targets),
        "sources": [_named(ws, p) for p in prepared.sources],
        "stamps": [_settled(p, kept) for p, kept in zip(prepared.sources, prepared.stamps)],
        "ledger": prepared.ledger, "episodes": " " + " ".join(sorted(seen.episodes)) + " ",
    }
    try:
        fsio.atomic_write(path(ws), json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n",
                          root=ws.root)
    except OSError:
        return False  # a prebuilt text that cannot be kept costs the next start time, not its answer
    return True


def _forget(ws: Workspace) -> None:
    try:
        os.unlink(path(ws))
    except OSError:
        pass


def refresh(ws: Workspace) -> bool:
    """Compose the briefing for the next start and keep it (a boundary's last step). Whether one
    was kept; never raises for a failure of its own (the next start composes)."""
    try:
        prepared = prepare(ws, meanwhile=lambda running: _composer(ws, running))
        if prepared is None:
            _forget(ws)
            return False
        from majordomus.context import briefing

        seen = briefing.Seen()
        text = briefing.compose(ws, "", "startup", branch=prepared.status.head.branch,
                                changed=prepared.changed, seen=seen, status=prepared.checked())
        return save(ws, prepared, text, seen)
    except Exception:  # noqa: BLE001 - a boundary never fails for its prebuilt briefing
        _forget(ws)
        return False


def _composer(ws: Workspace, running: Callable[[float], bool] | None = None) -> None:
    """The composition's modules imported, and the knowledge index brought up to date with the
    record folders it reads, while git answers (a boundary's wall time: at 1M the scan of a
    candidates folder the derivation just wrote to costs about what git's status does).
    `running`: git's `running_after`, for a folder that settles while git works."""
    from majordomus.context import briefing

    briefing.warm(ws, running)


def reuse(ws: Workspace, episode: str, source: str, status: git.Status) -> str | None:
    """The prebuilt briefing for `episode`'s start, when every input is as it was built from
    (`status`: git's answer at this start); None when anything differs: the caller composes."""
    if source == "compact":
        return None
    try:
        record = json.loads(fsio.read_regular(path(ws), LIMIT))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("v") != VERSION:
        return None
    try:
        if record["head"] != status.head.sha or record["branch"] != status.head.branch \
                or record["repo"] != sorted(p for p in status.paths if _in_repo(p)) \
                or f" {episode} " in record["episodes"]:
            return None
        targets = record["targets"]
        if targets and sorted(set(relevant(status.paths, targets)) | set(record["own"])) != record["relevant"]:
            return None
        sources, stamps = record["sources"], record["stamps"]
        root = os.fspath(ws.root)  # joined as text: no path object for each of the sources
        if len(sources) != len(stamps) or not filecache.all_vouched(stamps, [os.path.join(root, rel)
                                                                          for rel in sources]):
            return None
        if not _ledger_unchanged(ws, record["ledger"], record["episodes"]) or ws.foreign_local():
            return None
        text = f"# {single(heading(episode, source))}\n" + record["body"]
    except (KeyError, TypeError, AttributeError):
        return None  # not a file this module wrote
    # within the room `fit` leaves, nothing was cut for this heading either, and the client's
    # count leaves `capped` nothing to cut: the text a fresh composition would give
    return text if len(text) <= CEILING - CEILING_ROOM and client_chars(text) <= CEILING else None
