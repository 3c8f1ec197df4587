"""The one writer: atomic writes, locked appends and lock files, confined to real paths inside a
repository, and the sweep of their leftovers; and the one bounded reader of regular files.

Every write goes through a `.tmp.`-prefixed name in the target's own folder and a rename, so a
reader sees the old bytes or the new ones, never half of either, whenever a writer is killed.
`.tmp.*` is ignored by git. There is no fsync per file: it cost 3 ms a record on the end hook's
budget, and the rename alone is what keeps a killed process from leaving half a record.

A repository may carry symbolic links where our folders and files go (`.ai/local` linked to a
user's home, `curated/` to another checkout). A writer therefore walks from the repository's root
one folder at a time with `O_NOFOLLOW`, holding each folder open and working relative to it, and
refuses (exit 4, one line) a link, a file where a folder goes, or a target that is a link or not a
regular file. A reader likewise never goes through a link: the file is opened with `O_NOFOLLOW`
and every folder above it inside the repository must be real (`confined`). Every byte is checked
written: a short write on a full disk is an `OSError`, never
success, and a failed write leaves no half file behind.
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from majordomus.base.errors import Busy, FatalError, refused

TMP_PREFIX = ".tmp."
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# A text file of ours a reader accepts: records, policies and rules are kilobytes.
READ_LIMIT = 8 << 20


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _not_real(root: Path, path: Path, what: str) -> Exception:
    return refused(f"{_shown(root, path)} is {what}: majordomus writes only to real folders and "
                   "files inside the repository; replace it with a real one (or remove it)")


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    return "not a regular file"


def open_folder(root: Path, folder: Path, create: bool = True) -> int:
    """A descriptor of `folder`, opened from `root` one component at a time without following a
    symbolic link (made when missing and `create`). Refused unless `folder` is `root` or under it."""
    top, where = os.fspath(root).rstrip(os.sep) or os.sep, os.fspath(folder)
    if where == top:
        parts: list[str] = []
    elif where.startswith(top.rstrip(os.sep) + os.sep):  # plain strings: this runs for every write
        parts = where[len(top.rstrip(os.sep)) + 1:].split(os.sep)
    else:
        raise refused(f"{folder} is outside the repository {root}: nothing written")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for n, part in enumerate(parts):
            if part in ("", ".", ".."):
                raise refused(f"{_shown(root, root.joinpath(*parts[:n + 1]))}: a path with '..' is never written")
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass  # made by a concurrent writer, or a dangling link: the open below tells
                child = _open_child(root, root.joinpath(*parts[:n + 1]), part, fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                child = _open_child(root, root.joinpath(*parts[:n + 1]), part, fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child(root: Path, here: Path, part: str, fd: int) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
        if stat.S_ISREG(mode):
            shown = _shown(root, here)
            raise refused(f"{shown} is a file where a folder belongs: move it aside "
                          f"(`mv {shown} {shown}.bak`)") from None
        raise _not_real(root, here, _kind(mode)) from None


def _target_ok(root: Path, path: Path, dfd: int) -> bool:
    """True when `path` exists as a regular file, False when it is missing; refused otherwise."""
    try:
        mode = os.stat(path.name, dir_fd=dfd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode):
        raise _not_real(root, path, _kind(mode))
    return True


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd`; a write that makes no progress is an error, not success."""
    view = memoryview(data)
    while view:
        done = os.write(fd, view)
        if done <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[done:]


def atomic_write(path: Path, data: bytes | str | Iterable[bytes], *, root: Path,
                 mode: int | None = None) -> None:
    """Write `data` (or each of its pieces, never all held at once) to `path`, a real file inside
    `root`, through a temporary file in the same folder and a rename (`mode` exactly, when
    given). Nothing is left behind when the write fails (a full disk)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    dfd = open_folder(root, path.parent)
    try:
        _target_ok(root, path, dfd)
        tmp = f"{TMP_PREFIX}{path.name}.{os.getpid()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(tmp, flags, 0o644, dir_fd=dfd)
        except FileExistsError:  # our own pid's leftover, or something placed there: never followed
            os.unlink(tmp, dir_fd=dfd)
            fd = os.open(tmp, flags, 0o644, dir_fd=dfd)
        _fill_and_rename(fd, dfd, tmp, path.name, (data,) if isinstance(data, bytes) else data, mode=mode)
    finally:
        os.close(dfd)


def _fill_and_rename(fd: int, dfd: int, tmp: str, name: str, pieces: Iterable[bytes], *,
                     mode: int | None = None) -> None:
    """Write `pieces` to `fd` (`tmp`, made exclusively in the folder `dfd`), close it and rename it
    to `name`: how every file of ours is replaced. `tmp` is removed when any step fails."""
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            for piece in pieces:
                write_all(fd, piece)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise


def append_line(path: Path, line: bytes, *, root: Path) -> None:
    """Append `line` (ending in a newline) to `path`, a real file inside `root`, whole or not at all.

    The caller holds the lock that serialises appenders. A file whose last line lacks its newline
    (a torn write, a hand edit) gets one first, so the new line never joins it; a write that fails
    part-way (a full disk) is cut back off, so no half line of ours is ever kept."""
    dfd = open_folder(root, path.parent)
    try:
        try:
            fd = os.open(path.name, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_NONBLOCK | os.O_CLOEXEC, 0o644, dir_fd=dfd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO):
                raise
            _target_ok(root, path, dfd)
            raise
    finally:
        os.close(dfd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_real(root, path, _kind(info.st_mode))
        size = info.st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        try:
            write_all(fd, line)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)


def remove(path: Path, *, root: Path, missing_ok: bool = True) -> None:
    """Remove the file `path` inside `root`, never through a linked folder (a link at `path`
    itself is removed, not what it points to)."""
    try:
        dfd = open_folder(root, path.parent, create=False)
    except FileNotFoundError:
        if missing_ok:
            return
        raise
    try:
        os.unlink(path.name, dir_fd=dfd)
    except FileNotFoundError:
        if not missing_ok:
            raise
    finally:
        os.close(dfd)


_remove_file = remove  # `locked` has a parameter of that name


_STORE = os.sep + ".ai" + os.sep  # every file of ours lives under a repository's `.ai/`
_REAL_FOLDERS: dict[str, float] = {}  # folder -> when it was found real (a store has a handful)
_REAL_FOR_S = 2.0  # how long that is trusted: a command's life, not a server's


def confined(path: Path | str, folder: bool = False) -> None:
    """Raise OSError (ELOOP) when `path`, a file (`folder`: a folder) under a repository's `.ai/`,
    is reached through a symbolic link inside the repository: `.ai/repo` or `knowledge/curated`
    linked to a folder elsewhere. Each folder from the repository's `.ai` down to the file's own
    must be a real folder (`lstat`, each folder once every 2 s); the file itself is opened with
    `O_NOFOLLOW`. A link above the repository (a home reached through one) is the user's own and
    passes."""
    lexical = os.fspath(path)
    if lexical[:1] != os.sep or "/./" in lexical or "/../" in lexical or "//" in lexical:
        lexical = os.path.abspath(lexical)  # the paths of ours are absolute and plain already
    where = lexical.rstrip(os.sep) if folder else lexical.rpartition(os.sep)[0]
    now = time.monotonic()
    if now - _REAL_FOLDERS.get(where, -_REAL_FOR_S) < _REAL_FOR_S:
        return
    cut = (where + os.sep).rfind(_STORE)
    if cut < 0:
        return  # not a file of a repository's store
    here = where[:cut]
    for part in where[cut + 1:].split(os.sep):
        here += os.sep + part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return  # nothing there to read through
        if stat.S_ISLNK(mode):
            raise OSError(errno.ELOOP, f"reached through a symbolic link, {here}, which majordomus "
                          "never follows: replace the link with a real folder", str(path))
    if len(_REAL_FOLDERS) > 256:
        _REAL_FOLDERS.clear()
    _REAL_FOLDERS[where] = now


def _open_regular(path: Path | str) -> tuple[int, os.stat_result]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link, which majordomus never follows", str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file (a folder, a pipe or a device)", str(path))
        confined(path)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_regular(path: Path | str) -> int:
    """A descriptor of `path` opened for reading if it is a regular file reached through no
    symbolic link inside its repository (`confined`). A link (at `path` or above it, inside the
    repository), a folder or a pipe raises OSError instead: a link is never followed, and a pipe
    would block a reader (the start hook) forever. Opened without blocking, then checked."""
    return _open_regular(path)[0]


def read_regular(path: Path | str, limit: int = -1) -> bytes:
    """The bytes of `path` (the first `limit` when given) if it is a regular file reached through
    no symbolic link (`open_regular`); OSError otherwise."""
    fd, st = _open_regular(path)
    try:
        chunks, total = [], 0
        while limit < 0 or total < limit:  # plain reads, sized by the file: no buffered file object
            want = max(st.st_size - total + 1, 8192)
            chunk = os.read(fd, want if limit < 0 else min(want, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_bytes(path: Path | str, limit: int = READ_LIMIT) -> bytes:
    """A regular file's bytes, when it holds at most `limit`. A larger file, a symbolic link, a
    pipe or a device raises OSError (FileNotFoundError when it is missing), so no reader of a file
    a repository carries ever blocks or fills memory."""
    data = read_regular(path, limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"{path}: larger than {limit} bytes, not a file of ours")
    return data


def read_text(path: Path | str, limit: int = READ_LIMIT) -> str:
    """`read_bytes` as UTF-8 text (UnicodeDecodeError otherwise)."""
    return read_bytes(path, limit).decode("utf-8")


def write_if_changed(path: Path, data: bytes, *, root: Path) -> bool:
    """Write atomically unless the file already holds exactly `data`; True when written."""
    try:
        if read_regular(path) == data:
            return False
    except FileNotFoundError:
        pass
    except OSError:
        pass  # a link or a pipe: atomic_write names it
    atomic_write(path, data, root=root)
    return True


def sweep_tmp(folder: Path, older_than_s: float = 60.0) -> int:
    """Remove `.tmp.` leftovers of interrupted writes; young ones may belong to a live writer."""
    removed = 0
    if not folder.is_dir() or folder.is_symlink():
        return 0
    cutoff = time.time() - older_than_s
    with os.scandir(folder) as listing:  # names as strings: a candidates folder holds thousands
        for entry in listing:
            if entry.name.startswith(TMP_PREFIX):
                try:
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
                        removed += 1
                except (FileNotFoundError, IsADirectoryError):
                    pass
    return removed


@contextmanager
def locked(lock_path: Path, wait_s: float | None = None, remove: bool = False, *,
           root: Path) -> Iterator[None]:
    """Hold an exclusive lock on `lock_path`, a real file inside `root` (created when missing),
    for the block.

    With `wait_s`, wait at most that long for another holder (a stopped process holds its lock
    for ever), then raise `Busy`. With `remove`, the lock file is removed before it is let go (a
    lock per episode leaves no file behind): a waiter that then gets the removed file sees that
    it is no longer the one at `lock_path` and takes that one instead.
    """
    deadline = None if wait_s is None else time.monotonic() + max(wait_s, 0.0)
    while True:
        fd = _open_lock(root, lock_path)
        try:
            _acquire(fd, lock_path, deadline, wait_s)
            if _is_at(fd, lock_path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder removed it while we waited: lock the file now there
    try:
        yield
    finally:
        if remove:
            try:
                _remove_file(lock_path, root=root)
            except (OSError, FatalError):
                pass
        os.close(fd)


def _open_lock(root: Path, lock_path: Path) -> int:
    """The lock file, opened (made when missing) without following a link; a regular file only."""
    dfd = open_folder(root, lock_path.parent)
    try:
        try:
            fd = os.open(lock_path.name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                         | os.O_CLOEXEC, 0o644, dir_fd=dfd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise
            _target_ok(root, lock_path, dfd)
            raise
    finally:
        os.close(dfd)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _not_real(root, lock_path, _kind(mode))
    return fd


def _acquire(fd: int, lock_path: Path, deadline: float | None, wait_s: float | None) -> None:
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Busy(str(lock_path), wait_s or 0.0) from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.05)


def _is_at(fd: int, lock_path: Path) -> bool:
    """Whether the open lock file `fd` is still the file at `lock_path`."""
    try:
        there = os.stat(lock_path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (there.st_ino, there.st_dev) == (held.st_ino, held.st_dev)
