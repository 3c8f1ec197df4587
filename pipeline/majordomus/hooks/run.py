"""The Python side of the agents' hooks: read the agent's JSON on stdin, act on the repository it
names, and never block the agent.

`majordomus hook BOUNDARY [--agent A] [--hook-root DIR]`: the registration says which agent it
was written for (Claude Code's when it says nothing), or the plugin's hook does (`MAJORDOMUS_HOOK_VIA`); the adapter of the agent actually running
the hook (hooks/providers.py) reads the payload and shapes the briefing. Every hook returns 0. A
failure is recorded as `provider.event.failed` (when the repository is initialised) and reported
as one line on stderr; no traceback reaches the agent.

A hook never waits for ever: all its lock waits together end `HOOK_WAIT_S` after it started
(`Workspace.deadline`); past it the work is not done, the failure is recorded, and a derivation
it could not run is picked up by the next boundary (`session/pending.py`). A SIGINT or SIGTERM
(Ctrl-C in the agent, the agent's hook timeout) stops the hook where it is, is recorded as its
failure, and the hook still exits 0. The hook scripts ignore SIGINT until Python is ready to
handle it (`trap '' INT`), so one arriving while the interpreter starts is no traceback.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from majordomus.base import git
from majordomus.base.errors import OK, FatalError
from majordomus.base.ids import check_id
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.output import escape, say
from majordomus.evidence import episodes
from majordomus.hooks import providers
from majordomus.hooks.payload import HookInputError, read_stdin
from majordomus.hooks.providers import COMPACT, END, START, STOP, Provider
from majordomus.session import pending
from majordomus.store.workspace import HOOK_WAIT_S, Workspace, find_root, wait_bound

if TYPE_CHECKING:
    import signal
    from types import FrameType
    from typing import Any
else:  # `signal` wraps this module's numbers in enums, ~0.7 ms of every hook's imports
    import _signal as signal

# Set to "plugin" by the plugin's hook script (plugins/majordomus/): a repository that has its own
# registration (`capture install`) records each boundary through that one, and the plugin's run is
# a no-op, so an agent running both records every boundary once.
VIA = "MAJORDOMUS_HOOK_VIA"


NAMES: dict[int, str] = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}  # the signals a hook handles


class Interrupted(KeyboardInterrupt):
    """A signal stopped the hook (a BaseException: no `except Exception` on the way swallows it)."""


def _stop(signum: int, frame: FrameType | None) -> None:
    for caught in (signal.SIGINT, signal.SIGTERM):  # a second signal must not cut the recording short
        signal.signal(caught, signal.SIG_IGN)
    raise Interrupted(NAMES.get(signum, f"signal {signum}"))


def _root(candidates: list[str | None]) -> Path | None:
    """The first candidate inside an initialised repository; else the first inside any repository
    (to name it as not initialised); else None."""
    found: list[Path] = []
    for candidate in candidates:
        if isinstance(candidate, str) and candidate and "\x00" not in candidate and Path(candidate).is_dir():
            root = find_root(Path(candidate))
            if root is not None and (root / ".ai" / "repo").is_dir():
                return root
            if root is not None:
                found.append(root)
    return found[0] if found else None


def run(name: str, hook_root: str | None = None, agent: str = "claude", asked: git.Running | None = None) -> int:
    """Run hook `name` as registered for `agent`; always 0. `asked`: the start's `git status`,
    started by `cli/main.py` in `hook_root` before this module was imported.

    A signal raises `Interrupted` wherever the hook is; wherever that is, it ends as a recorded
    failure and exit 0: inside the work (`_run`), between the handlers' installation and the work
    or while they are put back (here), and inside a finalizer, where Python would print it as an
    ignored exception with its traceback (`_unraisable`: recorded once the hook is done)."""
    started = time.monotonic()
    before: dict[signal.Signals, Any] = {}
    hook_before = sys.unraisablehook
    try:
        sys.unraisablehook = _unraisable
        for caught in (signal.SIGINT, signal.SIGTERM):
            before[caught] = signal.signal(caught, _stop)
        try:
            code = _run(name, hook_root, agent, started, asked)
        finally:
            for caught, handler in before.items():
                signal.signal(caught, handler)
        if _SWALLOWED:  # a signal that landed in a finalizer: the work went on to its end
            _record_interrupt(None, name, hook_root, f"{_SWALLOWED.pop()} (it landed in a clean-up; "
                              "the hook's work went on to its end)")
        return code
    except Interrupted as stop:  # landed outside the work: before it began or as it ended
        _record_interrupt(None, name, hook_root, str(stop))
        return OK
    finally:
        sys.unraisablehook = hook_before
        _SWALLOWED.clear()
        _reap(asked)


def _reap(asked: git.Running | None) -> None:
    """End the early `git status` when the start did not read it (another repository, a failure,
    a signal): killed if still running (it only reads), never waited for."""
    if asked is not None:
        try:
            asked.wait(0)
        except (OSError, git.GitError):
            pass


_SWALLOWED: list[str] = []  # the signals a finalizer swallowed in this hook


def _unraisable(unraisable: Any) -> None:
    """A signal that raised inside a finalizer (`__del__`, a generator closed by the collector)
    cannot stop the hook there: remember it for the record instead of printing a traceback."""
    if isinstance(unraisable.exc_value, Interrupted):
        _SWALLOWED.append(str(unraisable.exc_value))
        return
    sys.__unraisablehook__(unraisable)


def _record_interrupt(ws: Workspace | None, name: str, hook_root: str | None, stop: str) -> None:
    if ws is None:  # stopped before the repository was known: record it where the hook lives
        root = _root([hook_root, os.getcwd()])
        ws = Workspace(root, deadline=time.monotonic() + 1) if root and (root / ".ai/repo").is_dir() else None
    _failed(ws, name, f"interrupted by {stop}: stopped where it was, nothing half written; "
                      "a derivation it did not finish is run by the next boundary")


def _run(name: str, hook_root: str | None, agent: str, started: float, asked: git.Running | None = None) -> int:
    ws = None
    payload: dict[str, Any] = {}
    try:
        problem = None
        try:
            payload = read_stdin(started + wait_bound(HOOK_WAIT_S))
        except HookInputError as exc:
            problem = str(exc)
        if agent not in providers.PROVIDERS:
            problem = problem or f"unknown agent {agent!r} (one of {', '.join(providers.PROVIDERS)})"
            agent = "claude"
        # only Claude Code's registration is run by other agents (Copilot CLI, Cursor)
        actual = (providers.caller(os.environ, payload) if agent == "claude" else None) or agent
        provider = providers.PROVIDERS[actual]
        # the repository the hook belongs to comes first: its script's own (the agent may have
        # moved elsewhere, and the payload's cwd then names that place), then what the agent names
        root = _root([hook_root, *provider.roots(payload, os.environ), os.getcwd()])
        if root is None or not (root / ".ai" / "repo").is_dir():
            where = root or hook_root or os.getcwd()
            say(f"majordomus: {name}: {where} is not initialised, nothing recorded: run `majordomus init`")
            return OK
        ws = Workspace(root, deadline=started + wait_bound(HOOK_WAIT_S))
        if problem is not None:
            _failed(ws, name, problem)
            return OK
        if actual != agent or os.environ.get(VIA) == "plugin":
            # imported only for a hook another registration (or the plugin's) may also run
            from majordomus.store import agents

            if agents.installed(root, agents.AGENTS[actual]):
                # the agent's own registration runs this boundary too, or the repository's when
                # the plugin's hook runs: one record, not two
                return OK
        if asked is not None and hook_root is not None and Path(hook_root).resolve() != root:
            asked = None  # asked of another folder than the repository this start is in
        _dispatch(ws, provider, name, payload, asked)
        if name in providers.BOUNDARIES:  # not at a turn's end: no derivation delays the turn, or writes to its answer
            for waited in pending.pick_up(ws):
                _failed(ws, name, waited)
    except Interrupted as stop:
        _record_interrupt(ws, name, hook_root, str(stop))
    except Exception as exc:  # the agent is never blocked, and no failure is silent
        _failed(ws, name, _describe(exc))
    return OK


def _describe(exc: BaseException) -> str:
    if isinstance(exc, FatalError):
        return exc.message
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def _failed(ws: Workspace | None, name: str, error: str) -> None:
    say(f"majordomus: {name} failed: {error}")
    if ws is None:
        return
    try:
        ws.ledger.append("provider.event.failed", episodes.current(ws), hook=name, error=error)
    except Exception as exc:  # the ledger itself is unwritable: say so, still exit 0
        say(f"majordomus: {name}: could not record the failure either: {exc}")


def _dispatch(ws: Workspace, provider: Provider, name: str, payload: dict[str, Any],
              asked: git.Running | None = None) -> None:
    if name not in providers.HOOK_NAMES:
        raise HookInputError(f"unknown hook {name!r}")
    try:
        call = provider.call(name, payload)
    except providers.PayloadError as exc:
        raise HookInputError(str(exc)) from None
    episode = check_id(call.session, "session_id", written=True)
    if name == START:
        session_start(ws, episode, call.value, provider, asked)
    elif name == END:
        session_end(ws, episode, call.value, provider)
    elif name == COMPACT:
        pre_compact(ws, episode, call.value, provider)
    elif name == STOP:
        stop(ws, episode, payload, provider)


def forked_from(episode: str, source: str) -> str | None:
    """The episode a `source: fork` start was forked from, when the hook can know it.

    Claude Code's payload names no parent (2.1.214 and later report `source: "fork"` for
    `--fork-session` and `/fork`; earlier ones `resume`). What the hook can see is the client's
    `CLAUDE_CODE_SESSION_ID`, which a forked session is started with set to its parent's id: when
    it names another valid id, that is the parent. Otherwise the fork is recorded without one.
    """
    if source != "fork":
        return None
    parent = os.environ.get("CLAUDE_CODE_SESSION_ID", "")
    if not parent or parent == episode:
        return None
    try:
        return check_id(parent, "CLAUDE_CODE_SESSION_ID")
    except FatalError:
        return None


# Each boundary imports its own session module where it runs (a start never loads the close
# path, doit's runner or the derivation table; docs/PERFORMANCE.md): tests/test_layers.py lists
# these imports as the hook paths' only function-local ones of our own.

def session_start(ws: Workspace, episode: str, source: str, provider: Provider | None = None,
                  asked: git.Running | None = None) -> None:
    from majordomus.session import start

    provider = provider or providers.PROVIDERS["claude"]
    started = start.start(ws, episode, source=source, by="hook", agent=provider.agent,
                          forked_from=forked_from(episode, source), asked=asked)
    for error in started.errors:
        _failed(ws, START, error)
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if env_file:
        try:  # the provider's file: unwritable, it costs the variable, not the briefing
            with open(env_file, "a", encoding="utf-8") as handle:
                handle.write(f"export MAJORDOMUS_EPISODE={episode}\n")
        except OSError as exc:
            _failed(ws, START, f"$CLAUDE_ENV_FILE {env_file}: {exc.strerror or exc}")
    # escaped and capped by the start (as the client counts: the text, or the JSON's context
    # string), before any wrapping: JSON would carry a control character to the agent raw
    sys.stdout.write(provider.briefing(escape(started.briefing)))


def session_end(ws: Workspace, episode: str, reason: str, provider: Provider | None = None) -> None:
    from majordomus.session import end

    provider = provider or providers.PROVIDERS["claude"]
    closed = end.close_episode(ws, episode, reason=reason, by="hook", end_first=provider.end_first)
    for error in closed.errors:
        _failed(ws, END, error)
    if closed.error:
        _failed(ws, END, f"derivation failed for {episode}: {closed.error}")
    if closed.drain_error:
        _failed(ws, END, closed.drain_error)


def pre_compact(ws: Workspace, episode: str, trigger: str, provider: Provider | None = None) -> None:
    from majordomus.session import compact

    provider = provider or providers.PROVIDERS["claude"]
    compact.compact(ws, episode, trigger, agent=provider.agent)


def stop(ws: Workspace, episode: str, payload: dict[str, Any], provider: Provider | None = None) -> None:
    """Claude Code's agent finished a turn: remind it, once, when it committed and recorded nothing.
    Only Claude Code's Stop output is documented for this; another agent running its registration
    gets nothing."""
    if (provider or providers.PROVIDERS["claude"]).agent != "claude":
        return
    from majordomus.session import remind

    said = remind.remind(ws, episode, payload.get("stop_hook_active") is True)
    if said is not None:
        sys.stdout.write(said + "\n")
