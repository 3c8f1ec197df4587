"""majordomus mcp: the reader capabilities of `readers.knowledge_base` and the evidence writers,
as MCP tools on stdio.

Serving starts with a few `stat`s (`store/root.py`): nothing that reads the store is imported
before a tool is called, so `initialize` and `tools/list` cost the same on any store."""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.base.errors import NOT_INITIALISED, OK, FatalError
from majordomus.cli.commands import Subparsers
from majordomus.store.root import checkout, find_root, start_dir

NAMES = ("mcp",)


def add_parsers(sub: Subparsers) -> None:
    m = sub.add_parser("mcp", help="serve the knowledge readers and the evidence writers as MCP tools on stdio",
                       description="An MCP server on stdin/stdout: one tool per reader capability, and the "
                       "evidence writers (record a decision, ask or resolve a question, start or finish a task).")
    m.add_argument("--list", action="store_true", help="print the tool list as JSON and exit")
    m.set_defaults(handler=lambda a: mcp(a.list))


def mcp(list_only: bool) -> int:
    """Serve the MCP tools on stdio (or print their list)."""
    from majordomus.readers import mcp_stdio

    if list_only:
        from majordomus.base.output import emit_json

        emit_json(mcp_stdio.tools())
        return OK
    try:
        root = checkout()
    except FatalError as exc:
        if exc.code != NOT_INITIALISED or find_root(start_dir()) is not None:
            raise  # inside a repository that is not initialised: `majordomus init` is the fix
        # An MCP client starts its servers from wherever it was started, not from the repository.
        where = (f"MAJORDOMUS_ROOT={os.environ['MAJORDOMUS_ROOT']} is not inside a git repository"
                 if os.environ.get("MAJORDOMUS_ROOT") else f"{Path.cwd()} is not inside a git repository")
        raise FatalError(f"the MCP server found no repository: {where}: set MAJORDOMUS_ROOT to the "
                         "repository's root in the server's registration (its `env`), or start the client "
                         "inside the repository", NOT_INITIALISED) from None
    return mcp_stdio.serve(root)
