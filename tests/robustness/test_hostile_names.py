"""File names a hostile clone can commit or an agent can write (a terminal escape, a newline, bytes
that are not UTF-8) in the record folders and sessions/: no human output puts a raw control
character on a terminal, read afresh or through what the readers kept (the second round), and the
MCP server's lines stay JSON."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, make_repo
from rules_helpers import OLD, append_line, write_candidate

OSC52 = "\x1b]52;c;b3duZWQ=\x07"  # write "owned" to the clipboard
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")  # C0 but \t \n, DEL, C1 (UTF-8)
HUMAN = [("knowledge", "candidates"), ("knowledge", "status"), ("knowledge", "check"), ("doctor",),
         ("history",), ("context",), ("knowledge", "stale"), ("knowledge", "edges")]
MCP = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
       {"jsonrpc": "2.0", "method": "notifications/initialized"},
       {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "knowledge_base_candidates",
                                                                      "arguments": {}}}]


def test_hostile_file_names_reach_no_terminal_raw(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    append_line(repo, "session.opened", OLD, "e1")
    write_candidate(repo, "e1-000000000001")
    folder = repo.root / ".ai/repo/knowledge/candidates"
    write_candidate(repo, "e1-000000000002", file_name=f"x{OSC52}\nforged line")
    (repo.root / ".ai/repo/sessions" / f"s{OSC52}.md").write_text("---\nid: s\n---\n", encoding="utf-8")
    fd = os.open(os.fsencode(folder) + b"/bad\xff\x1b[2J.md", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"---\nid: bad\n---\n")
    os.close(fd)
    raw = []
    for round_ in range(2):
        for args in HUMAN:
            proc = subprocess.run([MAJORDOMUS, *args], cwd=repo.root, capture_output=True, timeout=60)
            found = RAW.search(proc.stdout + b"\n" + proc.stderr)
            if found:
                raw.append((args, round_, (proc.stdout + proc.stderr)[max(0, found.start() - 80):found.end() + 40]))
        mcp = subprocess.run([MAJORDOMUS, "mcp"], cwd=repo.root, capture_output=True, timeout=60,
                             input=b"".join(json.dumps(m).encode() + b"\n" for m in MCP))
        lines = [json.loads(line) for line in mcp.stdout.splitlines()]
        assert [m.get("id") for m in lines] == [1, 2]
        assert "forged line" in json.dumps(lines[1])
    briefing = repo.hook("session-start", {"session_id": "e2", "source": "startup", "cwd": str(repo.root)})
    assert RAW.search(briefing.stdout + briefing.stderr) is None
    assert raw == []
