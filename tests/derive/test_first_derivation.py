"""An episode's first derivation here is told without doit (every task would run: no evidence file,
no record yet), and writes what doit's run writes; any later run that changes something is doit's."""
from __future__ import annotations

import subprocess
import sys

from conftest import Repo

PROBE = ("import sys\nfrom pathlib import Path\nfrom majordomus.store.workspace import Workspace\n"
         "from majordomus.tasks import derive\n"
         "outcome = derive.derive(Workspace(Path('.').resolve()), 'e1')\n"
         "print(len(outcome.written), len(outcome.unchanged), 'doit' in sys.modules)\n")


def _derive_in_process(repo: Repo) -> str:
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=repo.root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_first_derivation_imports_no_doit_and_writes_doits_bytes(episode: Repo) -> None:
    episode.mj("decision", "add", "Tabs are refused in the parser", "--why", "one style", check=True)
    episode.mj("decision", "add", "Spaces indent by four", check=True)
    assert _derive_in_process(episode) == "2 0 False"
    first = {p.name: p.read_bytes() for p in episode.candidates()}
    derived = episode.events("knowledge.derived")[-1]
    assert (derived["episode"], derived["written"], derived["unchanged"]) == ("e1", 2, 0)

    assert _derive_in_process(episode) == "0 2 False"  # nothing changed: told without doit too

    # with the evidence file (derived state) and one record gone, doit runs and writes that record
    # again, byte for byte what the first derivation wrote
    (episode.root / ".ai/local/state/evidence/e1.json").unlink()
    gone = sorted(episode.candidates())[0]
    gone.unlink()
    assert _derive_in_process(episode) == "1 1 True"
    assert {p.name: p.read_bytes() for p in episode.candidates()} == first

    episode.mj("decision", "add", "A third decision", check=True)
    assert _derive_in_process(episode) == "1 2 True"  # the evidence changed: doit decides
