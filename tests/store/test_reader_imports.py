"""`knowledge candidates` and `knowledge status` (git's listing through store/listing.py, the index
through store/index.py) import neither `sqlite3`'s package nor `datetime`: both open `_sqlite3`,
whose errors are the package's (`dbapi2` registers date adapters and imports `datetime`, ~1.5 ms of
a reader's imports). As a reader runs once its store's settings are kept (the first read of
`sources.yaml` parses YAML, which imports `datetime` itself)."""
from __future__ import annotations

import _sqlite3
import sqlite3

import pytest

from conftest import Repo
from lifecycle import end, start

NOT_ON_A_READER_PATH = {"sqlite3", "sqlite3.dbapi2", "datetime"}


@pytest.mark.parametrize("command", [("knowledge", "candidates"), ("knowledge", "status")])
def test_a_queue_reader_imports_neither_sqlite3_s_package_nor_datetime(repo: Repo, command: tuple[str, ...]) -> None:
    start(repo, "e0")
    repo.mj("decision", "add", "The readers stay light", env={"MAJORDOMUS_EPISODE": "e0"}, check=True)
    end(repo, "e0")
    assert repo.candidates() != []
    repo.mj(*command)  # the first read parses sources.yaml (YAML, with `datetime`) and keeps what it read
    proc = repo.mj(*command, env={"PYTHONPROFILEIMPORTTIME": "1"})
    lines = proc.stderr.splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    assert "majordomus.store.listing" in imported and "majordomus.store.index" in imported
    assert imported & NOT_ON_A_READER_PATH == set()
    assert _sqlite3.Error is sqlite3.Error  # what the readers catch is what the package raises
