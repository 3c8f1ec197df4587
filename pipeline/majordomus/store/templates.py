"""Templates are package data rendered with jinja2: StrictUndefined, trim_blocks, and one
escaping filter (`yaml`) for every free-text scalar, so a quotation mark never cuts a record."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from majordomus.base import yamlio
from majordomus.base.resources import data_dir


@lru_cache(maxsize=1)
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["yaml"] = yamlio.scalar
    env.filters["oneline"] = lambda value: " ".join(str(value).split())  # free text on one line of prose
    return env


def render(name: str, context: dict[str, Any]) -> str:
    return str(environment().get_template(name).render(**context))
