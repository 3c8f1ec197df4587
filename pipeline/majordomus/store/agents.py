"""The coding agents majordomus serves: where each keeps its hook registration in a repository,
what marks it as seen, and the step by which its user trusts the hooks.

Pure data, read by `capture install` (which writes the registrations), the hook runner (which
recognises an agent calling another agent's registration) and `doctor` (which reports an
installed agent whose hooks have never fired). Each fact is the agent's own: docs/AGENTS.md says
where it was seen (a real client run here, or the agent's documentation and source).
"""
from __future__ import annotations

from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from majordomus.base.lean import NamedTuple


class Agent(NamedTuple):
    name: str  # what `--agent` takes and the ledger records
    title: str
    registration: str  # the file holding its hook registration, relative to the repository
    folder: str  # where the hook script sits (beside the registration)
    signs: tuple[str, ...]  # repository paths that show the agent is used here
    home_signs: tuple[str, ...]  # paths under $HOME that show it is used on this machine
    trust: str | None  # what the user must do before the hooks run; None: nothing

    @property
    def marker(self) -> str:
        """The text every registration of ours holds in its command (how `doctor` and the hook
        runner tell an installed registration from someone else's)."""
        return "majordomus-session-start" if self.name == "claude" else "majordomus-hook"


AGENTS: dict[str, Agent] = {a.name: a for a in (
    Agent("claude", "Claude Code", ".claude/settings.json", ".claude/hooks",
          (".claude",), (".claude",), None),
    Agent("codex", "Codex CLI", ".codex/hooks.json", ".codex/hooks",
          (".codex",), (".codex",),
          'Codex runs these hooks only once you trust them: run `codex` in this repository and '
          'answer "Trust and continue", then "Trust all and continue" (or review them with /hooks).'),
    Agent("gemini", "Gemini CLI", ".gemini/settings.json", ".gemini/hooks",
          (".gemini",), (".gemini",),
          'Gemini CLI runs project hooks only in a trusted folder: run `gemini` here once and choose '
          '"Trust folder" (headless: GEMINI_CLI_TRUST_WORKSPACE=true).'),
    Agent("copilot", "GitHub Copilot CLI", ".github/hooks/majordomus.json", ".github/hooks",
          (".github/hooks", ".github/copilot-instructions.md"), (".copilot",),
          'Copilot CLI runs repository hooks only in a trusted folder: run `copilot` here once and '
          'answer "Yes, and remember this folder for future sessions" (prompt mode needs it remembered).'),
    Agent("cursor", "Cursor", ".cursor/hooks.json", ".cursor/hooks",
          (".cursor",), (".cursor",), None),
    # no hook file: the registration is a plugin module that runs the hook script
    Agent("opencode", "OpenCode", ".opencode/plugins/majordomus.js", ".opencode/hooks",
          (".opencode", "opencode.json", "opencode.jsonc"), (".config/opencode",), None),
)}

NAMES = tuple(AGENTS)


def installed(root: Path, agent: Agent, limit: int = 1 << 20) -> bool:
    """Whether `root` holds `agent`'s registration of our hooks (a regular file naming them)."""
    path = root / agent.registration
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > limit:
            return False
        return agent.marker in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def seen(root: Path, home: Path | None, agent: Agent) -> list[str]:
    """Where `agent` shows itself: its repository signs (relative) and its folders under $HOME
    (as `~/...`), in that order."""
    found = [sign for sign in agent.signs if (root / sign).exists()]
    if home is not None:
        found += [f"~/{sign}" for sign in agent.home_signs if (home / sign).exists()]
    return found
