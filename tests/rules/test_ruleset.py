"""The rule machinery: the vendored standard package, the effective set, dispatch, exit codes,
the doctor's own findings and notes."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from conftest import PROJECT, Repo
from rules_helpers import findings_of, project_rule, run_json, status_of

VENDOR = ".ai/repo/rules/vendor"
STANDARD = ("majordomus.agents-fired", "majordomus.candidates-reviewed", "majordomus.knowledge-integrity",
            "majordomus.knowledge-observed", "majordomus.knowledge-stale")


def test_init_vendors_the_standard_package_with_its_readme(repo: Repo) -> None:
    vendor = repo.root / VENDOR
    assert sorted(p.name for p in vendor.iterdir()) == ["README.md", *[f"{r}.yaml" for r in STANDARD]]
    assert "never edited by hand" in (vendor / "README.md").read_text(encoding="utf-8").replace("**", "")
    for rid in STANDARD:
        assert (vendor / f"{rid}.yaml").read_bytes() == (PROJECT / "rules" / f"{rid}.yaml").read_bytes()
    listed = json.loads(repo.mj("rules", "list", "--json", check=True).stdout)
    assert {(r["id"], r["class"], r["validator"], tuple(r["dispatch"])) for r in listed["rules"]} == {
        ("majordomus.knowledge-observed", "blocking", "knowledge_lifecycle", ("doctor", "watch")),
        ("majordomus.knowledge-integrity", "blocking", "knowledge_integrity", ("check", "doctor")),
        ("majordomus.candidates-reviewed", "advisory", "knowledge_accumulation", ("doctor",)),
        ("majordomus.agents-fired", "advisory", "agent_hooks_fired", ("doctor",)),
        ("majordomus.knowledge-stale", "advisory", "knowledge_currency", ("doctor", "watch")),
    }
    assert listed["problems"] == []


def test_fresh_repository_is_clean_under_all_three_commands(repo: Repo) -> None:
    for command, ran in (("check", ["majordomus.knowledge-integrity"]),
                         ("watch", ["majordomus.knowledge-observed", "majordomus.knowledge-stale"]),
                         ("doctor", list(STANDARD))):
        code, data = run_json(repo, command)
        assert code == 0 and data["exit"] == 0 and data["findings"] == [], (command, data)
        assert sorted(r["id"] for r in data["rules"]) == sorted(ran)
    assert repo.mj("doctor").stdout.count("\n") == len(STANDARD)


def test_vendor_update_restores_an_edited_deleted_or_extra_file(repo: Repo) -> None:
    vendor = repo.root / VENDOR
    edited = vendor / "majordomus.knowledge-integrity.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("class: blocking", "class: advisory"),
                      encoding="utf-8")
    (vendor / "majordomus.candidates-reviewed.yaml").unlink()
    (vendor / "stray.yaml").write_text("id: stray.rule\n", encoding="utf-8")

    code, data = run_json(repo, "doctor")
    (note,) = [n for n in data["notes"] if n["rule"] == "doctor.vendor"]
    assert "majordomus.knowledge-integrity.yaml differs" in note["what"]
    assert "majordomus.candidates-reviewed.yaml missing" in note["what"]
    assert "stray.yaml not shipped" in note["what"]
    assert note["fix"] == "majordomus rules vendor update"

    proc = repo.mj("rules", "vendor", "update", check=True)
    assert "removed    .ai/repo/rules/vendor/stray.yaml" in proc.stderr
    assert edited.read_bytes() == (PROJECT / "rules" / edited.name).read_bytes()
    assert sorted(p.name for p in vendor.iterdir()) == ["README.md", *[f"{r}.yaml" for r in STANDARD]]
    again = repo.mj("rules", "vendor", "update", check=True)
    assert "nothing changed" in again.stderr
    code, data = run_json(repo, "doctor")
    assert code == 0 and data["notes"] == [] and data["findings"] == []


def test_a_validator_no_rule_declares_is_a_doctor_finding(repo: Repo) -> None:
    (repo.root / VENDOR / "majordomus.candidates-reviewed.yaml").unlink()
    code, data = run_json(repo, "doctor")
    assert code == 10
    (finding,) = findings_of(data, "majordomus.rules")
    assert finding["what"] == "validator knowledge_accumulation is declared by no rule of the effective set"
    assert finding["blocking"] and "majordomus rules vendor update" in finding["fix"]
    text = repo.mj("doctor")
    assert text.returncode == 10
    assert "ERROR majordomus.rules: validator knowledge_accumulation" in text.stdout
    assert "  reproduce: majordomus rules list" in text.stdout
    # check and watch do not judge the machinery as a whole.
    assert repo.mj("check").returncode == 0 and repo.mj("watch").returncode == 0

    repo.mj("rules", "vendor", "update", check=True)
    assert repo.mj("doctor").returncode == 0


def test_a_rule_naming_a_missing_validator_is_a_finding(repo: Repo) -> None:
    path = project_rule(repo, "acme.no-tabs", """id: acme.no-tabs
class: blocking
validator: no_tabs
dispatch: [check]
category: style
exit: 10
message: no tabs anywhere
""")
    for command in ("check", "doctor"):
        code, data = run_json(repo, command)
        assert code == 10, command
        (finding,) = findings_of(data, "majordomus.rules")
        assert finding["what"] == "rule acme.no-tabs names validator 'no_tabs', which does not exist"
        assert finding["file"] == ".ai/repo/rules/project/acme.no-tabs.yaml"
        assert finding["field"] == "validator"
    assert repo.mj("watch").returncode == 0  # the rule does not name watch
    assert "no_tabs (missing)" in repo.mj("rules", "list", check=True).stdout

    path.unlink()
    assert repo.mj("check").returncode == 0 and repo.mj("doctor").returncode == 0


def test_a_project_rule_reusing_a_validator_runs_from_its_own_commands(repo: Repo) -> None:
    project_rule(repo, "acme.integrity-watched", """id: acme.integrity-watched
class: blocking
validator: knowledge_integrity
dispatch: watch
category: knowledge
exit: 10
message: the store stays consistent, watched
""")
    code, data = run_json(repo, "watch")
    assert code == 0
    assert {r["id"]: r["origin"] for r in data["rules"]} == {
        "majordomus.knowledge-observed": "vendor", "majordomus.knowledge-stale": "vendor",
        "acme.integrity-watched": "project"}


def test_malformed_rule_files_are_named_field_by_field(repo: Repo) -> None:
    project = repo.root / ".ai/repo/rules/project"
    project_rule(repo, "acme.bad", """id: acme.bad
class: severe
validator: knowledge_integrity
dispatch: [check, deploy]
exit: 11
message: ""
colour: red
""")
    (project / "acme.misnamed.yaml").write_text(
        (repo.root / VENDOR / "majordomus.knowledge-integrity.yaml").read_text(encoding="utf-8")
        .replace("id: majordomus.knowledge-integrity", "id: acme.other"), encoding="utf-8")
    (project / "acme.broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    (project / "majordomus.knowledge-integrity.yaml").write_text(
        (repo.root / VENDOR / "majordomus.knowledge-integrity.yaml").read_text(encoding="utf-8"),
        encoding="utf-8")
    code, data = run_json(repo, "check")
    assert code == 10
    got = {(f["file"].rsplit("/", 1)[-1], f["field"]) for f in findings_of(data, "majordomus.rules")}
    assert got == {("acme.bad.yaml", "class"), ("acme.bad.yaml", "dispatch"), ("acme.bad.yaml", "message"),
                   ("acme.bad.yaml", "category"), ("acme.bad.yaml", "colour"),
                   ("acme.misnamed.yaml", "id"), ("acme.broken.yaml", None),
                   ("majordomus.knowledge-integrity.yaml", "id")}
    # The readable rules still ran.
    assert status_of(data, "majordomus.knowledge-integrity") == "ok"
    for name in ("acme.bad.yaml", "acme.misnamed.yaml", "acme.broken.yaml",
                 "majordomus.knowledge-integrity.yaml"):
        (project / name).unlink()
    assert repo.mj("check").returncode == 0


def test_watch_exits_11_on_advisory_drift_only_and_10_when_blocking(repo: Repo) -> None:
    # An untracked candidate: what candidates-reviewed warns about. It is dispatched from doctor
    # only, so watch stays 0 and doctor warns with exit 0.
    from rules_helpers import write_candidate

    write_candidate(repo, "e7-000000000001")
    assert repo.mj("watch").returncode == 0
    doctor = repo.mj("doctor")
    assert doctor.returncode == 0 and "WARN majordomus.candidates-reviewed" in doctor.stdout
    # A project rule putting the same validator under watch, advisory: drift, exit 11.
    rule = project_rule(repo, "acme.queue-watched", """id: acme.queue-watched
class: advisory
validator: knowledge_accumulation
dispatch: [watch]
category: knowledge
exit: 11
message: the review queue, watched
""")
    code, data = run_json(repo, "watch")
    assert code == 11 and data["exit"] == 11
    assert findings_of(data, "acme.queue-watched") and not any(f["blocking"] for f in data["findings"])
    # Blocking wins over advisory.
    rule.write_text(rule.read_text(encoding="utf-8").replace("class: advisory", "class: blocking")
                    .replace("exit: 11", "exit: 10"), encoding="utf-8")
    assert repo.mj("watch").returncode == 10
    rule.unlink()
    assert repo.mj("watch").returncode == 0


def test_mj_timing_prints_each_rule_and_doctor_reports_its_budget(repo: Repo) -> None:
    plain = repo.mj("check", check=True)
    assert "MJ_TIMING" not in plain.stderr
    timed = repo.mj("doctor", env={"MJ_TIMING": "1"}, check=True)
    for rid in STANDARD:
        assert f"MJ_TIMING rule {rid}: " in timed.stderr
    assert "MJ_TIMING doctor: " in timed.stderr
    assert "ms budget" in plain.stderr or "ms budget" in repo.mj("doctor").stderr
    code, data = run_json(repo, "doctor")
    assert data["timing"]["budget_ms"] > 0 and set(data["timing"]["rules"]) == set(STANDARD)


def test_doctor_notes_malformed_ledger_lines_and_the_outbox_without_failing(episode: Repo) -> None:
    ledger = episode.root / ".ai/local/ledger.jsonl"
    first = len(ledger.read_text(encoding="utf-8").splitlines()) + 1
    with open(ledger, "a", encoding="utf-8") as handle:
        handle.write('{"ts": "2026-01-01T00:00:00Z", "event": \n')
        handle.write("not json at all\n")
    outbox = episode.root / ".ai/local/state/outbox"
    (outbox / "candidates" / "e9-000000000001.md").write_text("---\n", encoding="utf-8")
    (outbox / "sessions" / "e9.md").write_text("---\n", encoding="utf-8")
    (outbox / "sessions" / "e8.md").write_text("---\n", encoding="utf-8")
    code, data = run_json(episode, "doctor")
    assert code == 0
    notes = {n["rule"]: n for n in data["notes"]}
    assert notes["doctor.ledger"]["what"].startswith(f"2 malformed ledger line(s), the first at line {first}")
    assert notes["doctor.ledger"]["reproduce"] == f"sed -n '{first}p' .ai/local/ledger.jsonl"
    assert "2 session record(s) and 1 candidate(s)" in notes["doctor.outbox"]["what"]
    assert ".ai/local/state/outbox/{sessions,candidates}/" in notes["doctor.outbox"]["what"]
    assert "majordomus drain" in notes["doctor.outbox"]["fix"]
    assert not any(n["blocking"] for n in data["notes"])
    text = episode.mj("doctor").stdout
    assert "NOTE doctor.ledger" in text and "NOTE doctor.outbox" in text


def test_pre_commit_hook_is_shipped_and_documented() -> None:
    (hook,) = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook == {"id": "majordomus-check", "name": "majordomus check",
                    "description": hook["description"], "entry": "majordomus check",
                    "language": "python", "pass_filenames": False, "always_run": True}
    docs = (PROJECT / "docs" / "RULES.md").read_text(encoding="utf-8")
    assert "id: majordomus-check" in docs and ".pre-commit-config.yaml" in docs


def test_shipped_rules_are_forced_into_the_wheel() -> None:
    text = (PROJECT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"rules" = "majordomus/_data/rules"' in text
    assert Path(PROJECT / "rules").is_dir()


def test_a_crashing_validator_is_a_finding_and_the_other_rules_still_run(repo: Repo) -> None:
    from majordomus.rules import dispatch
    from majordomus.rules.validators import REGISTRY
    from majordomus.store.workspace import Workspace

    def explodes(ctx: object, rule: object) -> object:
        raise RuntimeError("boom")

    project_rule(repo, "acme.explodes", """id: acme.explodes
class: blocking
validator: explodes
dispatch: [check]
category: test
exit: 10
message: always crashes
""")
    REGISTRY["explodes"] = explodes
    try:
        report = dispatch.run(Workspace(repo.root), "check")
    finally:
        del REGISTRY["explodes"]
    (crash,) = [f for f in report.findings if f.rule == "acme.explodes"]
    assert crash.blocking and crash.what == "validator explodes failed: RuntimeError: boom"
    assert crash.reproduce == "MJ_DEBUG=1 majordomus check"
    assert [r.rule.id for r in report.ran] == ["majordomus.knowledge-integrity", "acme.explodes"]
    assert report.exit_code == 10


def test_a_folder_named_like_a_record_is_not_read_as_one(repo: Repo) -> None:
    (repo.root / ".ai/repo/knowledge/candidates/e1-000000000001.md").mkdir()
    code, data = run_json(repo, "doctor")
    assert code == 0 and data["findings"] == [], data


def test_the_rule_set_is_kept_by_stat_and_an_edited_rule_is_read_again(repo: Repo) -> None:
    """The parsed rule files are kept in `.ai/local/state/rules.cache.json` (doctor need not import
    YAML); a file edited in place is parsed again, and deleting the cache changes no output."""
    import time

    time.sleep(0.1)  # past the file system's tick since init wrote the rules: their stats can vouch
    first = repo.mj("rules", "list", "--json", check=True).stdout
    cache = repo.root / ".ai/local/state/rules.cache.json"
    kept = json.loads(cache.read_text(encoding="utf-8"))["folders"][VENDOR]
    assert sorted(kept) == [f"{r}.yaml" for r in STANDARD]
    rule = repo.root / VENDOR / "majordomus.knowledge-stale.yaml"
    text = rule.read_text(encoding="utf-8")
    old = yaml.safe_load(text)["message"]
    with open(rule, "r+", encoding="utf-8") as handle:  # in place: same inode, as an editor may
        handle.write(text.replace(old, "an edited message", 1))
        handle.truncate()
    edited = json.loads(repo.mj("rules", "list", "--json", check=True).stdout)
    assert {r["id"]: r["message"] for r in edited["rules"]}["majordomus.knowledge-stale"] == "an edited message"
    time.sleep(0.1)
    again = repo.mj("rules", "list", "--json", check=True).stdout
    cache.unlink()
    assert repo.mj("rules", "list", "--json", check=True).stdout == again != first
