"""The terminal under `majordomus knowledge review`: one key read without Enter, text wrapped to
the terminal's width, and the person's `$EDITOR` run as git runs it.

- A key: the terminal is put in cbreak mode (no line editing, no echo; Ctrl-C still interrupts)
  for the one read, and restored after it — on return, on Ctrl-C, and on SIGTERM or SIGHUP, which
  end the review as Ctrl-C does. Standard input that is not a terminal (a pipe, a file) is read a
  line at a time instead: its first character is the key.
- Wrapping: each paragraph to the terminal's width, at spaces only (a word longer than the line
  stays whole), each line keeping its own indentation.
- The editor: `$VISUAL`, else `$EDITOR`, split as a shell would (an unbalanced quote is refused in
  one line, exit 2). While it runs, SIGINT and SIGQUIT are ignored here, as git does: Ctrl-C
  reaches the editor, whose keys they are, and never ends the review under it.
"""
from __future__ import annotations

import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import termios
import textwrap
import tty
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from majordomus.base.errors import USAGE, FatalError
from majordomus.base.output import show


class EndOfInput(Exception):
    """Ctrl-D: the person has nothing more to say; the review ends where it is."""


def say(text: str = "") -> None:
    """One message to the person, wrapped to the terminal's width, its control characters escaped
    (stored text is shown)."""
    show("\n".join(wrap(text)) + "\n")
    sys.stdout.flush()


def interactive() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def width() -> int:
    return max(30, shutil.get_terminal_size((80, 24)).columns - 1)


def wrap(text: str, indent: str = "", hang: str | None = None) -> list[str]:
    """`text` wrapped to the terminal's width at spaces, never inside a word; every line keeps its
    own leading whitespace, `indent` before it (`hang` on a paragraph's later lines)."""
    out: list[str] = []
    for raw in text.split("\n"):
        own = raw[:len(raw) - len(raw.lstrip(" \t"))]
        if not raw.strip():
            out.append("")
            continue
        first = indent + own
        later = (hang if hang is not None else indent) + own
        out += textwrap.wrap(raw.strip(), width(), initial_indent=first, subsequent_indent=later,
                             break_long_words=False, break_on_hyphens=False, expand_tabs=False,
                             replace_whitespace=False, drop_whitespace=True) or [first.rstrip()]
    return out


def ask(prompt: str) -> str:
    """One line from the person; the end of input (Ctrl-D) ends the review."""
    try:
        return input(prompt)
    except EOFError:
        say()
        raise EndOfInput from None


def _ended(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM, SIGHUP: the review ends as Ctrl-C ends it, the terminal restored


@contextmanager
def _cbreak(fd: int) -> Iterator[None]:
    saved = termios.tcgetattr(fd)
    handlers = {s: signal.signal(s, _ended) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def key(prompt: str) -> str:
    """One key from the person, lower-cased, without Enter at a terminal; "" for Enter or a key
    that is not a letter (an arrow's escape sequence is read whole and ignored)."""
    if not interactive():
        return ask(prompt).strip().lower()[:1]
    fd = sys.stdin.fileno()
    with _cbreak(fd):
        show(prompt)
        sys.stdout.flush()
        first = os.read(fd, 1)
        rest = b""
        if first == b"\x1b" or first >= b"\x80":  # an escape sequence or a multi-byte character
            while select.select([fd], [], [], 0.05)[0]:
                rest += os.read(fd, 16)
    if first in (b"", b"\x04"):
        say()
        raise EndOfInput
    char = (first + rest).decode("utf-8", errors="replace")
    shown = char if char.isprintable() else ""
    say(shown)
    return char.lower() if len(char) == 1 and char.isalpha() else ""


def editor_command() -> list[str] | None:
    """The person's editor as an argument list; None when none is set. An unparsable one (an
    unbalanced quote) is refused: exit 2, one line naming it."""
    name = "VISUAL" if os.environ.get("VISUAL", "").strip() else "EDITOR"
    command = os.environ.get(name, "")
    if not command.strip():
        return None
    try:
        return shlex.split(command)
    except ValueError as exc:
        raise FatalError(f"${name} {command!r} cannot be split into a command ({exc}): fix it "
                         f"(for example {name}=nano) and run the review again", USAGE) from None


def _default_signals() -> None:
    """In the editor's process, before it runs: Ctrl-C and Ctrl-\\ do what they do by default
    (an editor sets its own handlers; ignoring them would be inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def run_editor(path: Path) -> bool:
    """Open `path` in the person's editor, SIGINT and SIGQUIT ignored here while it runs; False
    (and one line saying why) when there is none, it did not start or it failed."""
    editor = editor_command()
    if editor is None:
        say("No editor: set $EDITOR (for example EDITOR=nano) and run the review again.")
        return False
    quiet = (signal.SIGINT, signal.SIGQUIT)
    saved = {s: signal.signal(s, signal.SIG_IGN) for s in quiet}  # before the editor starts: no window
    try:
        proc = subprocess.Popen([*editor, str(path)], preexec_fn=_default_signals)  # noqa: PLW1509 - one thread here
        code = proc.wait()
    except OSError as exc:
        say(f"The editor {editor[0]!r} did not start: {exc.strerror or exc}.")
        return False
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    if code != 0:
        how = f"was ended by {signal.Signals(-code).name}" if code < 0 else f"exited {code}"
        say(f"The editor {how}: nothing taken from it.")
        return False
    return True
