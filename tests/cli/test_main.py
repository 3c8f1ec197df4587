"""The dispatcher imports what a command needs: the command table names each module's commands,
so one command imports its own module, and no command but a hook imports the hooks."""
from __future__ import annotations

import importlib
import subprocess
import sys

from conftest import Repo
from majordomus.cli.main import COMMANDS


def test_the_command_table_is_what_each_module_declares() -> None:
    for name, names in COMMANDS.items():
        assert importlib.import_module(f"majordomus.cli.commands.{name}").NAMES == names, name


def _imported(repo: Repo, *args: str) -> set[str]:
    """The modules loaded once `majordomus ARGS` ran (-X importtime does not see importlib's)."""
    code = ("import sys; from majordomus.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\nprint('\\n'.join(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=repo.root, capture_output=True, text=True)
    return set(proc.stdout.splitlines())


def test_a_command_imports_its_own_module_only(repo: Repo) -> None:
    commands = {m for m in _imported(repo, "history", "--limit", "1") if m.startswith("majordomus.cli.commands.")}
    assert commands == {"majordomus.cli.commands.history"}
    assert not {m for m in _imported(repo, "knowledge", "candidates") if m.startswith("majordomus.hooks")}
    everything = _imported(repo, "--help")
    assert {f"majordomus.cli.commands.{name}" for name in COMMANDS} <= everything
