"""majordomus openapi: the OpenAPI 3.1 document of the reader capabilities."""
from __future__ import annotations

from majordomus.base.errors import OK
from majordomus.base.output import emit_json
from majordomus.cli.commands import Subparsers
from majordomus.readers.openapi import document

NAMES = ("openapi",)


def add_parsers(sub: Subparsers) -> None:
    o = sub.add_parser("openapi", help="print the OpenAPI 3.1 document of the readers",
                       description="The OpenAPI 3.1 document generated from the reader declarations, "
                       "as `majordomus serve` serves it at /openapi.json.")
    o.set_defaults(handler=lambda a: openapi())


def openapi() -> int:
    """Print the OpenAPI document."""

    emit_json(document())
    return OK
