"""majordomus doit ARGS: doit's own command line over the package's tasks in this repository."""
from __future__ import annotations

import argparse

from majordomus.base.errors import INTERNAL, OK, USAGE
from majordomus.cli.commands import Subparsers
from majordomus.store.workspace import open_workspace
from majordomus.tasks import dodo, engine

NAMES = ("doit",)

EPILOG = """examples:
  majordomus doit list --all              every task: evidence, render, derive, move, drain
  majordomus doit info render:<id>        what one record depends on, and whether it is up to date
  majordomus doit run derive:<episode>    derive one episode, as its close does
  majordomus doit forget render:<id>      make doit re-render one record on the next run"""


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("doit", help="doit's own commands over majordomus's task graph (list, info, run, …)",
                       description="Pass ARGS to doit's command line with the tasks majordomus runs at each "
                       "episode boundary (evidence:<episode>, render:<id>, derive:<episode>, move:…, "
                       "drain), under the same dep file and lock as every majordomus command.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("args", nargs=argparse.REMAINDER, help="doit's arguments (default: list)")
    p.set_defaults(handler=lambda a: doit(a.args))


def doit(args: list[str]) -> int:
    """Run doit's command line `args` over this repository's task graph."""
    ws = open_workspace()
    report = engine.RunReport()
    code = engine.main(dodo.namespace(ws, report), args or ["list"], ws.dep_file, ws.wait_s(), root=ws.root,
                       report=report, quiet=False)
    # doit: 0 done, 1 a task failed, 2 a task raised, 3 a command or task name it does not know
    return {0: OK, 3: USAGE}.get(code, INTERNAL)
