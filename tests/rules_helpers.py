"""Helpers shared by the rule tests: ledger lines with chosen timestamps, hand-made candidates,
policy edits, and the rule commands' JSON."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from conftest import Repo

OLD = "2020-01-01T00:00:00Z"


def stamp(seconds_ago: float = 0.0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def append_line(repo: Repo, event: str, ts: str, session: str | None = None, **data: Any) -> None:
    """Append one ledger line as the ledger writes it, with the timestamp the test needs."""
    path = repo.root / ".ai" / "local" / "ledger.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {"ts": ts, "event": event, "session": session, **data}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, separators=(",", ":")) + "\n")


def write_candidate(repo: Repo, rid: str, date: str = "2020-01-01", status: str = "candidate",
                    file_name: str | None = None) -> Path:
    episode = rid.rsplit("-", 1)[0]
    # The record derives from session:<episode>; the integrity validator resolves every reference,
    # so the episode gets a tracked session record (with no branch: placement still falls back to
    # the ledger, as before).
    session = repo.root / ".ai/repo/sessions" / f"{episode}.md"
    if not session.exists():
        session.write_text(f"---\nid: {episode}\nkind: session/v1\n---\n", encoding="utf-8")
        repo.git("add", "--", rel(session, repo))  # tracked, as the comment says: not a finding of its own
    path = repo.root / ".ai/repo/knowledge/candidates" / f"{file_name or rid}.md"
    path.write_text(f"""---
id: {rid}
kind: knowledge/v1
class: convention
status: {status}
epistemics: decided
title: "A decision of {rid}"
date: "{date}"
provenance:
  origin: extracted
  derived_from:
    - "session:{episode}"
---
A decision of {rid}
""", encoding="utf-8")
    return path


def rel(path: Path, repo: Repo) -> str:
    return path.relative_to(repo.root).as_posix()


def set_policy(repo: Repo, old: str, new: str) -> None:
    path = repo.root / ".ai/repo/policy.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in the policy"
    path.write_text(text.replace(old, new), encoding="utf-8")


def run_json(repo: Repo, command: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    proc = repo.mj(command, "--json", env=env)
    assert proc.returncode in (0, 10, 11), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def findings_of(data: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in data["findings"] if f["rule"] == rule]


def status_of(data: dict[str, Any], rule: str) -> str:
    (entry,) = [r for r in data["rules"] if r["id"] == rule]
    return str(entry["status"])


def project_rule(repo: Repo, rid: str, text: str) -> Path:
    path = repo.root / ".ai/repo/rules/project" / f"{rid}.yaml"
    path.write_text(text, encoding="utf-8")
    return path
