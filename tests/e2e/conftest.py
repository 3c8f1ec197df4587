"""Fixtures of the real-client suite (`make e2e`): a throwaway repository after `majordomus init`
and `capture install`, a throwaway HOME for the client, the fake Messages API, the audit of the
majordomus processes, and the client itself installed from the npm registry."""
from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

import claude_driver
import npm_client
from claude_driver import Claude
from fake_anthropic import FakeAnthropic
from harness import Audit, ThrowawayRepo, clean_env, make_repo

# Hook wall times seen in this run, for the summary at the end (reported, never asserted).
HOOK_TIMES: dict[str, list[float]] = {}
CLIENT_TIMES: dict[str, list[float]] = {}
CANCELLED: list[str] = []


@pytest.fixture(scope="session")
def claude_executable() -> Path:
    """Claude Code at the pinned version, from the npm registry or the cache under .venv/."""
    return npm_client.install(claude_driver.PACKAGE, claude_driver.VERSION, claude_driver.BIN)


@pytest.fixture
def client_home(tmp_path: Path) -> Path:
    """The client's HOME: its settings, transcripts and session files land here, nowhere else."""
    home = tmp_path / "client-home"
    home.mkdir()
    return home


@pytest.fixture
def e2e_repo(tmp_path: Path, client_home: Path) -> ThrowawayRepo:
    """A real git repository (fixed identity, branch main) after `majordomus init` and
    `majordomus capture install`, both committed."""
    return make_repo(tmp_path / "repo", clean_env(client_home))


@pytest.fixture
def audit(tmp_path: Path, client_home: Path, e2e_repo: ThrowawayRepo) -> Audit:
    """Every Python process under the client records itself and any open() of the client's files
    (its transcripts among them) or of the repository's candidates folder (who derives)."""
    return Audit(tmp_path / "audit.jsonl",
                 [client_home / ".claude", e2e_repo.root / ".ai" / "repo" / "knowledge" / "candidates"])


@pytest.fixture
def fake_api(tmp_path: Path) -> Iterator[FakeAnthropic]:
    """The fake Messages API on 127.0.0.1; it stops at the test's end, or by itself."""
    with FakeAnthropic(log_path=tmp_path / "requests.jsonl", deadline_s=900, idle_s=300) as fake:
        yield fake
    assert fake.errors == [], f"the fake's script failed: {fake.errors}"


@pytest.fixture
def claude(claude_executable: Path, e2e_repo: ThrowawayRepo, client_home: Path, fake_api: FakeAnthropic,
           audit: Audit, tmp_path: Path) -> Iterator[Claude]:
    client = Claude(claude_executable, e2e_repo, client_home, fake_api, audit, tmp_path)
    yield client
    for process in audit.hooks():
        if process.wall_ms is not None:
            HOOK_TIMES.setdefault(process.hook or "?", []).append(process.wall_ms)
    for run in client.runs:
        for hook in run.hooks:
            if hook.ms is not None:
                CLIENT_TIMES.setdefault(f"{hook.event}:{hook.matcher}", []).append(hook.ms)
            if hook.status == "cancelled":
                CANCELLED.append(f"{hook.event}:{hook.matcher}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not HOOK_TIMES and not CLIENT_TIMES:
        return
    write = terminalreporter.write_line
    terminalreporter.section(f"hook wall times inside Claude Code {claude_driver.VERSION}")

    def show(label: str, times: list[float]) -> None:
        write(f"{label:<28} n={len(times):<3} median {statistics.median(times):6.0f} ms   max {max(times):6.0f} ms")

    write("from the hook script's start to majordomus's exit (audit):")
    for name, times in sorted(HOOK_TIMES.items()):
        show(f"  {name}", times)
    write("as the client's debug log states them:")
    for name, times in sorted(CLIENT_TIMES.items()):
        show(f"  {name}", times)
    if CANCELLED:
        write(f"cancelled by the client (its time budget ran out): {', '.join(CANCELLED)}")
