"""The opening snapshot's template is filled as `string.Template.substitute` fills it (without
importing `string`, which compiles its pattern on every start)."""
from __future__ import annotations

from string import Template

import pytest

from majordomus.base.resources import data_dir
from majordomus.context.snapshot import substitute

VALUES = {"episode": "e$1", "opened": "2026-12-03T05:00:00Z", "source": "startup $$", "by": "hook",
          "branch": "feature/ünï", "head": "(no commit yet)", "others": "none", "_a1": "Z", "by_": "Q"}


@pytest.mark.parametrize("template", [
    (data_dir("templates") / "opening-snapshot.md.tmpl").read_text(encoding="utf-8"),
    "a$$b", "a$$$episode c", "$episode$by.x", "$$", "x$$$$y", "$_a1 $by_ $by-", "", "no placeholder",
])
def test_the_template_is_filled_as_string_template_fills_it(template: str) -> None:
    assert substitute(template, **VALUES) == Template(template).substitute(**VALUES)


@pytest.mark.parametrize("template", ["$1", "a $ b", "x$", "$é"])
def test_a_dollar_before_no_name_is_refused_as_there(template: str) -> None:
    with pytest.raises(ValueError):
        Template(template).substitute(**VALUES)
    with pytest.raises(ValueError):
        substitute(template, **VALUES)


def test_an_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        substitute("$nobody", **VALUES)
