"""The cockpit: HTML pages generated from the reader declarations (`knowledge_base.CAPABILITIES`),
the same declarations the OpenAPI document, the MCP tools and the command line are generated from
(seed 001: "the cockpit's module catalogue"; ADR 0012: no hand-written page per capability).

- `/`: the review queue, a page written for the person who reviews (`readers.review_pages`).
- `/cockpit/`: the catalogue of the reader module and its capabilities.
- `/cockpit/<module>/<verb>[/<positional>…]`: one page per capability, its route the JSON route
  under `/cockpit`; a positional parameter may also come as a query (`?id=…`, the catalogue's form).
  The record and the status are read by people more than by tools: their pages are the review
  pages' (VIEWS); the candidates and the search keep the generated ones.
- `/cockpit/evidence/…`: what a record's evidence names (`readers.evidence_pages`).

A page is the capability's answer rendered by walking its declared result schema: an object is a
list of terms, a list of objects a table (stacked as cards on a phone), a list of values a list.
A few annotations in the schemas steer it, and nothing else is specific to one capability:
`x-link` (this string is the positional argument of that capability: a link to its page),
`x-unit: minutes` (shown as a wait), `x-secondary` (a detail left out of a table's columns, still
in the JSON and on the item's own page), `x-heading` (a JSON pointer to the answer's own title),
and JSON Schema's own `title` (a label) and `contentMediaType: text/markdown` (rendered by
`readers.markdown`).

Server-rendered, no script, no build step, one inline style sheet admitted by its hash in the
Content-Security-Policy, nothing loaded from anywhere. Every value is escaped: records are text from
a repository. Read-only: GET and HEAD, behind the same `Host` rule as the JSON routes (httpd).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from majordomus.base.errors import FatalError
from majordomus.knowledge.accumulation import minutes as waited
from majordomus.readers import evidence_pages, markdown, openapi, review_pages
from majordomus.readers.pages import document, e, short
from majordomus.readers.answers import call
from majordomus.readers.knowledge_base import CAPABILITIES, MODULE, MODULE_SUMMARY, Capability, find
from majordomus.store.workspace import Workspace

PREFIX = "/cockpit"


def owns(path: str) -> bool:
    """Whether `path` (the URL's path) is one of the cockpit's."""
    return path == "/" or path == PREFIX or path.startswith(PREFIX + "/")  # evidence pages included


def page_route(cap: Capability, arguments: dict[str, str] | None = None) -> str:
    """The page of `cap`: its JSON route under the prefix, positional arguments filled in."""
    path = openapi.route(cap)
    for param in cap.parameters:
        if param.positional:
            value = (arguments or {}).get(param.name, "")
            path = path.replace(f"{{{param.name}}}", quote(value, safe=""))
    return PREFIX + path


def link(cap: Capability, value: str) -> str:
    """A link to `cap`'s page for `value`, its one positional argument."""
    param = next(p.name for p in cap.parameters if p.positional)
    return f'<a href="{e(page_route(cap, {param: value}))}">{e(value)}</a>'


def _document(title: str, body: str, crumbs: list[tuple[str, str | None]]) -> str:
    return document(title, body, crumbs)


def _crumbs(cap: Capability | None = None) -> list[tuple[str, str | None]]:
    trail: list[tuple[str, str | None]] = [("majordomus", PREFIX + "/"), (MODULE, PREFIX + "/")]
    if cap is not None:
        trail.append((cap.verb, None))
    return trail


# --- values, rendered by walking the declared schema -----------------------------------------
def _branch(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    """The branch of a `oneOf`/`anyOf` that fits `value` (by JSON type)."""
    for key in ("oneOf", "anyOf"):
        for option in schema.get(key, ()):
            kind = option.get("type")
            kinds = kind if isinstance(kind, list) else [kind]
            if (value is None and "null" in kinds) or (isinstance(value, dict) and "object" in kinds) \
                    or (isinstance(value, list) and "array" in kinds) \
                    or (isinstance(value, str) and ("string" in kinds or "enum" in option)):
                chosen: dict[str, Any] = option
                return chosen
    return schema


def _label(key: str, schema: dict[str, Any] | None = None) -> str:
    title = (schema or {}).get("title")
    return title if isinstance(title, str) else key.replace("_", " ")


def value_html(value: Any, schema: dict[str, Any]) -> str:
    """One value as HTML, by its schema."""
    schema = _branch(schema, value)
    if value is None:
        return '<span class="none">none</span>'
    target = schema.get("x-link")
    if isinstance(value, str) and isinstance(target, str) and (cap := find(target)) is not None:
        return link(cap, value)
    if isinstance(value, str) and schema.get("contentMediaType") == "text/markdown":
        return f'<div class="body">{markdown.render(value)}</div>'
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and schema.get("x-unit") == "minutes":
        return e(waited(value * 60.0))
    if isinstance(value, dict):
        return terms(value, schema)
    if isinstance(value, list):
        items = schema.get("items", {}) if isinstance(schema.get("items"), dict) else {}
        if not value:
            return '<span class="none">none</span>'
        if items.get("properties") and all(isinstance(v, dict) for v in value):
            return table(value, items)
        return "<ul>" + "".join(f"<li>{value_html(v, items)}</li>" for v in value) + "</ul>"
    return short(value) if isinstance(value, str) else e(value)


def _keys(value: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    declared = [k for k in schema.get("properties", {}) if k in value]
    return declared + [k for k in value if k not in declared]  # the rest as written (a record's own order)


def _sub(schema: dict[str, Any], key: str) -> dict[str, Any]:
    found = schema.get("properties", {}).get(key)
    if isinstance(found, dict):
        return found
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else {}


def terms(value: dict[str, Any], schema: dict[str, Any]) -> str:
    """An object as a list of terms, in the declared order (undeclared keys after, sorted)."""
    if not value:
        return '<span class="none">none</span>'
    rows = []
    for key in _keys(value, schema):
        sub = _sub(schema, key)
        hint = f' title="{e(sub["description"])}"' if isinstance(sub.get("description"), str) else ""
        rows.append(f"<dt{hint}>{e(_label(key, sub))}</dt><dd>{value_html(value[key], sub)}</dd>")
    return "<dl>" + "".join(rows) + "</dl>"


def table(rows: list[dict[str, Any]], schema: dict[str, Any]) -> str:
    """A list of objects as a table, a column per declared property that is not `x-secondary`
    (cards on a narrow screen)."""
    columns = [k for k, sub in schema.get("properties", {}).items()
               if any(k in r for r in rows) and not (isinstance(sub, dict) and sub.get("x-secondary"))]
    head = "".join(f"<th scope=\"col\">{e(_label(k, _sub(schema, k)))}</th>" for k in columns)
    body = "".join("<tr>" + "".join(f'<td data-label="{e(_label(k, _sub(schema, k)))}">'
                                    f'{value_html(r.get(k), _sub(schema, k))}</td>'
                                    for k in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _pointer(value: Any, pointer: str) -> Any:
    for part in pointer.strip("/").split("/"):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


# --- pages -----------------------------------------------------------------------------------
def catalogue() -> str:
    """The catalogue of the reader module: every capability, its page, its JSON route and tool."""
    items = []
    for cap in CAPABILITIES:
        params = "".join(f"<li><code>{e(p.name)}</code>: {e(p.summary)}"
                         f"{' (required)' if p.required else ''}</li>" for p in cap.parameters)
        positional = [p for p in cap.parameters if p.positional]
        if positional:
            action = PREFIX + openapi.route(cap).split("/{", 1)[0]
            fields = "".join(f'<input name="{e(p.name)}" aria-label="{e(p.summary)}" '
                             f'placeholder="{e(p.summary)}" required>' for p in positional)
            entry = f'<h2>{e(cap.name)}</h2><form method="get" action="{e(action)}">{fields}' \
                    f'<button type="submit">show</button></form>'
        else:
            entry = f'<h2><a href="{e(page_route(cap))}">{e(cap.name)}</a></h2>'
        items.append(
            f'<section>{entry}<p class="lead">{e(cap.summary)}</p><p>{e(cap.description)}</p>'
            + (f"<p>Parameters:</p><ul>{params}</ul>" if params else "")
            + f"<dl><dt>JSON</dt><dd><code>GET {e(openapi.route(cap))}</code></dd>"
              f"<dt>MCP tool</dt><dd><code>{e(cap.flat_name)}</code></dd>"
              f"<dt>command</dt><dd><code>majordomus knowledge {e(cap.verb)}"
              f"{''.join(' ' + p.name.upper() for p in positional)} [--json]</code></dd></dl></section>")
    body = (f"<h1>{e(MODULE)}</h1><p class=\"lead\">{e(MODULE_SUMMARY)}</p>"
            f"<p>{len(CAPABILITIES)} capabilities, each a page here, a JSON route, an MCP tool and a command.</p>"
            + "".join(items))
    return _document(MODULE, body, _crumbs())


def capability_page(cap: Capability, arguments: dict[str, str], answer: Any) -> str:
    """`cap`'s answer as a page."""
    heading = _pointer(answer, cap.result["x-heading"]) if isinstance(cap.result.get("x-heading"), str) else None
    title = str(heading) if heading else cap.summary
    count = f" ({len(answer)})" if isinstance(answer, list) else ""
    shown = ", ".join(f"{k} {v}" for k, v in arguments.items())
    json_route = openapi.route(cap)
    for key, val in arguments.items():
        json_route = json_route.replace(f"{{{key}}}", quote(val, safe=""))
    body = (f"<h1>{e(title)}{e(count)}</h1>"
            f"<p class=\"lead\">{e(cap.name)}{' · ' + e(shown) if shown else ''} — {e(cap.summary)} · "
            f"<a href=\"{e(json_route)}\">JSON</a></p>"
            f"<p>{e(cap.description)}</p>" + value_html(answer, cap.result))
    return _document(title, body, _crumbs(cap))


def error_page(status: int, message: str, cap: Capability | None = None) -> str:
    body = (f"<h1>{status}</h1><p class=\"error\" role=\"alert\">{e(message)}</p>"
            f"<p><a href=\"/\">the review queue</a> · <a href=\"{PREFIX}/\">the catalogue</a></p>")
    return _document(f"{status}", body, _crumbs(cap))


def _match(path: str, query: dict[str, list[str]]) -> tuple[Capability, dict[str, str]] | None:
    """The capability whose page `path` is, with its arguments (path segments, or the query)."""
    found = openapi.match(path)
    if found is not None:
        return found
    for cap in CAPABILITIES:
        positional = [p.name for p in cap.parameters if p.positional]
        if positional and openapi.route(cap).split("/{", 1)[0] == path.rstrip("/") \
                and all(query.get(n) for n in positional):
            return cap, {}
    return None


VIEWS: dict[str, Callable[[Any], str]] = {"record": review_pages.record_page, "status": review_pages.status_page}


def _guarded(make: Callable[[], str], cap: Capability | None = None) -> tuple[int, str]:
    """(200, the page `make` builds), or the refusal or failure as a page: a page never takes the
    server down."""
    try:
        return 200, make()
    except FatalError as exc:
        status, _ = openapi.STATUS_OF.get(exc.code, openapi.INTERNAL)
        return status, error_page(status, exc.message, cap)
    except Exception as exc:  # noqa: BLE001
        return 500, error_page(500, f"internal error: {type(exc).__name__}: {exc}", cap)


def page(root: Any, target: str, run: Callable[[Capability, dict[str, Any]], Any] | None = None) -> tuple[int, str]:
    """(status, HTML) for one GET of a cockpit path (the Host and method rules are the caller's):
    `/` the review queue, `/cockpit/` the catalogue, the evidence pages, and one page per
    capability (the record and the status as a person reads them, the others generated)."""
    url = urlsplit(target)
    if url.path == "/":
        return _guarded(lambda: review_pages.queue_page(Workspace(root)))
    if url.path in (PREFIX, PREFIX + "/"):
        return 200, catalogue()
    if evidence_pages.owns(url.path):
        return _guarded(lambda: evidence_pages.page(Workspace(root), unquote(url.path)))
    found = _match(url.path[len(PREFIX):], parse_qs(url.query, keep_blank_values=True))
    if found is None:
        return 404, error_page(404, f"no page at {url.path!r}: the review queue is at /, the catalogue at "
                                    f"{PREFIX}/")
    cap, arguments = found
    for name, values in parse_qs(url.query, keep_blank_values=True).items():
        if len(values) != 1 or name in arguments:
            return 400, error_page(400, f"query parameter {name!r} given more than once", cap)
        arguments[name] = values[0]
    view = VIEWS.get(cap.verb)

    def make() -> str:
        answer = run(cap, arguments) if run else call(Workspace(root), cap, arguments)
        return view(answer) if view is not None else capability_page(cap, arguments, answer)

    return _guarded(make, cap)
