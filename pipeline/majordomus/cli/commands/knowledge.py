"""majordomus knowledge: derive, and the readers and acts of the knowledge store, each verb declared
by the module that implements it."""
from __future__ import annotations

import importlib

from majordomus.cli.commands import Subparsers

NAMES = ("knowledge",)

# Each verb of `knowledge` and the function that declares it: a verb imports the module that
# declares it and what that imports, not every verb's. In the order `knowledge --help` lists them;
# tests/cli/test_main.py checks the table against the parser.
READERS = "majordomus.readers.cli:add_verbs"  # generated from readers.knowledge_base's CAPABILITIES
_ACTS = "majordomus.cli.commands.review:review_verbs"
VERBS: dict[str, str] = {
    "derive": "majordomus.cli.commands.derive:derive_verbs",
    "candidates": READERS, "record": READERS, "status": READERS, "search": READERS, "edges": READERS,
    "promote": _ACTS, "reject": _ACTS, "reverify": _ACTS, "retire": _ACTS, "dispute": _ACTS, "check": _ACTS,
    "review": "majordomus.cli.commands.reviewing:add_review",  # the walk through the queue at a terminal
    "export": "majordomus.cli.commands.export:export_verbs",
    "stale": "majordomus.cli.commands.stale:stale_verbs",  # verified records whose anchors changed
}


def add_parsers(sub: Subparsers, verb: str | None = None) -> None:
    p = sub.add_parser("knowledge", help="derive, read and review knowledge records",
                       description="The knowledge store: candidates derived at episode boundaries, "
                       "promoted or rejected by a person.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    wanted = [VERBS[verb]] if verb in VERBS else list(dict.fromkeys(VERBS.values()))
    for where in wanted:
        module, _, declare = where.partition(":")
        if where == READERS and verb in VERBS:  # a reader declares its own verb alone
            getattr(importlib.import_module(module), declare)(verbs, verb)
        else:
            getattr(importlib.import_module(module), declare)(verbs)
    p.set_defaults(help_parser=p)
