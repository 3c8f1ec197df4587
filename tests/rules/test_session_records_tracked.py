"""majordomus.candidates-reviewed names an untracked session record under .ai/repo/sessions/, as it
names an untracked candidate (seed 001, Consequences: "the advisory rule now names" both)."""
from __future__ import annotations

from conftest import Repo
from rules_helpers import findings_of, run_json, status_of

REVIEWED = "majordomus.candidates-reviewed"


def test_untracked_session_record_is_named_until_committed(repo: Repo) -> None:
    repo.git("add", "-A")
    repo.commit("adopt majordomus")
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    assert repo.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert (repo.root / ".ai/repo/sessions/e1.md").is_file()

    code, data = run_json(repo, "doctor")
    assert code == 0  # advisory
    (finding,) = findings_of(data, REVIEWED)
    assert finding["file"] == ".ai/repo/sessions/e1.md" and not finding["blocking"]
    assert finding["what"].startswith("git does not track this session record")
    assert finding["fix"].startswith("git add .ai/repo/sessions/e1.md")
    assert "WARN majordomus.candidates-reviewed: .ai/repo/sessions/e1.md: git does not track this session record" in repo.mj("doctor").stdout
    assert repo.mj("watch").returncode == 0  # never dispatched from watch

    repo.git("add", ".ai/repo/sessions/e1.md")  # the index counts, as for a candidate
    code, data = run_json(repo, "doctor")
    assert findings_of(data, REVIEWED) == [] and status_of(data, REVIEWED) == "ok"


def test_the_sessions_readme_is_not_a_record(repo: Repo) -> None:
    code, data = run_json(repo, "doctor")  # init laid sessions/README.md, untracked: not named
    assert not [f for f in findings_of(data, REVIEWED) if "session record" in f["what"]]
