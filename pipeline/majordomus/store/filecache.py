"""What a reader read of a file, kept by the file's stat: a cache derived from the files.

One JSON file under `.ai/local/state/` per reader: per folder (repository-relative), per file
name, [inode, size, mtime_ns, ctime_ns, what was read] and, for a reader that keeps it, the
digest of the bytes read. A file whose stat differs is read again, and so is one that changed just
before it was read (two seconds where the file system keeps whole seconds, 50 ms where it keeps
nanoseconds: a second change within one tick of its clock could leave every one of those four
alike), so the cache never answers for a file as it no longer is; a reader that keeps digests
then parses it again only when its bytes differ. A cache that cannot be read or written costs
time, never an answer.

Each cache names the folder it was written in (`home`): a repository that commits files under
`.ai/local/state/` has that folder made by this checkout's git, at an inode no commit can name,
so a cache it carries (answers kept by the digest of bytes it chose) is never believed.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from stat import S_IFMT

from majordomus.base.fsio import atomic_write, read_regular
from majordomus.base.lean import TYPE_CHECKING, json

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# A file changed this recently may change again within one tick of the file system's clock and
# keep all four stat fields: on a file system that keeps whole seconds (or two, FAT), RACY_NS;
# on one that keeps sub-second times (a change time with nanoseconds), FINE_NS, well above its
# clock's tick (a kernel jiffy, 10 ms at most).
RACY_NS = 2_000_000_000
FINE_NS = 50_000_000
LIMIT = 1 << 28  # bytes a cache file may hold


class FileCache:
    """One reader's cache, loaded once, written when changed (`save`)."""

    def __init__(self, path: Path, version: int, root: Path) -> None:
        self.path = path
        self.root = root  # the repository: the cache is written only to a real path inside it
        self.version = version
        self.folders: dict[str, dict[str, list[Any]]] = {}
        self.changed = False
        self.added = 0  # entries kept since the last save (`save`'s `unless_fewer`)
        self.forgot = False  # an entry dropped since the last save: written whatever `unless_fewer`
        self.now = time.time_ns()
        self.home = home(path.parent)
        try:
            data = json.loads(read_regular(path, LIMIT))
            if isinstance(data, dict) and data.get("v") == version and isinstance(data.get("folders"), dict) \
                    and self.home is not None and data.get("home") == self.home:
                self.folders = data["folders"]
        except (OSError, ValueError):
            pass

    def get(self, folder: str, name: str, st: os.stat_result) -> tuple[bool, Any]:
        """(hit, value) of the file `name` in `folder` whose stat is `st`."""
        return answer(self.folders.get(folder, {}).get(name), st)

    def get_content(self, folder: str, name: str, digest: str) -> tuple[bool, Any]:
        """(hit, value) of the file `name` in `folder` whose bytes have `digest` (`content_digest`):
        what was read of those very bytes, whatever the stat says. A file changed in the last
        two seconds is never answered by its stat, but it is by its content once it was read."""
        entry = self.folders.get(folder, {}).get(name)
        if isinstance(entry, list) and len(entry) == 6 and entry[5] == digest:
            return True, entry[4]
        return False, None

    def put(self, folder: str, name: str, st: os.stat_result, value: Any, digest: str | None = None) -> None:
        """Keep `value` for the file: by its stat, and by its content when `digest` is given. A file
        that changed in the last two seconds may change again unseen: kept by its content only."""
        entries = self.folders.setdefault(folder, {})
        racy = not settled(st, self.now)
        if racy and digest is None:
            if entries.pop(name, None) is not None:
                self.changed = self.forgot = True
            return
        stat_key = [0, -1, 0, 0] if racy else [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        entries[name] = [*stat_key, value] + ([digest] if digest is not None else [])
        self.changed = True
        self.added += 1

    def keep_only(self, folder: str, names: set[str]) -> None:
        """Forget the files of `folder` that are no longer there."""
        entries = self.folders.get(folder, {})
        gone = [n for n in entries if n not in names]
        for name in gone:
            del entries[name]
        self.changed = self.changed or bool(gone)
        self.forgot = self.forgot or bool(gone)

    def save(self, unless_fewer: int = 0) -> None:
        """Write the cache when it changed. `unless_fewer`: not when all that changed is fewer
        than that many entries kept (new, or for a file that changed): a reader then reads those
        few files again, which costs less than writing a big cache (a close adds one session
        record to the queue's 8,000 at 1M); an entry dropped is always written, since a file
        that changed within its clock's tick may keep the stat an old entry holds."""
        if not self.changed or (not self.forgot and self.added < unless_fewer):
            return
        try:
            atomic_write(self.path, json.dumps({"v": self.version, "home": self.home or home(self.path.parent),
                                                "folders": self.folders},
                                               separators=(",", ":"), ensure_ascii=False) + "\n",
                         root=self.root)
        except (OSError, UnicodeError):  # UnicodeError: a file name that is not UTF-8 (a lone surrogate)
            pass
        self.changed = self.forgot = False
        self.added = 0


def home(folder: Path | str) -> list[int] | None:
    """What a cache keeps of the folder it is written in (`.ai/local/state/`), and compares when it
    is read: [device, inode], None when nothing is there. Only this checkout's own writes name it:
    a folder deleted and made again (or a copy of the checkout) forgets its caches, which costs
    time, never an answer."""
    st = lstat(folder)
    return None if st is None else [st.st_dev, st.st_ino]


def content_digest(data: bytes) -> str:
    """The key a file's bytes are kept under (`get_content`): BLAKE2b, 128 bits."""
    try:  # hashlib's own BLAKE2b, without hashlib, which loads OpenSSL (~4 ms of every doctor)
        from _blake2 import blake2b
    except ImportError:  # an interpreter built without it: hashlib says what it has
        from hashlib import blake2b
    return blake2b(data, digest_size=16).hexdigest()


def settled(st: os.stat_result, now_ns: int | None = None) -> bool:
    """Whether `st` may vouch for what it describes: it did not change within one tick of the file
    system's clock (see RACY_NS), so a change after it would show in the stat."""
    window = min(RACY_NS, FINE_NS) if st.st_ctime_ns % 1_000_000_000 else RACY_NS
    return (time.time_ns() if now_ns is None else now_ns) - st.st_ctime_ns >= window


def settles_in(path: Path | str) -> float | None:
    """Seconds until `stamp(path)` can vouch for it (0: it can now), counted on the sub-second
    clock's window (FINE_NS); None when nothing is there, or on a clock of whole seconds (its
    window is RACY_NS: no caller waits that long)."""
    st = lstat(path)
    if st is None or not st.st_ctime_ns % 1_000_000_000:
        return None if st is None or not settled(st) else 0.0
    return max(0, min(RACY_NS, FINE_NS) - (time.time_ns() - st.st_ctime_ns)) / 1e9


def stamp(path: Path | str) -> list[int] | None:
    """What a derived file (an index, a prebuilt briefing) keeps of one of its sources, a file or a
    folder, to tell in one `lstat` whether it changed since: [device, inode, size, mtime_ns,
    ctime_ns], None when nothing is there, [] when it changed too recently to vouch for itself. A
    folder's stamp changes when an entry is added, removed or renamed in it, which every writer of
    ours (temp file + rename) and git's checkout do; an editor that rewrites a file in place does
    not, so a reader that must see those stats the file itself."""
    st = lstat(path)
    if st is None:
        return None
    if not settled(st):
        return []
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def unchanged(kept: object, path: Path | str) -> bool:
    """Whether `path` is as the stamp `kept` (from `stamp`) saw it. A stamp taken too soon after a
    change (`[]`) vouches for nothing, then or now; a source absent both times is unchanged."""
    if kept == []:
        return False
    now = stamp(path)
    return now != [] and now == kept


def vouch(path: Path | str) -> Any:
    """What vouches for `path` as it is now: its `stamp`, or, when it changed too recently for
    its stat to vouch for it, ["d", a digest of a folder's names or a file's bytes]."""
    kept = stamp(path)
    return ["d", _content(path)] if kept == [] else kept


def identity(path: Path | str) -> list[Any] | None:
    """What tells a folder itself, not its entries, in one `lstat`: ["i", device, inode, file
    type], None when nothing is there. A folder replaced (by another, a link, a file) differs; one
    whose entries changed does not (a reader of some of its entries stamps those)."""
    st = lstat(path)
    return None if st is None else ["i", st.st_dev, st.st_ino, S_IFMT(st.st_mode)]


def vouched(kept: Any, path: Path | str) -> bool:
    """Whether `path` is as `kept` (from `vouch`, or `identity`) saw it."""
    if isinstance(kept, list) and kept[:1] == ["d"]:
        return bool(kept[1] != "?" and _content(path) == kept[1])
    if isinstance(kept, list) and kept[:1] == ["i"]:
        return identity(path) == kept
    return unchanged(kept, path)


def answer(entry: Any, st: os.stat_result) -> tuple[bool, Any]:
    """(hit, value) of a kept entry (`FileCache.folders[folder][name]`) for the file whose stat is
    `st`: `get` for a reader that looks a folder's entries up itself, a call a file fewer."""
    if isinstance(entry, list) and len(entry) >= 5 and entry[0] == st.st_ino and entry[1] == st.st_size \
            and entry[2] == st.st_mtime_ns and entry[3] == st.st_ctime_ns:
        return True, entry[4]
    return False, None


def all_vouched(kept: list[Any], paths: Iterable[str]) -> bool:
    """Whether each of `paths` is as its `kept` (from `vouch`, or `identity`) saw it: `vouched`
    for each, a stamp compared without building the stamp again (a start checks its briefing's
    hundreds of sources; the clock is read once, before the first `lstat`)."""
    now_ns = time.time_ns()
    for stamped, path in zip(kept, paths):
        if type(stamped) is list and len(stamped) == 5 and type(stamped[0]) is int:
            try:
                st = os.lstat(path)
            except OSError:
                return False  # there was something there
            if st.st_mtime_ns != stamped[3] or st.st_ctime_ns != stamped[4] or st.st_size != stamped[2] \
                    or st.st_ino != stamped[1] or st.st_dev != stamped[0] or not settled(st, now_ns):
                return False
        elif not vouched(stamped, path):
            return False
    return True


def _content(where: Path | str) -> str | None:
    """A digest of a folder's names or a file's bytes (None when nothing is there, "?" when it
    cannot be read: a later read that succeeds differs)."""
    try:
        if os.path.isdir(where) and not os.path.islink(where):
            data = "\0".join(sorted(os.listdir(where))).encode("utf-8", "surrogateescape")
        else:
            data = read_regular(Path(where), LIMIT)
    except FileNotFoundError:
        return None
    except OSError:
        return "?"
    return content_digest(data)


def lstat(path: Path | str) -> os.stat_result | None:
    """The stat of `path` itself (a link is not followed), or None when there is nothing there."""
    try:
        return os.lstat(path)
    except OSError:
        return None

