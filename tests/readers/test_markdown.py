"""The record-body renderer of the cockpit: every character escaped before any markup is added;
no raw HTML, link, image or script ever comes out, whatever the record says."""
from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from majordomus.readers.markdown import render

TAGS = {"p", "br", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "strong", "em", "hr"}


def test_the_blocks_and_the_inline_markup() -> None:
    html = render("Tabs <b>x</b> & co\n\nWhy: **one** *thing*, `a<b`, [x](javascript:alert(1))\n\n"
                  "# Evidence\n\n- one\n- two\n  more\n\n1. first\n\n> quoted\n\n```\n<script>\n```\n---\n")
    assert html == (
        "<p>Tabs &lt;b&gt;x&lt;/b&gt; &amp; co</p>\n"
        "<p>Why: <strong>one</strong> <em>thing</em>, <code>a&lt;b</code>, x (javascript:alert(1))</p>\n"
        "<h3>Evidence</h3>\n"
        "<ul><li>one</li><li>two more</li></ul>\n"
        "<ol><li>first</li></ol>\n"
        "<blockquote><p>quoted</p></blockquote>\n"
        "<pre><code>&lt;script&gt;</code></pre>\n"
        "<hr>")


@given(st.text(alphabet=st.sampled_from(list("<>&\"'`*_#-=[]()!:/ \nabsciptrg1.")), max_size=200))
def test_nothing_but_its_own_tags_ever_comes_out(text: str) -> None:
    html = render(text)
    tags = set(re.findall(r"</?([a-zA-Z0-9]+)", html))
    assert tags <= TAGS, tags
    assert not re.search(r"<[a-zA-Z0-9]+\s", html)  # no tag of ours carries an attribute: no href, src, on…
    assert not re.search(r"<(?![/a-z])", html)  # every < that is not one of ours was escaped
