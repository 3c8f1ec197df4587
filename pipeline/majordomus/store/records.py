"""Knowledge records (knowledge/v1): Markdown with YAML front matter, one assertion each.

References are typed: `session:`, `decision:<task-id>`, `task:`, `commit:<sha>`, `issue:`,
`file:`, `test:`. `question:` is refused, and so is any reference to nothing (`…:none`). A
relation's target may also name another record, `knowledge:<id>`; provenance never does (it names
the ledger objects and commits a record came from). The proto says which field admits what.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from majordomus.base import fsio, yamlio
from majordomus.base.fsio import read_regular
from majordomus.base.lean import TYPE_CHECKING, json, pattern
from majordomus.store import allowlist, frontmatter

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple, TypeVar

    from majordomus.store.workspace import Workspace

    T = TypeVar("T")
else:
    from majordomus.base.lean import NamedTuple

KIND = "knowledge/v1"
CLASSES = ("fact", "convention", "constraint", "memory", "lesson")
STATUSES = ("candidate", "verified", "superseded")
EPISTEMICS = ("observed", "inferred", "decided")
ORIGINS = ("extracted", "authored")
RELATION_TYPES = ("relates_to",)


def reference_prefixes() -> tuple[str, ...]:
    """The reference vocabulary, from the allow-list generated from the proto."""

    return allowlist.reference_prefixes()


_CONTROL = pattern(r"[\x00-\x1f\x7f]")
RELATION_TARGET = "relations.target"  # the field whose references may name a record


def reference_problem(ref: Any, field: str | None = None) -> str | None:
    """Why `ref` is not an admissible reference in `field` (dotted, e.g. `relations.target`; None
    for provenance's derived_from), or None when it is."""
    if not isinstance(ref, str):
        return f"{ref!r} is not a string"
    prefix, sep, target = ref.partition(":")
    if not sep or not target:
        return f"{ref!r} is not PREFIX:TARGET"
    if prefix == "question":
        return f"{ref!r}: question: is not a reference; the task that owns the question is (task:<id>)"
    admitted = reference_prefixes() + (allowlist.field_prefixes(field) if field else ())
    if prefix not in admitted:
        elsewhere = [f for f in (RELATION_TARGET,) if f != field and prefix in allowlist.field_prefixes(f)]
        if elsewhere:
            return (f"{ref!r}: {prefix}: names a record, admitted only as a relation's target "
                    f"(relations: - type: relates_to, target: {ref}); provenance names the ledger "
                    "objects and commits a record came from")
        return f"{ref!r}: unknown prefix {prefix!r} (admitted: {' '.join(admitted)})"
    if target == "none":
        return f"{ref!r} refers to nothing"
    if _CONTROL().search(target):  # as the schema's pattern: [^\x00-\x1f\x7f]
        return f"{ref!r} carries a control character"
    return None


class Record(NamedTuple):
    path: Path
    meta: dict[str, Any]
    body: str

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))

    @property
    def status(self) -> str:
        return str(self.meta.get("status", ""))

    @property
    def derived_from(self) -> list[str]:
        prov = self.meta.get("provenance") or {}
        refs = prov.get("derived_from") if isinstance(prov, dict) else None
        return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


class RecordError(ValueError):
    """A record file that cannot be read as knowledge/v1; the message names the file."""


def parse(text: str, where: str) -> tuple[dict[str, Any], str]:
    """The one front-matter reader: (front matter, body) of a record's text. The front matter this
    tool writes is read by a small exact parser (`frontmatter.load`); anything else (a comment, a
    flow collection, a hand edit) by full safe YAML, so every reader agrees with `knowledge check`."""
    parts = yamlio.split_front_matter(text)
    if parts is None:
        raise RecordError(f"{where}: no front matter (a record starts with '---' and closes it with '---')")
    return _meta(parts[0], where), parts[1]


def _meta(text: str, where: str) -> dict[str, Any]:
    meta = frontmatter.load(text)
    if meta is not None:
        return meta
    try:
        meta = yamlio.load(text, where)
    except yamlio.YamlError as exc:
        raise RecordError(str(exc)) from None
    if not isinstance(meta, dict):
        raise RecordError(f"{where}: the front matter is not a mapping")
    return meta


def front(path: Path, limit: int = 1 << 16) -> dict[str, Any] | None:
    """The front matter of the record at `path` (read bounded, never through a symbolic link), or
    None when there is no readable record there. For scans that need a few keys, not the body."""
    try:
        head = read_regular(path, limit)
    except OSError:
        return None
    return front_of(head, str(path))


def front_of(head: bytes, where: str) -> dict[str, Any] | None:
    """`front` of a record's first bytes, already read."""
    parts = yamlio.split_front_matter(head.decode("utf-8", errors="replace"))
    if parts is None:
        return None
    try:
        return _meta(parts[0], where)
    except RecordError:
        return None


def load(path: Path) -> Record:
    try:  # bytes, then decode: a carriage return in a body is text, not a line ending to translate
        text = read_regular(path).decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise RecordError(f"{path}: not a regular file (a symbolic link is never followed)") from None
    meta, body = parse(text, str(path))
    return Record(path, meta, body)


def files(folder: Path, strays: list[Path] | None = None) -> list[Path]:
    """The one folder listing: the record files of `folder` (regular `*.md` files, never a README
    contract or a `.tmp.` leftover), sorted by name. The `*.md` entries that are neither a regular
    file nor a folder are appended to `strays` when it is given (a symbolic link, even to a record, is never followed: it could lead out of the store,
    or in a loop; a pipe would block its reader). A folder is simply not a record."""
    odd: list[str] | None = [] if strays is not None else None
    found = [folder / n for n in names(folder, odd)]
    if strays is not None and odd:
        strays.extend(folder / n for n in odd)
    return found


def names(folder: Path, strays: list[str] | None = None) -> list[str]:
    """`files`, as the names alone (a scan of thousands of records pays for no path object)."""
    found: list[str] = []
    _scan(folder, lambda e: found.append(e.name), strays)
    found.sort()
    return found


def _opened(folder: Path, lister: Callable[[Path], T]) -> T | None:
    """`lister(folder)`, or None when there is no such folder or it is reached through a link
    (`curated/` linked elsewhere is not listed)."""
    try:
        fsio.confined(folder, folder=True)
        return lister(folder)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        return None


def stats(folder: Path) -> list[tuple[str, os.stat_result | None]]:
    """The record files of `folder` (as `files`, in the folder's own order) with each one's
    `lstat` (None when it is gone since the listing): the folder is opened once, without
    following a link, and each file stat'ed by its name in it, not by a path resolved again from
    the root (16,000 records: about half the time)."""
    found: list[tuple[str, os.stat_result | None]] = []

    def stat_of(e: os.DirEntry[str]) -> None:
        try:
            found.append((e.name, e.stat(follow_symlinks=False)))
        except OSError:
            found.append((e.name, None))

    _scan(folder, stat_of, None)
    return found


def is_record_name(name: str) -> bool:
    """Whether a file so named in a record folder is a record: `*.md`, but a README contract or a
    `.tmp.` leftover of an atomic write."""
    return name.endswith(".md") and name != "README.md" and not name.startswith(".tmp.")


def _scan(folder: Path, each: Callable[[os.DirEntry[str]], object], strays: list[str] | None) -> None:
    """`each` of every regular `*.md` file of `folder` (never a README contract or a `.tmp.`
    leftover), in the folder's order, while the folder is open (an entry's `stat` asks the
    folder's descriptor); the names of `*.md` entries that are neither a regular file nor a folder
    appended, sorted, to `strays`. Nothing when there is no such folder or it is reached through
    a link."""
    fd = _opened(folder, _open_dir)
    if fd is None:
        return
    odd: list[str] = []
    try:
        with os.scandir(fd) as listing:
            for e in listing:
                name = e.name
                # `is_record_name`, inline: one call an entry fewer, 16,000 a scan at 1M
                if not name.endswith(".md") or name == "README.md" or name.startswith(".tmp."):
                    continue
                try:
                    regular = e.is_file(follow_symlinks=False)
                    folder_entry = not regular and e.is_dir(follow_symlinks=False)
                except OSError:
                    regular = folder_entry = False
                if regular:
                    each(e)
                elif not folder_entry:
                    odd.append(name)
    finally:
        os.close(fd)
    if strays is not None:
        strays.extend(sorted(odd))


def _open_dir(folder: Path) -> int:
    return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def strays(folder: Path, regular: set[str]) -> list[str]:
    """The `strays` of `names`, sorted, for a caller that has the folder's regular record files
    (`regular`, from the index) and would not scan it again: its names, listed once, less those
    and less what is a regular file or a folder when looked at (one `lstat` each, almost never)."""
    listed = _opened(folder, os.listdir)
    if listed is None:
        return []
    where = os.fspath(folder) + os.sep
    odd = []
    for name in listed:
        if not is_record_name(name) or name in regular:
            continue
        try:
            mode = os.lstat(where + name).st_mode
        except FileNotFoundError:
            continue  # gone since it was listed
        except OSError:
            mode = 0
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a regular file here came after the index's scan
            odd.append(name)
    return sorted(odd)


def quick_status(path: Path) -> str | None:
    """The `status:` of the record at `path`, or None when there is no readable record there."""
    meta = front(path)
    status = meta.get("status") if meta is not None else None
    return status if isinstance(status, str) else None


def lock_path(ws: Workspace) -> Path:
    """The lock every writer of a record holds: the review acts and the deriver's `write_record`."""
    return ws.state / "knowledge.lock"


# The one writer: every record's text, derived or acted on, is composed here, in knowledge/v1's
# key order. A key outside it keeps its place at the end, so `majordomus knowledge check` can
# name it rather than a writer silently dropping it.
KEY_ORDER = ("id", "kind", "class", "status", "epistemics", "title", "date", "description",
             "provenance", "relations", "superseded_by", "anchors", "reviews")
_PLAIN_KEYS = frozenset(("id", "kind", "class", "status", "epistemics", "origin", "type", "superseded_by",
                         "act", "commit", "replaced_by", "digest", "sha"))


def compose(meta: dict[str, Any], body: str) -> str:
    """A record's text: `---`, the front matter in knowledge/v1 order, `---`, then `body` as is.
    Identifiers (id, kind, class, status, epistemics, origin, type) are written plain when YAML
    reads them back as the same string; every other scalar through `yamlio.scalar`, which any
    text survives."""
    ordered = [k for k in KEY_ORDER if k in meta] + [k for k in meta if k not in KEY_ORDER]
    lines = ["---"]
    for key in ordered:
        _emit(lines, str(key), meta[key], 0)
    lines.append("---")
    return "\n".join(lines) + "\n" + body


def _emit(lines: list[str], key: str, value: Any, indent: int) -> None:
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines.append(f"{pad}{key}:")
        for sub, item in value.items():
            _emit(lines, str(sub), item, indent + 2)
    elif isinstance(value, list) and value:
        lines.append(f"{pad}{key}:")
        for item in value:
            if isinstance(item, dict) and item and all(not isinstance(v, (dict, list)) for v in item.values()):
                first = True
                for sub, leaf in item.items():
                    lead = "- " if first else "  "
                    lines.append(f"{pad}  {lead}{sub}: {_scalar(str(sub), leaf)}")
                    first = False
            else:
                lines.append(f"{pad}  - {_scalar('', item)}")
    else:
        lines.append(f"{pad}{key}: {_scalar(key, value)}")


def _scalar(key: str, value: Any) -> str:
    if isinstance(value, (dict, list)):  # empty, or nested beyond what records use: JSON is YAML
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    if hasattr(value, "isoformat"):  # a date YAML read unquoted
        value = value.isoformat()
    if key in _PLAIN_KEYS and isinstance(value, str) and frontmatter.scalar(value) == value:
        return value
    return yamlio.scalar(value)
