"""Every file of this project that a message, a generated header, a docstring or a document names
exists: a reader following `pipeline/majordomus/store/ledger.py` from an error finds it.

A path counts when it starts at the project root (`pipeline/`, `docs/`, `schemas/`, `templates/`,
`tests/`, `benchmarks/`, `scripts/`) and is not part of a longer path (`.ai/repo/rules/...`, a URL)."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import PROJECT

ROOTS = ("pipeline", "docs", "schemas", "templates", "tests", "benchmarks", "scripts")
# not preceded by a path or a word character: `.ai/repo/rules/vendor/`, `#/components/schemas/Error`
# and `cursor.com/docs/hooks` are not paths of this project
NAMED = re.compile(r"(?<![\w./-])((?:%s)/[\w.*/-]*[\w*])" % "|".join(ROOTS))
READ = ("pipeline", "schemas", "templates", "docs", "rules", ".ai-skeleton", "scripts", ".ci")
FILES = ("README.md", "CHANGELOG.md", "Makefile", "dodo.py", "pyproject.toml", ".pre-commit-hooks.yaml")


def _texts() -> list[Path]:
    found = [PROJECT / name for name in FILES if (PROJECT / name).is_file()]
    for folder in READ:
        found += [p for p in sorted((PROJECT / folder).rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc",)]
    return found


def named_paths() -> dict[str, list[str]]:
    """Each root-relative path named anywhere in the project's texts, with where it is named."""
    seen: dict[str, list[str]] = {}
    for path in _texts():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for match in NAMED.finditer(line):
                seen.setdefault(match.group(1), []).append(f"{path.relative_to(PROJECT)}:{number}")
    return seen


def test_every_named_project_path_exists() -> None:
    seen = named_paths()
    # the scan does find what it looks for (a regex that matched nothing would pass anything)
    assert "pipeline/majordomus/proto/generate.py" in seen
    assert any(where.startswith("schemas/") for where in seen["pipeline/majordomus/proto/generate.py"])
    missing = {name: where for name, where in seen.items()
               if not (list(PROJECT.glob(name)) if "*" in name else (PROJECT / name).exists())}
    assert not missing, "named but not in the project: " + "; ".join(
        f"{name} ({', '.join(where[:3])})" for name, where in sorted(missing.items()))


def test_the_scan_reports_a_path_that_does_not_exist() -> None:
    line = "raise ValueError('register it in pipeline/ledger.py'); see .ai/repo/rules/vendor/ and docs/RULES.md"
    assert [m.group(1) for m in NAMED.finditer(line)] == ["pipeline/ledger.py", "docs/RULES.md"]
    assert not (PROJECT / "pipeline/ledger.py").exists()
