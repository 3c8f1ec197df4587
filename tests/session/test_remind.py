"""The Stop hook: an episode that commits and records nothing is reminded once per
`session.remind_after_commits` commits, never while `stop_hook_active`, never when the key is 0,
with Claude Code's documented Stop output; the hook always exits 0."""
from __future__ import annotations

import json
import re
from typing import Any

from conftest import Repo


def stop(repo: Repo, episode: str = "e1", active: bool = False) -> dict[str, Any] | None:
    """Feed the real stop hook the payload Claude Code sends; its JSON answer, or None."""
    proc = repo.hook("stop", {"session_id": episode, "hook_event_name": "Stop", "stop_hook_active": active,
                              "cwd": str(repo.root), "last_assistant_message": "Done."})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def commits(repo: Repo, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        repo.commit(f"change {i}", {f"src/f{i}.txt": f"{i}\n"})


def set_every(repo: Repo, n: int) -> None:
    policy = repo.root / ".ai/repo/policy.yaml"
    policy.write_text(re.sub(r"remind_after_commits: \d+", f"remind_after_commits: {n}",
                             policy.read_text(encoding="utf-8")), encoding="utf-8")


def test_three_commits_and_no_record_remind_once(episode: Repo) -> None:
    assert stop(episode) is None  # nothing committed yet
    commits(episode, 2)
    assert stop(episode) is None  # two: fewer than the default three
    commits(episode, 1, start=2)
    said = stop(episode)
    assert said is not None and set(said) == {"decision", "reason"} and said["decision"] == "block"
    reason = said["reason"]
    assert reason.startswith("Majordomus: this episode has 3 commits since it opened and no decision, question "
                             "or task recorded")
    assert '`majordomus decision add "TEXT" --why "…"`' in reason and "`majordomus finish --verify CMD`" in reason
    assert len(reason) < 600 and "\n" not in reason
    (line,) = episode.events("session.reminded")
    assert line["session"] == "e1" and line["commits"] == 3
    assert stop(episode, active=True) is None  # the turn it continued: never again while active
    assert stop(episode) is None  # and not on the next turn: no new commit since
    commits(episode, 2, start=3)
    assert stop(episode) is None  # five: two since the reminder
    commits(episode, 1, start=5)
    again = stop(episode)
    assert again is not None and "has 6 commits" in again["reason"]
    assert [line["commits"] for line in episode.events("session.reminded")] == [3, 6]


def test_a_record_since_the_last_reminder_keeps_it_quiet(episode: Repo) -> None:
    commits(episode, 3)
    episode.mj("decision", "add", "Files are numbered", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    assert stop(episode) is None
    assert episode.events("session.reminded") == []


def test_each_kind_of_record_counts(repo: Repo) -> None:
    for n, record in enumerate((["start", "a task"], ["question", "add", "why?"])):
        sid = f"k{n}"
        assert repo.hook("session-start", {"session_id": sid, "source": "startup"}).returncode == 0
        commits(repo, 3, start=10 * n)
        repo.mj(*record, env={"MAJORDOMUS_EPISODE": sid}, check=True)
        assert stop(repo, sid) is None, record


def test_zero_turns_it_off(episode: Repo) -> None:
    set_every(episode, 0)
    commits(episode, 5)
    assert stop(episode) is None
    set_every(episode, 1)
    assert stop(episode) is not None


def test_never_for_an_episode_that_is_not_open_here(episode: Repo) -> None:
    commits(episode, 3)
    assert stop(episode, "someone-else") is None
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert stop(episode) is None


def test_a_bad_payload_is_recorded_and_the_hook_still_exits_0(episode: Repo) -> None:
    proc = episode.hook("stop", None, raw=b"not json")
    assert proc.returncode == 0 and proc.stdout == b"" and b"stop failed" in proc.stderr
    assert episode.events("provider.event.failed")[-1]["hook"] == "stop"


def test_registered_by_capture_install(repo: Repo) -> None:
    settings = json.loads((repo.root / ".claude/settings.json").read_text(encoding="utf-8"))
    commands = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == ['"$CLAUDE_PROJECT_DIR"/.claude/hooks/majordomus-stop']


def test_a_turns_end_is_no_boundary_a_waiting_derivation_waits_for_the_next(episode: Repo) -> None:
    """A derivation an earlier boundary could not run is picked up by the next start, end or
    compaction, not by the Stop hook: a turn's end is not delayed by it, and its answer stays the
    one JSON object."""
    mark = episode.root / ".ai/local/state/pending/e1"
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_bytes(b"")
    commits(episode, 3)
    said = stop(episode)  # stdout parsed whole, stderr empty
    assert said is not None and said["decision"] == "block"
    assert mark.exists()
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert not mark.exists()
