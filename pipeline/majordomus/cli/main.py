"""The one parser and the one dispatcher. Each command module under `majordomus/cli/commands/`
declares its parsers (`add_parsers`) and implements them; `main` maps `FatalError` to the exit
codes of DESIGN.md §5 and never lets a traceback reach a person."""
from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from majordomus import __version__
from majordomus.base.errors import INTERNAL, INTERRUPTED, OK, USAGE, FatalError
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.output import say

if TYPE_CHECKING:
    import argparse
    import signal
    from collections.abc import Callable, Sequence
    from typing import Any

    from majordomus.base import git
else:  # the C module, loaded with the interpreter: `signal` wraps its numbers in enums (~0.7 ms)
    import _signal as signal

# Command modules, in the order `majordomus --help` lists them, with the commands each declares
# (its NAMES): a command imports its own module only, not all sixteen and what they import. A
# module with VERBS (`knowledge`) declares, given the verb, only the verbs of that verb's module.
COMMANDS: dict[str, tuple[str, ...]] = {
    "init": ("init",),
    "capture": ("capture",),
    "session": ("session",),
    "work": ("start", "finish", "decision", "question", "checkpoint", "handover"),
    "history": ("history",),
    "context": ("context",),
    "knowledge": ("knowledge",),
    "mcp": ("mcp",),
    "serve": ("serve",),
    "openapi": ("openapi",),
    "doctor": ("check", "doctor", "watch"),
    "rules": ("rules",),
    "drain": ("drain",),
    "doit": ("doit",),
    "hook": ("hook",),
    "generate": ("generate",),
    "mergedriver": ("merge-driver",),
}

EPILOG = """exit codes: 0 ok, 1 internal error, 2 usage, 3 unknown id or episode, 4 refused input,
5 repository not initialised, 10 blocking finding, 11 advisory drift (watch)"""


HOOKS = ("session-start", "session-end", "pre-compact", "stop")


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            """One line, like every refusal: what was wrong and where the help is."""
            self.exit(USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")

        def _check_value(self, action: argparse.Action, value: Any) -> None:
            """A choice that is not one (a mistyped command or verb) names the nearest ones."""
            choices = action.choices
            if choices is None or value in choices or not isinstance(value, str):
                super()._check_value(action, value)
                return
            import difflib  # only for a word that is not a choice
            import importlib

            near = difflib.get_close_matches(value, [str(c) for c in choices], n=3)
            command = isinstance(action, argparse._SubParsersAction)  # a command or verb, else a value
            named = [f"`{self.prog} {n}`" if command else repr(n) for n in near]
            if command and "knowledge" in choices:  # `majordomus promote ID`: a verb of knowledge
                verbs = difflib.get_close_matches(
                    value, list(importlib.import_module("majordomus.cli.commands.knowledge").VERBS), n=1, cutoff=0.8)
                named = [f"`{self.prog} knowledge {v}`" for v in verbs] + named
            hint = f"did you mean {' or '.join(named)}?" if named else f"one of {', '.join(map(str, choices))}"
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}: {hint}")

        def _get_formatter(self) -> argparse.HelpFormatter:
            """argparse's formatter, told the width: without it, every `add_argument` makes one
            that imports shutil for the terminal's width, and with shutil bz2 and lzma (~8 ms)."""
            return self.formatter_class(prog=self.prog, width=_width())  # type: ignore[call-arg]

    return Parser


def _width() -> int:
    """The help text's width, as argparse would take it from `shutil.get_terminal_size`."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def build_parser(only: str | None = None, verb: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just the command module that declares that command, and with
    `verb`, just the module that declares that verb (fast path: a command pays for its own
    modules' imports, not for every command's)."""
    import argparse
    import importlib

    Parser = _parser_class()
    parser = Parser(prog="majordomus", description="A continuity layer for coding agents: an episode "
                    "ledger, and candidate knowledge derived from it at each episode boundary.",
                    epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"majordomus {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    owner = [name for name, names in COMMANDS.items() if only in names] or list(COMMANDS)
    for name in owner:
        module = importlib.import_module(f"majordomus.cli.commands.{name}")
        if verb is not None and verb in getattr(module, "VERBS", ()):
            module.add_parsers(sub, verb)
        else:
            module.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from_process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    hook = _hook_call(argv)
    if hook is not None:  # the hooks' modules, imported by the hooks alone
        # a Ctrl-C before hooks/run.py can record it is dropped, never a traceback (the hook
        # scripts ignore SIGINT until then too: `trap '' INT`)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            asked = _ask_early(*hook[:2])
            from majordomus.hooks import run  # imported while git answers

            code = run.run(*hook, asked=asked)
        finally:
            signal.signal(signal.SIGINT, previous)
        if from_process and not gc.isenabled():
            _leave(code)
        return code
    if argv == ["--version"]:  # what the parser's own action prints, without importing every command for it
        print(f"majordomus {__version__}")
        return OK
    direct = _reader_call(argv)
    if direct is not None:
        return _handled(direct)
    parser = build_parser(*argv[:2])
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        target = getattr(args, "help_parser", parser)
        target.print_help(sys.stderr)
        return USAGE
    return _handled(lambda: handler(args))


def _reader_call(argv: list[str]) -> Callable[[], int] | None:
    """A reader's `knowledge VERB` with its switches and value alone (`knowledge candidates
    --json`, `knowledge record ID`), run without building a parser (`readers.cli.direct`); None
    for anything else."""
    if len(argv) < 2 or argv[0] != "knowledge" or len(argv) > 5:
        return None
    from majordomus.cli.commands.knowledge import READERS, VERBS

    if VERBS.get(argv[1]) != READERS:
        return None
    from majordomus.readers.cli import direct, run

    found = direct(argv[1], argv[2:])
    return None if found is None else lambda: run(*found)


def _handled(handler: Callable[[], int | None]) -> int:
    """The command's exit code, with its failures mapped to DESIGN.md §5's codes in one line."""
    try:
        return int(handler() or 0)
    except FatalError as exc:
        say(f"majordomus: {exc.message}")
        return exc.code
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        return OK
    except OSError as exc:  # a full disk, a read-only folder: one line, and nothing half written
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"majordomus: {exc.strerror or exc}{where}: the command stopped and left nothing half "
              "written; fix that, then rerun it", file=sys.stderr)
        if os.environ.get("MJ_DEBUG") == "1":
            raise
        return INTERNAL
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        say(f"majordomus: internal error: {type(exc).__name__}: {exc} "
            "(rerun with MJ_DEBUG=1 for the traceback)")

        if os.environ.get("MJ_DEBUG") == "1":
            raise
        return INTERNAL


def _ask_early(name: str, hook_root: str | None) -> git.Running | None:
    """The start's one `git status`, started before the hook's modules are imported: git answers
    while Python imports (~30 ms), on another core. Only for the hook script's own root when it
    is an initialised checkout's top (the repository the start will be in, `hooks/run.py`)."""
    if name != "session-start" or not hook_root or not os.path.isdir(os.path.join(hook_root, ".ai", "repo")) \
            or not os.path.exists(os.path.join(hook_root, ".git")):
        return None
    from majordomus.base import git

    try:
        return git.ask_status(Path(hook_root).resolve())
    except OSError:
        return None  # no git: the start says so where it asks


def _leave(code: int) -> None:
    """End the process now, as the interpreter would but without its finalization: a start hook
    that ran its usual way (the cycle collector still off, `majordomus/__init__.py`: nothing but a
    prebuilt briefing checked and printed, no thread) has closed every file it wrote, and the
    finalization's collections over every module's objects were ~6% of its instructions. Its
    output is flushed first; when that fails, the interpreter ends it and says why."""
    if "threading" in sys.modules:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _hook_call(argv: list[str]) -> tuple[str, str | None, str] | None:
    """`hook NAME [--agent A] [--hook-root DIR]`, exactly as the hook scripts say it: run without
    building a parser at all (argparse and its help formatter cost ~10 ms of the start hook's
    100). Anything else, `hook --help` included, goes through the parser."""
    if len(argv) < 2 or argv[0] != "hook" or argv[1] not in HOOKS or len(argv) % 2:
        return None
    options = dict(zip(argv[2::2], argv[3::2]))
    if len(options) != (len(argv) - 2) // 2 or not set(options) <= {"--agent", "--hook-root"}:
        return None
    if list(options) not in ([], ["--hook-root"], ["--agent"], ["--agent", "--hook-root"]):
        return None
    return argv[1], options.get("--hook-root"), options.get("--agent", "claude")


if __name__ == "__main__":
    sys.exit(main())
