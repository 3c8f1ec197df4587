"""One adapter per agent: its hook payload in, the session layer's open, close and compaction
calls out, and the briefing back in the form that agent reads.

Every agent sends a JSON object on stdin, but each names things its own way: the session id
(`session_id`, Copilot's camelCase `sessionId`, Cursor's `conversation_id`), the start's source
(Copilot says `new` where the others say `startup`), and the repository (`cwd`, Cursor's
`workspace_roots`, `GEMINI_PROJECT_DIR`, ...). Only the briefing's form differs in what it
changes: Claude Code and Codex put plain stdout before the model, Gemini CLI only JSON
`hookSpecificOutput.additionalContext`, Copilot CLI only a top-level `additionalContext`, Cursor
`additional_context`; OpenCode has no hooks, and the plugin `capture install` writes for it hands
the plain briefing to its system prompt. docs/AGENTS.md names where each fact was seen.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from majordomus.base.lean import TYPE_CHECKING, json

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

START, END, COMPACT = "session-start", "session-end", "pre-compact"
BOUNDARIES = (START, END, COMPACT)
STOP = "stop"  # the end of an agent's turn: Claude Code's reminder, not an episode boundary
HOOK_NAMES = (*BOUNDARIES, STOP)
MAX_VALUE = 200  # a source, reason or trigger longer than this is not one


class PayloadError(ValueError):
    """The payload lacks what the boundary needs (its session id)."""


class Call(NamedTuple):
    """What one hook asks of the session layer, whatever the agent."""

    boundary: str
    session: str  # the agent's session id: the episode
    value: str  # the start's source, the end's reason or the compaction's trigger


class Provider(NamedTuple):
    agent: str
    session_keys: tuple[str, ...] = ("session_id",)
    root_env: tuple[str, ...] = ()  # variables naming the project, tried after the payload's cwd
    root_lists: tuple[str, ...] = ()  # payload keys holding a list of roots, tried first
    briefing_form: str = "plain"  # plain | hookSpecificOutput | additionalContext | additional_context
    renames: Mapping[str, str] = MappingProxyType({})  # the agent's value -> ours
    end_first: bool = False  # record the end before the close: the agent kills a slow end hook

    def call(self, boundary: str, payload: Mapping[str, Any]) -> Call:
        session = next((payload[k] for k in self.session_keys
                        if isinstance(payload.get(k), str) and payload[k]), None)
        if session is None:
            keys = " or ".join(self.session_keys)
            raise PayloadError(f"the payload has no {keys} string")
        key, default = VALUES[boundary]
        value = payload.get(key)
        if not isinstance(value, str) or not value or len(value) >= MAX_VALUE or not value.isprintable():
            value = default  # a value is one line of text: it lands in the session record's prose
        return Call(boundary, session, self.renames.get(value, value))

    def roots(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
        """Where the repository may be, best first (the hook script's own root comes after)."""
        found: list[str] = []
        for key in self.root_lists:
            value = payload.get(key)
            if isinstance(value, list):
                found += [v for v in value if isinstance(v, str)]
        cwd = payload.get("cwd")
        if isinstance(cwd, str):
            found.append(cwd)
        found += [env[name] for name in self.root_env if env.get(name)]
        return found

    def briefing(self, text: str) -> str:
        """The start hook's stdout: `text` in the form this agent puts before the model."""
        if not text.strip():
            return ""
        if self.briefing_form == "plain":
            return text
        if self.briefing_form == "hookSpecificOutput":
            body: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                           "additionalContext": text}}
        else:
            body = {self.briefing_form: text}
        return json.dumps(body, ensure_ascii=False) + "\n"


# boundary -> (the payload key of its value, the value when the payload has none)
VALUES = {START: ("source", "startup"), END: ("reason", "other"), COMPACT: ("trigger", "auto"),
          STOP: ("hook_event_name", "Stop")}

PROVIDERS: dict[str, Provider] = {p.agent: p for p in (
    Provider("claude", root_env=("CLAUDE_PROJECT_DIR",)),
    # SessionEnd gets 1 s by default and at most 3 s, then the hook's process group is killed.
    Provider("codex", briefing_form="hookSpecificOutput", end_first=True),
    # PreCompress fires before every model turn; only JSON context reaches the model.
    Provider("gemini", root_env=("GEMINI_PROJECT_DIR", "GEMINI_CWD"),
             briefing_form="hookSpecificOutput"),
    # camelCase payloads for camelCase event names (ours), snake_case through other registrations
    Provider("copilot", session_keys=("sessionId", "session_id"), root_env=("COPILOT_PROJECT_DIR",),
             briefing_form="additionalContext", renames={"new": "startup"}),
    # the session id falls back to the conversation id; no cwd in the lifecycle payloads
    Provider("cursor", session_keys=("session_id", "conversation_id"),
             root_env=("CURSOR_PROJECT_DIR",), root_lists=("workspace_roots",),
             briefing_form="additional_context"),
    # its plugin (templates/hooks/majordomus-opencode.js) puts the plain briefing into the system prompt
    Provider("opencode"),
)}


def caller(env: Mapping[str, str], payload: Mapping[str, Any]) -> str | None:
    """The agent running this hook when it can say so itself. Copilot CLI and Cursor also run
    the hooks registered for Claude Code (`.claude/settings.json`), with their own payloads and
    their own reading of the output; Codex CLI and Gemini CLI run only their own. Claude Code
    marks its hooks with CLAUDECODE=1, which wins over a marker inherited from a parent agent."""
    if env.get("CLAUDECODE") == "1":
        return None
    if env.get("COPILOT_CLI") == "1":
        return "copilot"
    if isinstance(payload.get("cursor_version"), str):
        return "cursor"
    return None
