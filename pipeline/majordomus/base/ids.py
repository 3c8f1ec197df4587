"""Ids that may become path components: an episode, a task, a record. Checked before any path is made."""
from __future__ import annotations

from majordomus.base.errors import refused

# SHA-256 from the interpreter's own module (`_sha2`, `_sha256` before 3.12), not hashlib, whose
# import loads OpenSSL: a few ms of every close, which makes record ids and hand-edit digests.
try:
    from _sha2 import sha256 as _SHA256  # type: ignore[import-not-found]
except ImportError:
    try:
        from _sha256 import sha256 as _SHA256  # type: ignore[import-not-found]
    except ImportError:  # an interpreter built without them: hashlib says what it has
        from hashlib import sha256 as _SHA256


class _IdPattern:
    """What `re.compile(pattern)` would answer, as a truth, without `re` (the start hook checks its
    episode's id, and `re` brings `enum` and its kin: ~3 ms of a start). ASCII letters and digits
    are what `isalnum` accepts of an ASCII text."""

    pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z"  # \Z: `$` would pass "e1\n"

    @staticmethod
    def match(value: str) -> bool:
        return 0 < len(value) <= 128 and value.isascii() and value[0].isalnum() \
            and (len(value) == 1 or value[1:].replace(".", "a").replace("_", "a").replace("-", "a").isalnum())


ID_PATTERN = _IdPattern()
# the same for a JSON Schema (ECMA-262 has no \Z; `$(?!\n)` holds under Python's `re.search` too)
ID_JSON_PATTERN = ID_PATTERN.pattern.removesuffix("\\Z") + "$(?!\\n)"
# What every folder of records holds besides records: an id never names one of these files.
RESERVED = frozenset({"readme"})


# Which command lists the valid ids of each kind: a refused id names it.
LISTS = {
    "id": "`majordomus knowledge candidates` lists the candidates, `majordomus knowledge search TEXT` "
          "the records",
    "--by id": "`majordomus knowledge search TEXT` lists the records",
    "episode id": "`majordomus history --event session.opened` lists the episodes",
    "question id": "`majordomus question list` lists the open questions",
    "task id": "`majordomus history --event task.started` lists the tasks",
}


def sha256_hex(data: bytes) -> str:
    """SHA-256 of `data` in hex, as hashlib's (`_SHA256`)."""
    return str(_SHA256(data).hexdigest())


def check_id(value: str, what: str = "id", *, written: bool = False) -> str:
    """An id that may become a path component: refused unless it matches the id pattern. An id a
    writer is about to make a file of (`written`) may not name what a records folder holds
    besides records, its README: a reader simply finds no record by that name. The refusal names
    the command that lists the valid ids of that kind (`LISTS`)."""
    listing = f"; {LISTS[what]}" if what in LISTS else ""
    if not isinstance(value, str) or not ID_PATTERN.match(value) or ".." in value:
        shown = repr(value)[:80]
        article = "a" if what[:1] in "bcdfghjklmnpqrstvwxyz" else "an"  # an id, a question id
        raise refused(f"{what} {shown} refused: {article} {what} is letters, digits, '.', '_' or '-', "
                      f"starts with a letter or digit and holds no '..'{listing}")
    stem = value.casefold()
    if written and (stem in RESERVED or stem.split(".", 1)[0] in RESERVED):
        raise refused(f"{what} {value!r} refused: it names the README of a records folder, which "
                      f"is not a record; choose another{listing}")
    return value
