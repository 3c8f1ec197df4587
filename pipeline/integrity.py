"""Stand-in for the integrity validator of `majordomus knowledge check` (issue 5 writes the real
one, with this signature). It checks only what needs no schema: the front matter parses, the id
equals the file name and is unique across candidates/ and curated/, and no candidate claims
`verified`."""
from __future__ import annotations

from pathlib import Path

from pipeline.findings import Finding
from pipeline.workspace import Workspace

RULE = "majordomus.knowledge-integrity"


def _records(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for p in sorted(folder.glob("*.md"))
            if p.name != "README.md" and not p.name.startswith(".tmp.") and p.is_file()]


def check(ws: Workspace) -> list[Finding]:
    """Every record under candidates/ and curated/, read once."""
    from pipeline import yamlio

    findings: list[Finding] = []
    seen: dict[str, str] = {}
    for folder in (ws.candidates, ws.curated):
        for path in _records(folder):
            rel = ws.rel(path)
            parts = yamlio.split_front_matter(path.read_text(encoding="utf-8", errors="replace"))
            if parts is None:
                findings.append(Finding(RULE, "no `---` front matter", "restore the front matter "
                                        "(`git diff` shows what changed)", file=rel))
                continue
            try:
                front = yamlio.load(parts[0], rel)
            except yamlio.YamlError as exc:
                findings.append(Finding(RULE, f"front matter unreadable: {exc}",
                                        "fix the YAML of the front matter", file=rel))
                continue
            if not isinstance(front, dict):
                findings.append(Finding(RULE, "front matter is not a mapping",
                                        "fix the YAML of the front matter", file=rel))
                continue
            rid = front.get("id")
            if rid != path.stem:
                findings.append(Finding(RULE, f"id {rid!r} is not the file name {path.stem!r}",
                                        f"set `id: {path.stem}` or rename the file", file=rel, field="id"))
            if isinstance(rid, str):
                if rid in seen:
                    findings.append(Finding(RULE, f"id {rid} is also the id of {seen[rid]}",
                                            "keep one of the two records", file=rel, field="id"))
                else:
                    seen[rid] = rel
            if folder == ws.candidates and front.get("status") == "verified":
                findings.append(Finding(RULE, "a candidate claims status verified",
                                        f"promote it: `majordomus knowledge promote {path.stem}`",
                                        file=rel, field="status"))
    return findings
