"""A hand-edited candidate is reported and counted as edited even while doit's dep file says its
render is up to date (the evidence did not change, so doit alone would skip it as unchanged)."""
from __future__ import annotations

from conftest import Repo


def test_edit_is_reported_and_counted_while_the_dep_file_is_current(episode: Repo) -> None:
    episode.mj("decision", "add", "Tabs are refused in the parser", check=True)
    episode.mj("knowledge", "derive", check=True)
    # the first derivation ran without doit; with its evidence file gone (derived state) the next
    # run is doit's, and its dep file now holds the render as up to date
    (episode.root / ".ai/local/state/evidence/e1.json").unlink()
    assert "nothing changed" in episode.mj("knowledge", "derive", check=True).stdout
    (path,) = episode.candidates()
    edited = path.read_text(encoding="utf-8").replace("Tabs are refused in the parser\n",
                                                      "Tabs are refused by the parser and the formatter\n")
    path.write_text(edited, encoding="utf-8")

    proc = episode.mj("knowledge", "derive")
    assert proc.returncode == 0, proc.stderr
    rel = path.relative_to(episode.root).as_posix()
    assert f"majordomus: left {rel} alone: it was edited by hand" in proc.stderr
    assert "1 edited by hand, left alone" in proc.stdout and "1 record up to date" not in proc.stdout
    last = episode.events("knowledge.derived")[-1]
    assert (last["written"], last["unchanged"], last.get("edited")) == (0, 0, 1)
    assert path.read_text(encoding="utf-8") == edited  # the person's file wins

    dry = episode.mj("knowledge", "derive", "--dry-run", "--json", check=True)
    assert rel in dry.stdout.split('"edited"')[1]

    path.unlink()  # deleting hands the id back to the deriver
    episode.mj("knowledge", "derive", check=True)
    last = episode.events("knowledge.derived")[-1]
    assert (last["written"], last.get("edited")) == (1, None)
    again = episode.mj("knowledge", "derive", check=True)
    assert "nothing changed (1 record up to date)" in again.stdout
