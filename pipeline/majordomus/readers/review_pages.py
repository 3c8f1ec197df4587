"""The cockpit as a review page: the queue (its home, `/`), one record, and the status, written for
the person who reviews — as a pull-request review reads, not as an API explorer. Each reads the
same answers as the JSON routes, the MCP tools and the command line (`readers/answers.py`); the
generic pages generated from the declarations stay under `/cockpit/` (the catalogue).

- The queue: each candidate's title and body first, then its evidence in words, each linked to
  what it names (the episode's session record, the task, the commit, another record), how long it
  has waited, and the exact commands that promote or reject it; then the verified records, with
  their currency when the answer carries one (`currency`).
- A record: the same, with its front matter as written folded under the text.
- The status: sentences, not a JSON tree.

Read-only: a page shows the commands; a person runs them.
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from majordomus.knowledge.accumulation import minutes
from majordomus.readers import answers, markdown
from majordomus.readers.pages import document, e, short
from majordomus.store.workspace import Workspace

RECORD = "/cockpit/knowledge_base/record/"
EVIDENCE = "/cockpit/evidence/"
STATUS = "/cockpit/knowledge_base/status"
HOME: list[tuple[str, str | None]] = [("review queue", "/")]


def record_href(rid: str) -> str:
    return RECORD + quote(rid, safe="")


def record_link(rid: str, text: str | None = None) -> str:
    return f'<a href="{e(record_href(rid))}">{e(text if text is not None else rid)}</a>'


def waited(age: int | None) -> str:
    return "waiting since a time nothing dates" if age is None else f"waiting {minutes(age * 60.0)}"


def _evidence_href(ref: dict[str, Any]) -> str | None:
    if ref.get("record"):
        return record_href(str(ref["record"])) if ref.get("resolved") else None
    kind = {"session": "session", "task": "task", "decision": "task", "commit": "commit"}.get(ref["kind"])
    if kind is None or ref.get("resolved") is not True:
        return None  # nothing this checkout can show: no link that would answer 404
    return f"{EVIDENCE}{kind}/{quote(ref['target'], safe='')}"


def evidence(refs: list[dict[str, Any]]) -> str:
    """A record's references in words, each linked to what it names."""
    if not refs:
        return '<p class="none">No evidence named: nothing in its provenance.</p>'
    items = []
    for ref in refs:
        said = ref["label"] or ("not found in this checkout" if ref["resolved"] is False else ref["ref"])
        href = _evidence_href(ref)
        words = f'<a href="{e(href)}">{e(said)}</a>' if href else e(said)
        kind, _, target = ref["ref"].partition(":")
        written = f"{e(kind)}:{short(target)}" if _ else short(ref["ref"])
        where = written if ref["field"] == "derived_from" else f"{e(ref['field'])} {written}"
        items.append(f'<li>{words} <span class="ref">{where}</span></li>')
    return f'<ul class="evidence">{"".join(items)}</ul>'


def commands(rid: str) -> str:
    """The exact commands that act on a candidate, to copy."""
    promote = f"majordomus knowledge promote {rid} <<'EOF'\nhow you checked it, in your own words\nEOF"
    reject = f'majordomus knowledge reject {rid} --reason "why, in your own words"'
    return ('<div class="act"><p class="meta">Promote it (the evidence is read from standard input):</p>'
            f"<pre><code>{e(promote)}</code></pre>"
            f'<p class="meta">or reject it:</p><pre><code>{e(reject)}</code></pre></div>')


def _body(rec: dict[str, Any]) -> str:
    if rec.get("problem"):
        return f'<p class="error" role="alert">This file does not parse: {e(rec["problem"])}</p>'
    body = rec.get("body") or ""
    return f'<div class="body">{markdown.render(body)}</div>' if body.strip() else '<p class="none">No body.</p>'


def _currency(value: Any) -> str:
    if isinstance(value, dict):
        return " · ".join(f"{e(k.replace('_', ' '))}: {short(str(v))}" for k, v in value.items()
                          if isinstance(v, (str, int, float)) and not isinstance(v, bool))
    return e(value) if value is not None else ""


def _card(item: dict[str, Any], rec: dict[str, Any]) -> str:
    rid = item["id"]
    where = (f"this branch ({item['branch']})" if item["this_branch"] else
             f"branch {item['branch']}" if item["branch"] else "an episode this checkout cannot place")
    tracked = "" if item["tracked"] else " · not tracked by git yet"
    return (f'<article class="card" id="{e(rid)}"><h2>{record_link(rid, item["title"])}</h2>'
            f'<p class="meta">{e(item["class"])} · candidate {record_link(rid)} · {e(where)} · '
            f'{e(waited(item["age_minutes"]))}{e(tracked)}</p>'
            f"{_body(rec)}<h3>Evidence</h3>{evidence(rec.get('references') or [])}{commands(rid)}</article>")


def queue_page(ws: Workspace) -> str:
    """The home: the review queue, then the verified records."""
    queue = answers.candidates(ws)
    cards = []
    for item in queue:
        try:
            cards.append(_card(item, answers.record(ws, item["id"])))
        except Exception as exc:  # noqa: BLE001 - one record that cannot be read never hides the queue
            cards.append(f'<article class="card"><h2>{record_link(item["id"])}</h2>'
                         f'<p class="error">{e(type(exc).__name__)}: {e(exc)}</p></article>')
    lead = (f"{len(queue)} candidate(s) await review: this branch first, oldest first. At a terminal, "
            "<code>majordomus knowledge review</code> walks them one key at a time." if queue else
            "No candidate awaits review.")
    verified = answers.search(ws, "", status="verified")
    rows = "".join(
        f"<li>{record_link(v['id'], v['title'])} <span class=\"ref\">{e(v['class'])} · {e(v['date'])}"
        + (f" · {_currency(v['currency'])}" if v.get("currency") is not None else "")
        + "</span></li>" for v in verified)
    body = (f"<h1>Review queue ({len(queue)})</h1><p class=\"lead\">{lead}</p>" + "".join(cards)
            + f"<h2>Verified records ({len(verified)})</h2>"
            + (f'<ul class="lines">{rows}</ul>' if rows else '<p class="none">None yet.</p>')
            + '<p><a href="/knowledge_base/candidates">JSON</a></p>')
    return document("review queue", body, HOME)


def record_page(rec: dict[str, Any]) -> str:
    """One record as a person reviews it: text first, evidence, its wait and the acts, then its
    front matter as written."""
    meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
    assert isinstance(meta, dict)
    title = str(meta.get("title") or rec["id"])
    status = str(meta.get("status") or "unknown status")
    facts = [e(status), e(meta.get("class") or "no class"), f"<code>{e(rec['id'])}</code>", e(rec["path"])]
    facts.append("tracked by git" if rec["tracked"] else "not tracked by git yet")
    review = rec.get("review")
    acts = ""
    if review:
        facts.append(e(waited(review.get("age_minutes"))))
        acts = "<h2>Act on it</h2>" + commands(rec["id"])
    if rec.get("currency") is not None:
        facts.append(_currency(rec["currency"]))
    later = meta.get("superseded_by")
    replaced = f"<p>Superseded by {record_link(str(later))}.</p>" if isinstance(later, str) and later else ""
    front = "".join(f"<dt>{e(k)}</dt><dd>{_value(v)}</dd>" for k, v in meta.items())
    body = (f"<h1>{e(title)}</h1><p class=\"meta\">{' · '.join(facts)}</p>{replaced}{_body(rec)}"
            f"<h2>Evidence</h2>{evidence(rec.get('references') or [])}{acts}"
            f"<details><summary>Front matter, as written</summary><dl>{front}</dl></details>"
            f'<p><a href="/knowledge_base/record/{e(quote(rec["id"], safe=""))}">JSON</a></p>')
    return document(title, body, [*HOME, (rec["id"], None)])


def _value(value: Any) -> str:
    if isinstance(value, str):
        return short(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "<br>".join(short(v) for v in value) or '<span class="none">none</span>'
    return f"<code>{e(json.dumps(value, ensure_ascii=False))}</code>"


def status_page(st: dict[str, Any]) -> str:
    """The status in sentences."""
    def counts(by: dict[str, int]) -> str:
        return ", ".join(f"{n} {e(k)}" for k, n in by.items()) or "none"

    q = st["queue"]
    parts = [f"<p>{st['records']} record(s): {counts(st['by_status'])}. By class: {counts(st['by_class'])}.</p>",
             f"<h2>Review queue</h2><p><a href=\"/\">{q['length']} candidate(s)</a> await review; the policy "
             f"allows {q['max_files']}, each waiting {minutes(q['max_age_minutes'] * 60.0)} at most"
             + (" — <strong>over the cap</strong>" if q["over_cap"] else "") + ".</p>"]
    if q["oldest"]:
        o = q["oldest"]
        parts.append(f"<p>The oldest, {record_link(o['id'])}, has waited {e(minutes(o['age_minutes'] * 60.0))} "
                     f"(since {e(o['since'])}, from the {e(o['source'])}: {e(o['detail'])}).</p>")
    if q["overdue"]:
        parts.append(f"<p>Over the age limit: {', '.join(record_link(r) for r in q['overdue'])}.</p>")
    last = st["last_derivation"]
    parts.append("<h2>Last derivation</h2>" + ("<p>None yet.</p>" if last is None else
                 f"<p>At {e(last['ts'])}" + (f", at the end of episode {_episode(last['episode'])}" if last["episode"]
                                              else "") + f": {last['written']} written, {last['unchanged']} "
                 f"unchanged, {last['skipped']} skipped.</p>"))
    w = st["writer"]
    state = "not judged" if not w["judged"] else ("fresh" if w["fresh"] else "stale")
    reason = str(w["reason"])
    said = reason[:1].upper() + reason[1:] if reason.lower().startswith(state) else f"{state.capitalize()}: {reason}"
    parts.append(f"<h2>The knowledge writer</h2><p>{e(said)}</p>")
    if st["unreadable"]:
        parts.append("<h2>Unreadable records</h2><ul class=\"lines\">" + "".join(
            f"<li>{e(u['path'])}: {e(u['problem'])}</li>" for u in st["unreadable"]) + "</ul>")
    if st["untracked"]:
        parts.append("<h2>Not tracked by git</h2><ul class=\"lines\">" + "".join(
            f"<li>{e(p)}</li>" for p in st["untracked"]) + "</ul><p>Commit them beside the rest:</p>"
            "<pre><code>git add .ai/repo/knowledge</code></pre>")
    body = "<h1>Status</h1>" + "".join(parts) + '<p><a href="/knowledge_base/status">JSON</a></p>'
    return document("status", body, [*HOME, ("status", None)])


def _episode(episode: str) -> str:
    return f'<a href="{e(EVIDENCE)}session/{e(quote(episode, safe=""))}">{e(episode)}</a>'
