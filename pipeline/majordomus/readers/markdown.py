"""A small Markdown renderer for record bodies on the cockpit's pages: text from a repository, so
every character is escaped before any markup is added, and nothing that could load or run
anything is ever produced (no raw HTML, no images, no links: `[text](url)` shows its text and its
address as text).

Blocks: paragraphs, ATX headings (shifted down `shift` levels, so a record's `# Evidence` sits
under the page's own headings), fenced code, `-`/`*`/`+` and `1.` lists, `>` quotes, `---` rules.
Inline: `code`, **strong**, *emphasis* and _emphasis_.
"""
from __future__ import annotations

import html
import re

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_BULLET = re.compile(r"^[ \t]{0,3}[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"^[ \t]{0,3}\d{1,9}[.)][ \t]+(.*)$")
_QUOTE = re.compile(r"^[ \t]{0,3}>[ \t]?(.*)$")
_RULE = re.compile(r"^[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)(.*)$")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EM = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


def inline(text: str) -> str:
    """One line's inline markup, every character escaped first."""
    parts = re.split(r"(`+)(.+?)\1", text)
    out = []
    # re.split with two groups yields: text, ticks, code, text, ticks, code, ..., text
    for i in range(0, len(parts), 3):
        plain = html.escape(parts[i], quote=True)
        plain = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", plain)
        plain = _STRONG.sub(r"<strong>\1</strong>", plain)
        plain = _EM.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", plain)
        out.append(plain)
        if i + 2 < len(parts):
            out.append(f"<code>{html.escape(parts[i + 2], quote=True)}</code>")
    return "".join(out)


def render(text: str, shift: int = 2) -> str:
    """`text` (Markdown) as HTML."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    list_tag = ""
    quote: list[str] = []

    def flush() -> None:
        nonlocal list_tag
        if para:
            out.append("<p>" + "<br>\n".join(inline(p) for p in para) + "</p>")
            para.clear()
        if items:
            out.append(f"<{list_tag}>" + "".join(f"<li>{inline(i)}</li>" for i in items) + f"</{list_tag}>")
            items.clear()
            list_tag = ""
        if quote:
            out.append("<blockquote>" + render("\n".join(quote), shift) + "</blockquote>")
            quote.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            marker, code = fence.group(1), []
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith(marker):
                code.append(lines[i])
                i += 1
            out.append("<pre><code>" + html.escape("\n".join(code), quote=True) + "</code></pre>")
            i += 1
            continue
        if not line.strip():
            flush()
        elif (heading := _HEADING.match(line)) is not None:
            flush()
            level = min(6, len(heading.group(1)) + shift)
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif _RULE.match(line) and not para:
            flush()
            out.append("<hr>")
        elif (quoted := _QUOTE.match(line)) is not None:
            if not quote:
                flush()
            quote.append(quoted.group(1))
        elif (bullet := _BULLET.match(line)) is not None or (number := _NUMBERED.match(line)) is not None:
            tag = "ul" if bullet is not None else "ol"
            if para or quote or (items and list_tag != tag):
                flush()
            list_tag = tag
            items.append((bullet or number).group(1))  # type: ignore[union-attr]
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + line.strip()
        else:
            if items or quote:
                flush()
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)
