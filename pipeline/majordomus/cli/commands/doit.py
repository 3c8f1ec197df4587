"""majordomus doit ARGS: doit's own command line over the package's tasks in this repository."""
from __future__ import annotations

import argparse

from majordomus.base.errors import INTERNAL, OK, USAGE, FatalError
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


# doit's commands and options that read the task graph or run its tasks under this repository's
# dep file, and nothing else: no `--db-file`/`--backend` (another dep file, anywhere), `-o`/
# `--output-file` (a file anywhere), `-r`/`--reporter` (a class from any module), `--pdb`,
# `-n`/`-P` (processes), `--template` (format strings over task objects), `--check_file_uptodate`;
# no `clean` (removes targets: records), `strace`, `dumpdb`, `ignore`, `reset-dep`, `tabcompletion`.
# long option -> takes a value; a short option is its one letter
COMMANDS: dict[str, dict[str, bool]] = {
    "list": {"--all": False, "--quiet": False, "-q": False, "--status": False, "-s": False,
             "--private": False, "-p": False, "--deps": False, "--sort": True},
    "info": {"--no-status": False},
    "run": {"--always-execute": False, "-a": False, "--continue": False, "-c": False,
            "--verbosity": True, "-v": True, "--single": False, "-s": False,
            "--failure-verbosity": True},
    "forget": {"--follow-sub": False, "-s": False, "--disable-default": False, "--all": False, "-a": False},
    "help": {},
}


def refused_option(args: list[str]) -> str | None:
    """Why `args` is not a doit command line majordomus passes on, or None when it is: only the
    commands and options in COMMANDS, which write nothing but this repository's dep file and the
    tasks' own targets."""
    command, rest = (args[0], args[1:]) if args and args[0] in (*COMMANDS, *_OTHER) else ("run", args)
    if command not in COMMANDS:
        return (f"doit command {command!r} is not passed on: it writes or runs outside majordomus's "
                f"tasks; use one of {', '.join(COMMANDS)} (a task name alone `run`s it)")
    options = COMMANDS.get(command, COMMANDS["run"])
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg == "--" or not arg.startswith("-") or arg == "-":
            continue
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if name not in options:
                return _refusal(command, name)
            i += options[name] and "=" not in arg
            continue
        for n, letter in enumerate(arg[1:], 1):  # a cluster of short options: -as, -v2
            if f"-{letter}" not in options:
                return _refusal(command, f"-{letter}")
            if options[f"-{letter}"]:
                i += n == len(arg) - 1  # the value is the next argument unless the cluster holds it
                break
    return None


_OTHER = ("clean", "strace", "dumpdb", "ignore", "reset-dep", "tabcompletion")


def _refusal(command: str, option: str) -> str:
    allowed = " ".join(o for o in COMMANDS.get(command, COMMANDS["run"]) if o.startswith("--")) or "none"
    return (f"doit option {option} is not passed on by `majordomus doit {command}`: it would read or "
            f"write outside this repository's dep file and records; the options passed on: {allowed}")


def doit(args: list[str]) -> int:
    """Run doit's command line `args` over this repository's task graph: the commands and options
    `refused_option` passes on, nothing else."""
    why = refused_option(args)
    if why is not None:
        raise FatalError(why, USAGE)
    ws = open_workspace()
    report = engine.RunReport()
    code = engine.main(dodo.namespace(ws, report), args or ["list"], ws.dep_file, ws.wait_s(), root=ws.root,
                       report=report, quiet=False)
    # doit: 0 done, 1 a task failed, 2 a task raised, 3 a command or task name it does not know
    return {0: OK, 3: USAGE}.get(code, INTERNAL)
