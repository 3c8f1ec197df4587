"""What every cockpit page shares: the style sheet (inline, admitted by its hash in the
Content-Security-Policy), the security headers, escaping (`e`, the only way a value reaches a page),
short shas, and the document around a page's body. Nothing here reads a repository."""
from __future__ import annotations

import base64
import hashlib
import html
import re
from typing import Any

from majordomus import __version__

CONTENT_TYPE = "text/html; charset=utf-8"
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

STYLE = """
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fdfdfc;--muted:#5b6470;--line:#d8dde3;--accent:#0b5cad;--card:#f3f5f7}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8ea;--bg:#15181b;--muted:#9aa4ae;--line:#33393f;--accent:#79b8ff;--card:#1d2125}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header,main,footer{max-width:60rem;margin:0 auto;padding:0 1rem}
header{border-bottom:1px solid var(--line);padding-top:.75rem;padding-bottom:.5rem}
nav a{margin-right:.75rem}
footer{color:var(--muted);font-size:.85rem;border-top:1px solid var(--line);margin-top:2rem;padding-top:.5rem;padding-bottom:1rem}
a{color:var(--accent)}
h1{font-size:1.5rem;line-height:1.25;margin:1rem 0 .25rem;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
h3,h4,h5,h6{font-size:1.05rem;margin:1rem 0 .25rem}
p.lead{color:var(--muted);margin-top:0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:var(--card);padding:.5rem;overflow-x:auto;white-space:pre-wrap}
dl{display:grid;grid-template-columns:minmax(7rem,max-content) 1fr;gap:.25rem 1rem;margin:.5rem 0}
dt{color:var(--muted)}
dd{margin:0;overflow-wrap:anywhere;min-width:0}
td a{white-space:nowrap}
dl dl{grid-template-columns:minmax(6rem,max-content) 1fr}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line);overflow-wrap:break-word}
th{color:var(--muted);font-weight:600;font-size:.85rem}
.none{color:var(--muted);font-style:italic}
.body{border-left:3px solid var(--line);padding-left:.75rem}
.error{border:1px solid #c62828;padding:.5rem .75rem;border-radius:4px}
form{display:flex;gap:.5rem;flex-wrap:wrap;margin:.25rem 0}
input{font:inherit;padding:.25rem .4rem;min-width:0;flex:1 1 12rem}
button{font:inherit}
main{overflow-wrap:anywhere}
.card{border:1px solid var(--line);border-radius:6px;padding:.25rem 1rem .75rem;margin:1rem 0;background:var(--bg)}
.card h2{margin-top:.75rem;overflow-wrap:anywhere}
.meta{color:var(--muted);font-size:.9rem;margin:.25rem 0;overflow-wrap:anywhere}
.evidence{margin:.5rem 0;padding-left:1.25rem}
.evidence li{overflow-wrap:anywhere}
.ref{color:var(--muted);font-size:.85rem}
.act pre{margin:.25rem 0}
details{margin:.5rem 0}
summary{cursor:pointer;color:var(--muted)}
.lines li{overflow-wrap:anywhere}
@media (max-width:40rem){
 dl{grid-template-columns:1fr}
 dt{font-size:.85rem;margin-top:.35rem}
 table,thead,tbody,tr,th,td{display:block}
 thead{display:none}
 tr{border:1px solid var(--line);border-radius:4px;margin:.5rem 0;padding:.25rem .5rem;background:var(--card)}
 td{border:0;padding:.15rem 0}
 td::before{content:attr(data-label);display:block;color:var(--muted);font-size:.8rem}
}
""".strip()

_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")
HEADERS = {
    "Content-Security-Policy": (f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src 'none'; "
                                "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def e(value: Any) -> str:
    """Escaped text: the only way a value reaches a page."""
    return html.escape(str(value), quote=True)


def short(value: str) -> str:
    """A full sha as a person reads it: its first 12 characters, the whole in the tooltip."""
    if _SHA.fullmatch(value):
        return f'<code title="{e(value)}">{e(value[:12])}</code>'
    return e(value)


def document(title: str, body: str, crumbs: list[tuple[str, str | None]]) -> str:
    """A whole page: `body` (HTML) under a trail of `crumbs` (text, link or None)."""
    trail = " › ".join(f'<a href="{e(href)}">{e(text)}</a>' if href else e(text) for text, href in crumbs)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{e(title)} · majordomus</title><style>{STYLE}</style></head>\n<body>"
            f"<header><nav>{trail}</nav></header>\n<main>\n{body}\n</main>\n"
            f"<footer>majordomus {e(__version__)} · read-only · <a href=\"/\">review queue</a> · "
            "<a href=\"/cockpit/knowledge_base/status\">status</a> · <a href=\"/cockpit/\">the reader module</a> · "
            "<a href=\"/openapi.json\">openapi.json</a></footer></body></html>\n")
