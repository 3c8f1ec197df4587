"""The record-body renderer of the cockpit (markdown-it-py): every character escaped; no raw HTML,
link, image, attribute or script ever comes out, whatever the record says; headings shifted under
the page's own; a body nested too deep shown as written, nothing of it dropped."""
from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from majordomus.readers.markdown import DEEPEST, render

TAGS = {"p", "br", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "strong", "em", "hr"}


def test_the_blocks_and_the_inline_markup() -> None:
    html = render("Tabs <b>x</b> & co\n\nWhy: **one** *thing*, `a<b`, [x](javascript:alert(1))\n\n"
                  "# Evidence\n\n- one\n- two\n  more\n\n3. first\n\n> quoted\n\n```js\n<script>\n```\n---\n"
                  "<http://example.org> ![i](http://example.org/i.png)")
    assert html == (
        "<p>Tabs &lt;b&gt;x&lt;/b&gt; &amp; co</p>\n"
        "<p>Why: <strong>one</strong> <em>thing</em>, <code>a&lt;b</code>, [x](javascript:alert(1))</p>\n"
        "<h3>Evidence</h3>\n"
        "<ul>\n<li>one</li>\n<li>two\nmore</li>\n</ul>\n"
        "<ol>\n<li>first</li>\n</ol>\n"
        "<blockquote>\n<p>quoted</p>\n</blockquote>\n"
        "<pre><code>&lt;script&gt;\n</code></pre>\n"
        "<hr>\n"
        "<p>&lt;http://example.org&gt; ![i](http://example.org/i.png)</p>")


def test_a_body_nested_too_deep_is_shown_as_written() -> None:
    fits = render("> " * DEEPEST + "deepest")
    assert fits.count("<blockquote>") == DEEPEST and "deepest" in fits
    deeper = render("> " * 1200 + "hidden <b>")
    assert "<blockquote>" not in deeper and "hidden &lt;b&gt;" in deeper and deeper.count("&gt; ") == 1200


@given(st.text(alphabet=st.sampled_from(list("<>&\"'`*_#-=[]()!:/ \nabsciptrg1.")), max_size=200))
def test_nothing_but_its_own_tags_ever_comes_out(text: str) -> None:
    html = render(text)
    tags = set(re.findall(r"</?([a-zA-Z0-9]+)", html))
    assert tags <= TAGS, tags
    assert not re.search(r"<[a-zA-Z0-9]+\s", html)  # no tag of ours carries an attribute: no href, src, on…
    assert not re.search(r"<(?![/a-z])", html)  # every < that is not one of ours was escaped
