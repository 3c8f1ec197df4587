"""Record bodies as HTML on the cockpit's pages, through markdown-it-py (CommonMark, a linear
parser: a body of `*a ` repeated 30,000 times renders in a fraction of a second, where the
regular expressions this module held before backtracked for seconds).

A body is text from a repository, so nothing that could load or run anything ever comes out: raw
HTML is escaped (`html: False`), links, autolinks and images are not parsed (`[text](url)` stays
as it is written), and every attribute is dropped (no `href`, `src`, `class`, `start`). Headings
are shifted down `shift` levels, so a record's `# Evidence` sits under the page's own headings.

Depth is bounded twice: markdown-it-py's own `maxNesting` (its block parser recurses once a
level), and before it a scan of each line's leading quote and list markers: a body nested deeper
than DEEPEST is shown as it is written, escaped, in one `<pre>` block, so that nothing in it is
dropped where markdown-it-py would stop descending.
"""
from __future__ import annotations

import html
import re
from functools import lru_cache

from markdown_it import MarkdownIt

DEEPEST = 16  # quote and list levels rendered as Markdown; deeper, the body is shown as written
_MARKERS = re.compile(r"[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "xhtmlOut": False, "maxNesting": DEEPEST * 2 + 4}).disable(
        ["link", "image", "autolink", "html_inline", "html_block"])


def depth(text: str) -> int:
    """The deepest nesting of quotes and lists any line opens (an upper bound: indentation counts
    a level every two columns)."""
    deepest = 0
    for line in text.split("\n"):
        markers, at = 0, 0
        while (found := _MARKERS.match(line, at)) is not None:
            markers += 1
            at = found.end()
        indent = len(line) - len(line.lstrip(" \t"))
        deepest = max(deepest, markers + indent // 2)
    return deepest


def render(text: str, shift: int = 2) -> str:
    """`text` (Markdown) as HTML."""
    if depth(text) > DEEPEST:
        return (f"<p><em>nested deeper than {DEEPEST} levels: shown as written</em></p>"
                f"<pre>{html.escape(text, quote=True)}</pre>")
    md = _parser()
    tokens = md.parse(text)
    stack = list(tokens)
    while stack:
        token = stack.pop()
        token.attrs = {}
        if token.type == "fence":
            token.info = ""
        if token.tag in ("h1", "h2", "h3", "h4", "h5", "h6") and token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + shift)}"
        stack.extend(token.children or ())
    return str(md.renderer.render(tokens, md.options, {})).strip("\n")
