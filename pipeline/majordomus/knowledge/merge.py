"""The merge driver: two clones' versions of one record, or of one session record, made one.

git runs `majordomus merge-driver %O %A %B %P` (registered by `store/gitmerge.py`) whenever a
merge, a rebase or a pull meets a record both sides changed, or both added. The answer is a
function of the *set* of versions, never of which side is "ours", so every clone that merges the
same histories, in any order, writes the same bytes:

- a knowledge record: every review act of both sides (their union, in time order) and every act's
  body section; the status, class and replacement the acts add up to (`reviews.settle`: reviewers
  who disagree leave the record a candidate, for a person); the union of references, cited
  commits, relations and anchors; the derived text and scalars as the side that changed them from
  the common ancestor has them, and where both did, the greater of the two.
- a session record: every span of both sides, one per opening; a span both sides closed (an end
  on each of two branches) keeps the later close.

Anything the driver cannot read is left to git: it exits 1 and git marks the conflict as usual.
"""
from __future__ import annotations

from typing import Any

from majordomus.knowledge import reviews
from majordomus.store import records, sessionrecord
from majordomus.store.sessionrecord import Span

UNION = {"anchors"}  # top-level lists merged by union


class Unmergeable(ValueError):
    pass


def merge(base: str, ours: str, theirs: str, path: str) -> str:
    """The merged text of the three versions of `path` (`base` is "" when both sides added it)."""
    if ours == theirs:
        return ours
    if path.startswith(".ai/repo/sessions/"):
        return merge_session(ours, theirs)
    return merge_record(base, ours, theirs, path)


def _parse(text: str, where: str) -> tuple[dict[str, Any], str]:
    try:
        return records.parse(text, where)
    except records.RecordError as exc:
        raise Unmergeable(str(exc)) from None


def _pick(base: Any, a: Any, b: Any) -> Any:
    """A three-way choice that does not depend on which side is which: the side that changed the
    value, and where both changed it differently, the greater of the two (as text)."""
    if a == b or b == base:
        return a
    if a == base:
        return b
    return max(a, b, key=lambda v: (str(type(v)), str(v)))


def _union(*lists: Any) -> list[Any]:
    seen: dict[str, Any] = {}
    for found in lists:
        for item in found if isinstance(found, list) else []:
            seen.setdefault(repr(sorted(item.items())) if isinstance(item, dict) else repr(item), item)
    return sorted(seen.values(), key=lambda v: repr(sorted(v.items())) if isinstance(v, dict) else str(v))


def merge_record(base: str, ours: str, theirs: str, path: str) -> str:
    meta_a, body_a = _parse(ours, path)
    meta_b, body_b = _parse(theirs, path)
    meta_o, body_o = _parse(base, path) if base.strip() else ({}, "")
    meta: dict[str, Any] = {}
    for key in list(dict.fromkeys([*meta_a, *meta_b])):
        a, b, o = meta_a.get(key), meta_b.get(key), meta_o.get(key)
        if key == "reviews":
            meta[key] = reviews.union(reviews.items(meta_a), reviews.items(meta_b))
        elif key == "provenance" and isinstance(a, dict) and isinstance(b, dict):
            meta[key] = _provenance(o if isinstance(o, dict) else {}, a, b)
        elif key in UNION or key == "relations":
            meta[key] = _union(a, b)
        elif key not in meta_a or key not in meta_b:
            # one side added the key, or removed it: the side that changed it from the ancestor
            meta[key] = _pick(o, a, b) if key in meta_o else (a if key in meta_a else b)
            if meta[key] is None and (key not in meta_a or key not in meta_b):
                meta.pop(key)
        else:
            meta[key] = _pick(o, a, b)
    derived_a, acts_a = reviews.split(body_a)
    derived_b, acts_b = reviews.split(body_b)
    derived_o, _ = reviews.split(body_o)
    body = _pick(derived_o, derived_a, derived_b)
    if meta.get("reviews"):
        outcome = reviews.settle(meta["reviews"])
        base_class = _pick(meta_o.get("class"), meta_a.get("class"), meta_b.get("class"))
        meta["status"] = outcome.status
        meta["class"] = outcome.cls or base_class
        if outcome.replaced_by:
            meta["superseded_by"] = outcome.replaced_by
        elif outcome.status != "superseded":
            meta.pop("superseded_by", None)
    return records.compose(meta, _body(body, meta.get("reviews") or [], acts_a + acts_b))


def _provenance(o: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key in dict.fromkeys([*a, *b]):
        if key == "derived_from":
            refs = list(dict.fromkeys([*(a.get(key) or []), *(b.get(key) or [])]))
            merged[key] = sorted(refs, key=_ref_order)
        elif key == "commits":
            by_sha = {c.get("sha"): c for c in [*(b.get(key) or []), *(a.get(key) or [])] if isinstance(c, dict)}
            merged[key] = [by_sha[s] for s in sorted(by_sha, key=str)]
        else:
            merged[key] = _pick(o.get(key), a.get(key), b.get(key))
    return merged


def _ref_order(ref: Any) -> tuple[int, str]:
    order = ("session", "task", "decision", "test", "commit", "issue", "file")
    prefix = str(ref).partition(":")[0]
    return (order.index(prefix) if prefix in order else len(order), str(ref))


def _body(derived: str, acts: list[dict[str, Any]], sections: list[str]) -> str:
    """The derived text, then each act's section once, in the order of the acts (sections of acts
    made before reviews existed first, in text order)."""
    by_digest: dict[str, str] = {}
    loose: list[str] = []
    for text in sections:
        match = reviews.SECTION.match(text)
        digest = match.group("digest") if match else None
        if digest:
            by_digest.setdefault(digest, text)
        elif text not in loose:
            loose.append(text)
    ordered = sorted(loose) + [by_digest.pop(str(a.get("digest"))) for a in acts if str(a.get("digest")) in by_digest]
    ordered += [by_digest[d] for d in sorted(by_digest)]
    out = derived.rstrip("\n")
    for text in ordered:
        out = (out + "\n\n" if out else "") + text.rstrip("\n")
    return out + "\n" if out else ""


def _spans(meta: dict[str, Any]) -> list[Span]:
    first = Span(*(_text(meta.get(k)) for k in Span._fields))
    later = [Span(*(_text(item.get(k)) for k in Span._fields))
             for item in meta.get("later_spans") or [] if isinstance(item, dict)]
    return [first, *later]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z") if hasattr(value, "isoformat") else str(value)


def merge_session(ours: str, theirs: str) -> str:
    meta_a, _ = _parse(ours, "ours")
    meta_b, _ = _parse(theirs, "theirs")
    if meta_a.get("id") != meta_b.get("id") or not meta_a.get("id"):
        raise Unmergeable("the two session records name different episodes")
    spans: dict[str | None, Span] = {}
    for span in _spans(meta_a) + _spans(meta_b):
        held = spans.get(span.opened)
        spans[span.opened] = span if held is None else max(held, span, key=lambda s: tuple(str(v) for v in
                                                                                         (s.closed, *s)))
    ordered = [spans[k] for k in sorted(spans, key=str)]
    forked = meta_a.get("forked_from") or meta_b.get("forked_from")
    if meta_a.get("forked_from") and meta_b.get("forked_from"):
        forked = max(str(meta_a["forked_from"]), str(meta_b["forked_from"]))
    return sessionrecord.render(str(meta_a["id"]), ordered, str(forked) if forked else None)
