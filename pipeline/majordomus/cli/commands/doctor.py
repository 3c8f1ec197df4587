"""majordomus check | doctor | watch: rule dispatch over the effective set (vendor + project)."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from majordomus.base.errors import FatalError
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.output import emit_json, say, show
from majordomus.cli.commands import Subparsers

if TYPE_CHECKING:
    from majordomus.knowledge.worktree import Worktree

NAMES = ("check", "doctor", "watch")

HELP = {
    "check": ("run the rules dispatched from check (a pre-commit gate)",
              "Run the rules of the effective set that name `check`: fast, blocking, fit for a "
              "pre-commit hook. Exit 10 on a blocking finding, else 0."),
    "doctor": ("run every rule dispatched from doctor, and check the rule machinery",
               "Run the rules that name `doctor`, check that every validator is declared by a rule "
               "and every rule's validator exists, and note malformed ledger lines, an open episode "
               "whose end never came (past session.orphan_after_minutes), a non-empty trunk outbox, "
               "a vendored copy that differs, and the run's time against its budget. "
               "Exit 10 on a blocking finding, else 0 (advisory findings warn)."),
    "watch": ("run the rules dispatched from watch: 0 clean, 10 blocking, 11 advisory drift",
              "Run the rules that name `watch`, once, for a status line, a cron job or CI. Exit 10 "
              "on a blocking finding, 11 when the findings are advisory only, else 0."),
}


def add_parsers(sub: Subparsers) -> None:
    for command, (short, long) in HELP.items():
        p = sub.add_parser(command, help=short, description=long + " MJ_TIMING=1 prints each "
                           "rule's time.")
        p.add_argument("--json", action="store_true", help="print the findings as data")
        p.set_defaults(handler=lambda a, c=command: dispatch(c, a.json))


def dispatch(command: str, as_json: bool) -> int:
    """Run `command`'s rules; print each finding with its reproduce and fix; exit by class."""

    ahead = _asked_ahead() if command == "doctor" else None
    from majordomus.rules import dispatch as rules_dispatch
    from majordomus.store.workspace import open_workspace

    try:
        ws = open_workspace()
        ws.warn = False  # the policy's problems are findings here, each with its fix
        with _no_cycle_collection():
            report = rules_dispatch.run(ws, command, worktree=ahead)
    finally:
        if ahead is not None:
            ahead.end()  # a run that stopped before its rules read git's word (idempotent)
    text, talk = rules_dispatch.render_text(report)
    if as_json:
        emit_json(rules_dispatch.as_data(report))
    else:
        show(text)
    for line in talk:
        say(line)
    return report.exit_code


def _asked_ahead() -> Worktree | None:
    """git's word on the files under `.ai/repo/` (what doctor's kept judgement is keyed by), asked
    first thing, before the rules and what they read are imported: git stats the files while
    they load. None outside an initialised checkout (opening the workspace then says why)."""
    from majordomus.knowledge.worktree import Worktree
    from majordomus.store.root import checkout

    try:
        root = checkout()
    except FatalError:
        return None
    return Worktree(root, root / ".ai" / "local" / "state").start()


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cycle collector paused for one run of the rules: a run decodes the index's views (at a
    million ledger lines, hundreds of thousands of containers, all alive until it ends) and makes
    next to no cyclic garbage, so each collection walks the growing heap for nothing (15-20% of
    doctor's CPU time at that size). Reference counting frees everything else as usual."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def check(as_json: bool = False) -> int:
    return dispatch("check", as_json)


def doctor(as_json: bool = False) -> int:
    return dispatch("doctor", as_json)


def watch(as_json: bool = False) -> int:
    return dispatch("watch", as_json)
