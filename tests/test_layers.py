"""The layers of docs/ARCHITECTURE.md are a contract import-linter checks, not a convention."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE = PROJECT / "pipeline" / "majordomus"
LINT = Path(sys.executable).with_name("lint-imports")
HEAVY = {"yaml", "jinja2", "jsonschema", "doit", "mcp", "mcp_types", "anyio", "grpc_tools", "google"}


def _lint(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--no-cache", "--config", str(config)], cwd=cwd,
                          capture_output=True, text=True)


def test_the_layers_contract_is_kept() -> None:
    proc = _lint(PROJECT / "pyproject.toml", PROJECT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "majordomus layers KEPT" in proc.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """The contract is live: the same check on a copy with one upward import fails and names it."""
    copy = tmp_path / "majordomus"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    ledger = copy / "store" / "ledger.py"
    ledger.write_text(ledger.read_text(encoding="utf-8") + "\nfrom majordomus.session import end  # noqa\n",
                      encoding="utf-8")
    config = tmp_path / "pyproject.toml"
    config.write_text((PROJECT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run([str(LINT), "--no-cache", "--config", str(config)], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0
    assert "BROKEN" in proc.stdout and "majordomus.store.ledger -> majordomus.session.end" in proc.stdout


# The hook paths' own lazy imports: what only some runs need (the close path, the drain, doit's
# runner) waits for the run that needs it, so the start hook stays near the floor. (file, module)
HOOK_PATHS_LAZY = {
    ("hooks/run.py", "majordomus.session"),  # each boundary its own session module
    ("cli/main.py", "majordomus.base"),
    ("cli/main.py", "majordomus.hooks"),  # the hooks' modules, after their early `git status` started
    ("cli/main.py", "majordomus.cli.commands.knowledge"),  # a reader's `knowledge VERB`, run without the parser: its verbs
    ("cli/main.py", "majordomus.readers.cli"),  # and its runner (`_reader_call`)
    ("hooks/run.py", "majordomus.store"),  # the agents' registrations, only for a hook run by another's
    ("store/policy.py", "majordomus.base"),  # the YAML reader, only when the policy cache misses
    ("outbox/staging.py", "majordomus.store"),  # the records' readers, only for a drain  # git, for the start hook's early `git status` alone
    ("session/start.py", "majordomus.tasks"),  # the drain, only with something staged
    ("session/start.py", "majordomus.session"),  # the close path, only with an orphan to close
    ("session/pending.py", "majordomus.tasks"),  # the derivation, only when one waits
    ("session/start.py", "majordomus.store"),  # the session record's text, only for a resume
    ("context/briefing.py", "majordomus.knowledge"),  # currency, only when a record is verified
    ("session/start.py", "majordomus.context"),  # the briefing's readers, only when the prebuilt text is stale
    ("context/prebuilt.py", "majordomus.context"),  # the same, only at a boundary's build
    # issue 31, doctor: git's word on `.ai/repo/` is asked first thing, while the rules, the
    # workspace and what they read are imported
    ("cli/commands/doctor.py", "majordomus.knowledge.worktree"),
    ("cli/commands/doctor.py", "majordomus.store.root"),
    ("cli/commands/doctor.py", "majordomus.rules"),
    ("cli/commands/doctor.py", "majordomus.store.workspace"),
    # not a hook path: `generate --check` compares files and reads no repository
    ("cli/commands/generate.py", "majordomus.store.workspace"),
    # the MCP server's first answers import nothing a tool call needs; each reader imports its own
    # modules when it is called, on the command line as in the server (issue 31)
    ("readers/mcp_stdio.py", "majordomus.readers"),
    ("readers/mcp_stdio.py", "majordomus.readers.knowledge_base"),
    ("readers/mcp_stdio.py", "majordomus.store.workspace"),
    ("readers/mcp_stdio.py", "majordomus.readers.answers"),
    ("readers/mcp_stdio.py", "majordomus.base.output"),  # a tool's result as indented JSON text
    ("readers/answers.py", "majordomus.base"),
    ("readers/answers.py", "majordomus.knowledge"),
    ("readers/answers.py", "majordomus.store"),
    ("readers/answers.py", "majordomus.base.errors"),
    ("readers/answers.py", "majordomus.base.ids"),
    ("readers/answers.py", "majordomus.readers.status"),
    ("readers/answers.py", "majordomus.knowledge.search"),
    ("cli/commands/mcp.py", "majordomus.readers"),
    ("cli/commands/mcp.py", "majordomus.base.output"),
    # issue 31, the no-op re-derive: told from its stamps (tasks/noop.py) before the deriver
    # and the episodes are imported
    ("cli/commands/derive.py", "majordomus.tasks"),
    ("cli/commands/derive.py", "majordomus.evidence"),
    # issue 31, doctor: the review acts and the fast schema, with the first record the integrity
    # view reads again (most doctor runs read none)
    ("knowledge/integrity.py", "majordomus.knowledge"),
    ("knowledge/integrity.py", "majordomus.store.schemafast"),
    # issue 31, search: the queue's modules (a candidate's wait, in words) and the graph's wait for
    # the command-line readers that show them, not every `knowledge` reader's
    ("readers/cli.py", "majordomus.knowledge.accumulation"),
    ("readers/cli.py", "majordomus.knowledge.graph"),
}


def test_function_local_imports_are_only_heavy_third_party() -> None:
    """Our own modules are imported at the top; only heavy third-party (and a few heavy stdlib
    modules) wait for the function that needs them, to keep the hook paths light, and so do the
    few of our own the hook paths need only on some runs (HOOK_PATHS_LAZY)."""
    allowed_stdlib = {"argparse", "http", "importlib", "string", "contextlib", "io", "urllib", "email", "os",
                      "sqlite3", "hashlib", "difflib",
                      # issue 31, the readers' fixed cost: `subprocess` (~5 ms with threading and
                      # selectors) is imported by base/git.py's functions that start git, as a
                      # reader answered from its caches starts none (`signal`'s C module, `_signal`,
                      # is imported at the top: the interpreter loaded it); `calendar` (and datetime)
                      # by the ledger stamp reader of knowledge/accumulation.py, which an empty queue
                      # never calls
                      "subprocess", "calendar",
                      # base/lean.py's `pattern`: a pattern is compiled on its first use, not at import;
                      # `select` by base/git.py's wait for a git process, which many readers never start
                      "re", "select",
                      # issue 31, the end hook: store/gitmerge.py quotes this interpreter's path with
                      # `shlex` only when it needs quoting (every close asks for the driver's command)
                      "shlex",
                      # base/lean.py's `pathlib_alone`: pathlib imported without `urllib.parse`
                      "pathlib",
                      # issue 31, doctor: the wiring rule parses the close path only when its cache
                      # misses; BLAKE2b without hashlib's OpenSSL (store/filecache.py)
                      "ast", "_blake2",
                      # evidence/work.py's `verify`, the one command that runs one: `context` and
                      # the briefing read that module's tasks and questions
                      "signal", "threading",
                      # issue 31, the start at 20k: base/lean.py's `json` runs `_json`, and the real
                      # `json` (whose modules compile patterns at import) only for what it does not
                      "json", "_json"}
    found = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    lazy = (path.relative_to(PACKAGE).as_posix(), name) in HOOK_PATHS_LAZY
                    if top not in HEAVY and top not in allowed_stdlib and not lazy:
                        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}")
    assert found == []
