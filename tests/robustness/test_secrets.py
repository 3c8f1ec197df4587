"""Secrets never reach a tracked file: every writer of free text that ends up in a record (a
decision and its reason, a question, an answer, a task's title, a finish reason, a verification
command, a handover, promotion evidence, a rejection's reason) refuses a credential with exit 4
and one line that names its kind and never the secret, and writes nothing; `knowledge check`
reports a tracked record that carries one, again by kind."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Repo, make_repo

LEDGER = Path(".ai/local/ledger.jsonl")

# kind detect-secrets names -> a credential of that shape (made up; none of them is live)
SECRETS = {
    "Private Key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                   "-----END OPENSSH PRIVATE KEY-----",
    "AWS Access Key": "AKIAQ7EXAMPLEZ3XK4PD",
    "GitHub Token": "ghp_" + "x9Ab" * 9,
    "GitLab Token": "glpat-" + "Zy8_" * 5,
    "Basic Auth Credentials": "https://deploy:s3cr3t-pa55@git.example.com/team/app.git",
    "Slack Token": "xoxb-1234567890-0987654321-" + "abcd" * 6,
}
KINDS = list(SECRETS)
# Anthropic's keys (detect-secrets has no plugin for them: ours, base/credential_plugins.py), made
# up in the shape gitleaks matches: kind and version, 93 characters of [A-Za-z0-9_-], then AA
ANTHROPIC = {
    "Anthropic API Key": "sk-ant-api03-" + "x9Ab_-" * 15 + "Z7qAA",
    "Anthropic Admin API Key": "sk-ant-admin01-" + "-Q2w_e" * 15 + "r5TAA",
}

# writer -> (argv before the text, argv after it); the text goes where the writer takes free text
WRITERS = {
    "decision": (("decision", "add"), ("--why", "a reason")),
    "decision --why": (("decision", "add", "a decision", "--why"), ()),
    "question": (("question", "add"), ()),
    "answer": (("question", "resolve", "Q"), ()),
    "task title": (("start",), ()),
    "finish --reason": (("finish", "--outcome", "blocked", "--reason"), ()),
    "finish --verify": (("finish", "--verify"), ()),
    "handover": (("handover", "--next"), ()),
    "promote evidence": (("knowledge", "promote", "C"), ()),
    "reject --reason": (("knowledge", "reject", "C", "--reason"), ()),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """A branch with one candidate, an open question and an active task."""
    repo = make_repo(tmp_path_factory.mktemp("secrets") / "repo", capture=False)
    repo.git("checkout", "-q", "-b", "feature")
    repo.mj("session", "start", "--id", "e1", check=True)
    repo.mj("decision", "add", "a decision to review", "--why", "a candidate", check=True)
    repo.mj("session", "close", "--id", "e1", check=True)
    repo.mj("session", "start", "--id", "e2", check=True)
    repo.mj("start", "a task to finish", check=True)
    repo.mj("question", "add", "an open question", check=True)
    return repo


def _state(repo: Repo) -> dict[str, bytes]:
    return {p.relative_to(repo.root).as_posix(): p.read_bytes()
            for p in sorted((repo.root / ".ai").rglob("*")) if p.is_file() and not p.name.endswith(".lock")
            and "policy.cache" not in p.name}


def _refused(repo: Repo, writer: str, argv: list[str], stdin: str | None, kind: str, parts: list[str]) -> None:
    """`majordomus ARGV` is refused with exit 4 and one line naming `kind` and no part of the
    secret, and nothing is written."""
    held = _state(repo)
    proc = repo.mj(*argv, input=stdin)
    assert proc.returncode == 4, (writer, proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert kind in lines[0] and "credential" in lines[0], lines[0]
    for part in parts:
        assert part not in proc.stderr + proc.stdout, "the refusal repeats the secret"
    assert _state(repo) == held, f"{writer}: something was written"


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_refuses_a_credential_by_kind(repo: Repo, writer: str) -> None:
    kind = KINDS[list(WRITERS).index(writer) % len(KINDS)]
    secret = SECRETS[kind]
    question = json.loads(repo.mj("question", "list", "--json", check=True).stdout)
    qid = question[0]["question"] if isinstance(question, list) else question["questions"][0]["question"]
    [candidate] = repo.candidates()
    before, after = WRITERS[writer]
    argv = [{"Q": qid, "C": candidate.stem}.get(a, a) for a in before]
    stdin = None
    if writer == "promote evidence":
        stdin = f"Checked by hand; the deploy uses {secret}\n"
    else:
        argv += [f"the text carries {secret} inside it", *after]
    _refused(repo, writer, argv, stdin, kind, secret.splitlines())


@pytest.mark.parametrize("kind", list(ANTHROPIC))
@pytest.mark.parametrize("writer", ["decision", "handover", "promote evidence"])
def test_anthropic_keys_are_refused_by_kind(repo: Repo, writer: str, kind: str) -> None:
    secret = ANTHROPIC[kind]
    [candidate] = repo.candidates()
    before, after = WRITERS[writer]
    argv = [{"C": candidate.stem}.get(a, a) for a in before]
    stdin = None
    if writer == "promote evidence":
        stdin = f"Checked by hand with ANTHROPIC_API_KEY={secret}\n"
    else:
        argv += [f"export ANTHROPIC_API_KEY={secret} before the run", *after]
    _refused(repo, writer, argv, stdin, f"({kind})", [secret, secret[:30]])


def test_the_hooks_never_import_detect_secrets(tmp_path: Path) -> None:
    """The screen's plugins stay off the hook paths: a start and an end hook, with the import
    trace on, load no module of detect-secrets (nor ours of its plugins)."""
    repo = make_repo(tmp_path / "repo")
    repo.mj("session", "start", "--id", "e0", check=True)
    repo.mj("decision", "add", "use sqlite for the dep file", "--why", "one file", check=True)
    trace = {"PYTHONPROFILEIMPORTTIME": "1"}
    for name, payload in (("session-start", {"session_id": "e1", "source": "startup"}),
                          ("session-end", {"session_id": "e1", "reason": "other"})):
        proc = repo.hook(name, payload, env=trace)
        assert proc.returncode == 0
        imported = {line.rsplit(b"|", 1)[-1].strip().decode() for line in proc.stderr.splitlines()
                    if line.startswith(b"import time:")}
        assert "majordomus.store.ledger" in imported, name  # the trace is on
        assert not {m for m in imported if m.startswith(("detect_secrets", "majordomus.base.credential_plugins"))}, name


def test_prose_without_a_credential_passes(repo: Repo) -> None:
    for text in ("use sqlite for the dep file", "see https://example.com/docs for the API",
                 "rename knowledge_on_end_derivation to on_end", "the CI job deploy-production-eu-west-1 waits"):
        proc = repo.mj("checkpoint", "--note", text)
        assert proc.returncode == 0, (text, proc.stderr)


@pytest.mark.parametrize("where", ["body", "title"])
def test_knowledge_check_reports_a_tracked_record_carrying_one(tmp_path: Path, where: str) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    secret = SECRETS["AWS Access Key"] if where == "title" else SECRETS["Private Key"]
    title = f"Deploy with {secret}" if where == "title" else "Deploy key"
    body = f"{secret}\n" if where == "body" else "A body.\n"
    record = repo.root / ".ai/repo/knowledge/curated/leak-1.md"
    record.write_text("---\nid: leak-1\nkind: knowledge/v1\nclass: convention\nstatus: verified\n"
                      f"epistemics: decided\ntitle: {json.dumps(title)}\ndate: '2026-03-04'\n"
                      "provenance:\n  origin: extracted\n  derived_from:\n  - session:e1\n---\n" + body,
                      encoding="utf-8")
    check = repo.mj("knowledge", "check", "--json")
    assert check.returncode == 10, check.stderr
    found = [f for f in json.loads(check.stdout)["findings"] if "credential" in f["what"]]
    assert [(f["file"], f["field"]) for f in found] == [(".ai/repo/knowledge/curated/leak-1.md", where)]
    kind = "AWS Access Key" if where == "title" else "Private Key"
    assert kind in found[0]["what"]
    text = repo.mj("knowledge", "check")
    for part in secret.splitlines():
        assert part not in text.stdout + check.stdout, "the finding repeats the secret"
