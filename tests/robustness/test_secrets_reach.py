"""Issue 28: secrets never reach a tracked file, whatever carries them. The screen uses
detect-secrets' whole plugin set and ours (fine-grained GitHub tokens, Anthropic OAuth tokens,
Google API keys, a secret assigned to a variable); a credential split across a question and its
answer is found in the text the record joins; a branch name or a hook's close reason carrying
one never reaches the session record; `knowledge check` screens every tracked file under
`.ai/repo/` and the AGENTS.md block."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import Repo, make_repo

# made up, in each kind's shape; none is live
NEW_KINDS = {
    "GitHub Fine-Grained Token": "github_pat_11ABCDEFG0" + "aZ9x" * 18 + "Qw",
    "Secret Assignment": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Lw2",
    "Anthropic OAuth Token": "sk-ant-oat01-" + "x9Ab_-" * 15 + "Z7qAA",
    "Google API Key": "AIzaSyD" + "x9Ab_-Q2w" * 3 + "r5Tz0KQ",
    "Base64 High Entropy String": 'the header "q8Zr+Yt/2Lm9KxW4bPnV7cJ0sHfD3gE6"',
    "Secret Keyword": 'set db_pass = "hunter2hunter2"',
}
PROSE = (
    "use sqlite for the dep file", "revert to 1b800be4a7c3f0e9d8b7a6c5d4e3f2a1b0c9d8e7 first",
    'pin "1b800be4a7c3f0e9d8b7a6c5d4e3f2a1b0c9d8e7" in the lock', "see pipeline/majordomus/base/credentials.py",
    'the file "pipeline/majordomus/knowledge/integrity.py" reads them', "the key point: keep the cache warm",
    "password: see the team vault", "token_limit=4096 and max_tokens=120000", "api_key=settings.API_KEY",
    "password=${DB_PASSWORD} from the environment", "point the resolver at 8.8.8.8",
    "session 123e4567-e89b-12d3-a456-426614174000 closed", "rename knowledge_on_end_derivation to on_end",
    "bypass the password prompt with --no-password", 'use "ThisIsAVeryLongCamelCaseIdentifierName"',
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = make_repo(tmp_path_factory.mktemp("reach") / "repo")
    repo.git("checkout", "-q", "-b", "feature")
    repo.mj("session", "start", "--id", "e1", check=True)
    return repo


@pytest.mark.parametrize("kind", list(NEW_KINDS))
def test_the_kinds_the_screen_missed_are_refused(repo: Repo, kind: str) -> None:
    secret = NEW_KINDS[kind]
    before = (repo.root / ".ai/local/ledger.jsonl").read_bytes()
    proc = repo.mj("decision", "add", f"deploy with {secret} from now on")
    assert proc.returncode == 4, (kind, proc.stderr)
    assert f"({kind})" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert secret.split("=")[-1].strip('"')[-12:] not in proc.stderr
    assert (repo.root / ".ai/local/ledger.jsonl").read_bytes() == before


def test_ordinary_prose_shas_and_paths_pass(repo: Repo) -> None:
    for text in PROSE:
        proc = repo.mj("decision", "add", text)
        assert proc.returncode == 0, (text, proc.stderr)


def test_a_credential_split_across_a_question_and_its_answer(repo: Repo) -> None:
    """Each piece passes alone; the record's title joins them, so the answer is refused."""
    repo.mj("question", "add", "which key does the deploy use? AWS_SECRET_ACCESS_KEY=", check=True)
    listed = json.loads(repo.mj("question", "list", "--json", check=True).stdout)
    items = listed if isinstance(listed, list) else listed["questions"]
    qid = [q for q in items if q["text"].endswith("KEY=")][0]["question"]
    proc = repo.mj("question", "resolve", qid, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Lw2")
    assert proc.returncode == 4 and "credential" in proc.stderr, proc.stderr
    assert repo.events("question.resolved") == []


def _session_record(repo: Repo, episode: str) -> str:
    found = list((repo.root / ".ai/repo/sessions").glob(f"{episode}.md"))
    assert found, sorted(p.name for p in (repo.root / ".ai/repo/sessions").iterdir())
    return found[0].read_text(encoding="utf-8")


def test_a_branch_name_or_close_reason_carrying_one_never_reaches_the_session_record(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    token = "ghp_" + "x9Ab" * 9
    repo.git("checkout", "-q", "-b", f"deploy-{token}")
    assert repo.hook("session-start", {"session_id": "e2", "source": "startup"}).returncode == 0
    oat = "sk-ant-oat01-" + "x9Ab_-" * 15 + "Z7qAA"
    assert repo.hook("session-end", {"session_id": "e2", "reason": f"logout {oat}"}).returncode == 0
    text = _session_record(repo, "e2")
    assert token not in text and oat[:30] not in text, text
    assert "withheld: it carries a credential, GitHub Token" in text
    assert "withheld: it carries a credential, Anthropic OAuth Token" in text
    check = repo.mj("knowledge", "check", "--json")
    assert not [f for f in json.loads(check.stdout)["findings"] if "credential" in f["what"]]


def test_knowledge_check_screens_every_tracked_file_and_the_agents_md_block(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    token = "github_pat_11ABCDEFG0" + "aZ9x" * 18 + "Qw"
    sessions = repo.root / ".ai/repo/sessions"
    (sessions / "e5.md").write_text(f"---\nid: e5\nkind: session/v1\nbranch: {token}\n---\nEpisode e5.\n",
                                    encoding="utf-8")
    rules = repo.root / ".ai/repo/rules/project/notes.md"
    rules.write_text("deploy with AIzaSyD" + "x9Ab_-Q2w" * 3 + "r5Tz0KQ\n", encoding="utf-8")
    (repo.root / "AGENTS.md").write_text(
        "# Mine\nAKIAQ7EXAMPLEZ3XK4PD outside the block is not ours\n"
        "<!-- majordomus:knowledge:begin -->\n- fact: deploy with sk-ant-oat01-" + "x9Ab_-" * 15
        + "Z7qAA (`r1`)\n<!-- majordomus:knowledge:end -->\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo.root, check=True)
    check = repo.mj("knowledge", "check", "--json")
    assert check.returncode == 10, check.stderr
    found = sorted((f["file"], f["what"]) for f in json.loads(check.stdout)["findings"] if "credential" in f["what"])
    assert [f for f, _ in found] == [".ai/repo/rules/project/notes.md", ".ai/repo/sessions/e5.md", "AGENTS.md"], found
    assert "Anthropic OAuth Token" in dict(found)["AGENTS.md"]
    text = repo.mj("knowledge", "check")
    assert token not in text.stdout + text.stderr


def test_the_agents_md_export_withholds_a_title_carrying_one(tmp_path: Path) -> None:
    """A curated record edited by hand to carry a credential in its title (no writer saw it): the
    export writes the line with the title withheld, never the secret, into the tracked AGENTS.md."""
    repo = make_repo(tmp_path / "repo", capture=False)
    token = "ghp_" + "x9Ab" * 9
    (repo.root / ".ai/repo/knowledge/curated/r1.md").write_text(
        "---\nid: r1\nkind: knowledge/v1\nclass: convention\nstatus: verified\nepistemics: decided\n"
        f"title: Deploy with {token}\ndate: '2026-03-04'\nprovenance:\n  origin: extracted\n"
        "  derived_from:\n  - session:e1\n---\nA body.\n", encoding="utf-8")
    assert repo.mj("knowledge", "export", "--agents-md").returncode == 0
    text = (repo.root / "AGENTS.md").read_text(encoding="utf-8")
    assert token not in text and "withheld: it carries a credential, GitHub Token" in text, text


def test_the_hooks_screen_without_importing_detect_secrets(tmp_path: Path) -> None:
    """The hooks now screen what they copy into the session record, and the pre-test keeps that
    free: a usual branch name, a UUID session id and Claude Code's close reasons load no module of
    detect-secrets in the start or end hook."""
    repo = make_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "-b", "fix/api-key-rotation-2")
    sid = "123e4567-e89b-12d3-a456-426614174000"
    trace = {"PYTHONPROFILEIMPORTTIME": "1"}
    for name, payload in (("session-start", {"session_id": sid, "source": "startup"}),
                          ("session-end", {"session_id": sid, "reason": "prompt_input_exit"})):
        proc = repo.hook(name, payload, env=trace)
        assert proc.returncode == 0
        imported = {line.rsplit(b"|", 1)[-1].strip().decode() for line in proc.stderr.splitlines()
                    if line.startswith(b"import time:")}
        assert "majordomus.store.ledger" in imported, name
        assert not {m for m in imported if m.startswith(("detect_secrets", "majordomus.base.credential_plugins"))}, name
    assert "fix/api-key-rotation-2" in _session_record(repo, sid)
