"""A record's review acts, and what they add up to.

Every act a person makes on a record (promote, reject, re-verify, retire) is one item of the
record's `reviews` and one section of its body, headed by what it was, who made it and when. The
acts are never rewritten, only added to; two clones' acts on one record merge by union (the
merge driver, `knowledge/merge.py`), so no act is lost whichever push lands first.

What the acts add up to (status, class, the replacing record) is computed from them, never taken
from whichever file a merge kept: the acts made last, those that saw the most earlier acts (the
*frontier*), decide. When the frontier disagrees (promoted on one clone, rejected on another;
two classes), nobody has settled it: the record goes back to `candidate`, beside its acts, and a
person settles it with one more act, which sees them all (docs/TEAM.md).
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, NamedTuple

# what each act sets the status to, and the heading of the body section it writes
STATUS = {"promoted": "verified", "reverified": "verified", "rejected": "superseded", "retired": "superseded"}
HEADING = {"promoted": "Evidence", "reverified": "Evidence", "rejected": "Rejected", "retired": "Retired"}
_WORDS = {"promoted": "promoted", "reverified": "re-verified", "rejected": "rejected", "retired": "retired"}
FIELDS = ("act", "at", "by", "commit", "seen", "class", "replaced_by", "digest")
# An act's section heading: `# Evidence (promoted by Ada, 2026-12-02T10:00:00Z, 0a1b2c3d4e5f)`;
# the bare headings of records acted on before reviews existed are sections too.
SECTION = re.compile(r"^# (?:(?:Evidence|Rejected|Retired) \((?:promoted|re-verified|rejected|retired) by .*, "
                     r"[0-9T:Z-]+, (?P<digest>[0-9a-f]{12})\)|Evidence|Rejected)$", re.M)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029()]")


def digest(text: str) -> str:
    """The first 12 hex digits of SHA-256 of an act's text, as its section holds it."""
    return hashlib.sha256(text.strip("\n").encode("utf-8")).hexdigest()[:12]


def review(act: str, at: str, by: str, commit: str | None, seen: int, text: str,
           cls: str | None = None, replaced_by: str | None = None) -> dict[str, Any]:
    """One review item, its keys in the proto's order and absent where they say nothing."""
    item: dict[str, Any] = {"act": act, "at": at, "by": one_line(by) or "unknown", "commit": commit,
                            "seen": seen, "class": cls, "replaced_by": replaced_by, "digest": digest(text)}
    return {k: v for k, v in item.items() if v is not None}


def one_line(text: str) -> str:
    """`text` as a heading may hold it: no control characters, separators or parentheses."""
    return " ".join(_UNSAFE.sub(" ", text).split())


def heading(item: dict[str, Any]) -> str:
    act = str(item.get("act"))
    return (f"# {HEADING.get(act, 'Evidence')} ({_WORDS.get(act, act)} by {one_line(str(item.get('by', '')))}, "
            f"{item.get('at')}, {item.get('digest')})")


def section(item: dict[str, Any], text: str) -> str:
    return f"{heading(item)}\n\n{text.strip(chr(10))}\n"


def with_act(body: str, item: dict[str, Any], text: str) -> str:
    """`body` with the act's section after everything it holds."""
    head = body.rstrip("\n")
    return (head + "\n\n" if head else "") + section(item, text)


def split(body: str) -> tuple[str, list[str]]:
    """(the derived text before the first act's section, each act's section as written)."""
    starts = [m.start() for m in SECTION.finditer(body)]
    if not starts:
        return body, []
    sections = [body[a:b].rstrip("\n") + "\n" for a, b in zip(starts, starts[1:] + [len(body)])]
    return body[:starts[0]], sections


def items(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's reviews that are mappings (a hand-edited list may hold anything)."""
    found = meta.get("reviews")
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def order(item: dict[str, Any]) -> tuple[str, int, str, str, str]:
    """Reviews sort by time, then by what they saw, then by content: the same set of acts is the
    same list whichever clone's file a merge started from."""
    seen = item.get("seen")
    return (str(item.get("at", "")), seen if isinstance(seen, int) else 0, str(item.get("act", "")),
            str(item.get("by", "")), str(item.get("digest", "")))


def union(*lists: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every act of every list once, in `order`."""
    kept: dict[tuple[Any, ...], dict[str, Any]] = {}
    for found in lists:
        for item in found:
            kept.setdefault(tuple(str(item.get(k)) for k in FIELDS), item)
    return sorted(kept.values(), key=order)


class Outcome(NamedTuple):
    status: str | None  # None: no act yet (the derived status stands)
    cls: str | None  # the class the acts gave, None when none gave one
    replaced_by: str | None
    contested: list[dict[str, Any]]  # the frontier's acts when they disagree, else []


def settle(reviews: list[dict[str, Any]]) -> Outcome:
    """What the acts add up to: the frontier's verdict, or `candidate` when it disagrees."""
    if not reviews:
        return Outcome(None, None, None, [])
    top = max(r.get("seen", 0) if isinstance(r.get("seen"), int) else 0 for r in reviews)
    frontier = [r for r in reviews if (r.get("seen") if isinstance(r.get("seen"), int) else 0) == top]
    verdicts = {STATUS.get(str(r.get("act")), "?") for r in frontier}
    classes = {str(r["class"]) for r in frontier if r.get("class")}
    replaced = {str(r["replaced_by"]) for r in frontier if r.get("replaced_by")}
    if len(verdicts) > 1 or len(classes) > 1 or len(replaced) > 1:
        return Outcome("candidate", None, None, frontier)
    given = [str(r["class"]) for r in reviews if r.get("class")]
    return Outcome(verdicts.pop(), given[-1] if given else None, replaced.pop() if replaced else None, [])


def describe(item: dict[str, Any]) -> str:
    """One act in words: `promoted by Ada at 2026-12-02T10:00:00Z (as constraint)`."""
    extra = f" (as {item['class']})" if item.get("class") else ""
    if item.get("replaced_by"):
        extra += f" (replaced by {item['replaced_by']})"
    return f"{_WORDS.get(str(item.get('act')), item.get('act'))} by {item.get('by')} at {item.get('at')}{extra}"


def anchor_commit(reviews: list[dict[str, Any]]) -> str | None:
    """The commit of the newest verification (promoted or re-verified), or None."""
    found = [r for r in reviews if r.get("act") in ("promoted", "reverified") and r.get("commit")]
    return str(max(found, key=order)["commit"]) if found else None
