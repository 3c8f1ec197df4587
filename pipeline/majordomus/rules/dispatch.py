"""Rule dispatch: `check`, `doctor` and `watch` run the rules of the effective set that name them.

Exit: 10 when any finding is blocking; under `watch`, 11 when the findings are advisory only;
else 0. Every command blocks on a policy key (or file) the commands read with its default in its
place (`majordomus.policy`). `doctor` also checks the machinery (every registered validator
declared by a rule, every declared validator registered, the vendored copy equal to the installed
package) and notes what is worth knowing but fails nothing: malformed ledger lines, a non-empty
trunk outbox, an open episode past `session.orphan_after_minutes`, its budget. Text output groups
one finding over many files into one (`base.findings.grouped`); `--json` keeps each.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any, NamedTuple

from majordomus.base.errors import ADVISORY, BLOCKING, OK, FatalError
from majordomus.base.findings import Finding, grouped
from majordomus.evidence import episodes
from majordomus.outbox import staging as outbox
from majordomus.rules import ruleset as rules
from majordomus.rules import vendor
from majordomus.rules.ruleset import MACHINERY, Rule, RuleSet
from majordomus.rules.validators import REGISTRY, Context, Verdict
from majordomus.knowledge.worktree import Worktree
from majordomus.store.workspace import Workspace
from majordomus.base.lean import pattern

DOCTOR_BUDGET_MS = 2000.0  # doctor's whole run, reported against on every run
POLICY = "majordomus.policy"  # the rule id of findings about the policy file
_FIX = pattern(r": (?=set it to |did you mean |remove it|fix that line|fix it)")


class Ran(NamedTuple):
    rule: Rule
    verdict: Verdict
    ms: float


class Report:
    """What one run of the rules found (plain classes here: no `dataclasses` import for doctor)."""

    __slots__ = ("command", "ran", "problems", "notes", "total_ms")

    def __init__(self, command: str) -> None:
        self.command = command
        self.ran: list[Ran] = []
        self.problems: list[Finding] = []  # the machinery's own findings
        self.notes: list[Finding] = []  # doctor's observations; never fail
        self.total_ms = 0.0

    @property
    def findings(self) -> list[Finding]:
        return self.problems + [f for r in self.ran for f in r.verdict.findings]

    @property
    def exit_code(self) -> int:
        found = self.findings
        if any(f.blocking for f in found):
            return BLOCKING
        if found and self.command == "watch":
            return ADVISORY
        return OK


def _machinery(ws: Workspace, ruleset: RuleSet, command: str, everything: bool) -> list[Finding]:
    """Rules naming an unregistered validator (those `command` would run, or all under doctor)
    and, under doctor, registered validators no rule declares."""

    found = []
    for rule in ruleset.rules:
        if rule.validator not in REGISTRY and (everything or command in rule.dispatch):
            found.append(Finding(MACHINERY, f"rule {rule.id} names validator {rule.validator!r}, "
                                 "which does not exist", f"name one of {', '.join(sorted(REGISTRY))} "
                                 f"in {ws.rel(rule.path)}, or remove the rule", True,
                                 file=ws.rel(rule.path), field="validator",
                                 reproduce="majordomus rules list"))
    if everything:
        declared = {r.validator for r in ruleset.rules}
        for name in sorted(set(REGISTRY) - declared):
            found.append(Finding(MACHINERY, f"validator {name} is declared by no rule of the "
                                 "effective set", "restore the standard package: `majordomus rules "
                                 "vendor update`", True, reproduce="majordomus rules list"))
    return found


def _policy(ws: Workspace) -> list[Finding]:
    """Each problem of the policy file, blocking: the commands go on with the key's default, and
    this is where the person who can fix the file is told how."""
    policy, rel = ws.policy, ws.rel(ws.policy_path)
    found = []
    for key, message in policy.problems:
        text = message.replace(str(ws.policy_path), rel)
        cut = _FIX().search(text)
        what, fix = (text[:cut.start()], text[cut.end():]) if cut else (text, f"edit {rel}")
        where = re.match(rf"({re.escape(rel)}(?::\d+)?): ", what)
        file = where.group(1) if where else rel
        what = what[where.end():] if where else what
        tail = "its default stands in meanwhile" if key else "every key has its default meanwhile"
        found.append(Finding(POLICY, f"{what} ({tail})", fix, True, file=file, field=key or None,
                             reproduce=f"grep -n '{key.rsplit('.', 1)[-1]}' {rel}" if key
                             else f"git diff -- {rel}"))
    return found


def _notes(ws: Workspace, ctx: Context) -> list[Finding]:
    notes = []
    read = ctx.ledger()
    if read.malformed:
        rel = ws.rel(ws.ledger.path)
        notes.append(Finding("doctor.ledger", f"{read.malformed} malformed ledger line(s), the first at "
                             f"line {read.first_malformed}: every reader skips them",
                             "none needed, readers skip them; if the count grows, find the writer that "
                             "appends partial lines", False, file=rel,
                             reproduce=f"sed -n '{read.first_malformed}p' {rel}"))
    box = outbox.pending(ws)
    if box["total"]:
        where, conflicts = box["where"], box["conflicts"]
        kept = (f"; {len(conflicts)} of them kept, a tracked file of the same name holds other bytes: "
                + ", ".join(conflicts)) if conflicts else ""
        notes.append(Finding("doctor.outbox", f"the trunk outbox holds {box['sessions']} session "
                             f"record(s) and {box['candidates']} candidate(s) in "
                             f"{where}/{{sessions,candidates}}/: they become tracked when an episode "
                             f"on another branch drains them{kept}",
                             "compare each kept record with its tracked namesake and delete the wrong "
                             "copy, then run `majordomus drain` on a branch" if conflicts else
                             "start a branch and run `majordomus drain`",
                             False, reproduce=f"ls {where}/sessions {where}/candidates"))
    minutes = int(ws.policy["session.orphan_after_minutes"])
    quiet = episodes.quiet_open(ws, minutes, ctx.now) if minutes > 0 else []
    for episode in quiet:
        notes.append(Finding("doctor.episodes", f"episode {episode} is open and has had no ledger line "
                             f"for more than session.orphan_after_minutes ({minutes}): its end never "
                             "came, and the next session start closes it as orphaned",
                             f"close it now: majordomus session close --id {episode} --reason orphaned",
                             False, file=ws.rel(episodes.open_dir(ws) / f"{episode}.json"),
                             reproduce=f"majordomus history --episode {episode}"))
    for episode in episodes.derivations_waiting(ws):
        notes.append(Finding("doctor.derivations", f"the derivation of episode {episode} did not happen "
                             "at its boundary (a lock held, a signal, a failure): the next session "
                             "boundary runs it again",
                             f"run it now: majordomus knowledge derive --episode {episode}", False,
                             file=ws.rel(episodes.waiting_dir(ws) / episode),
                             reproduce=f"majordomus history --episode {episode} --event provider.event.failed"))
    drift = vendor.drift(ws)
    if drift:
        notes.append(Finding("doctor.vendor", "the vendored rules differ from the installed package: "
                             + ", ".join(drift), "majordomus rules vendor update", False,
                             file=ws.rel(ws.repo / "rules" / "vendor")))
    return notes


def run(ws: Workspace, command: str, now: float | None = None, worktree: Worktree | None = None) -> Report:
    """Run `command`'s rules of the effective set, timing each; `worktree`: git's word on the files
    under `.ai/repo/`, when the caller asked it ahead (doctor's command, before its imports)."""

    started = time.perf_counter()
    doctor = command == "doctor"
    ctx = Context(ws, trusted=doctor) if now is None else Context(ws, now=now, trusted=doctor)
    report = Report(command)
    ruleset = rules.load(ws)
    chosen = ruleset.for_command(command)
    ctx.start({rule.validator for rule in chosen if rule.validator in REGISTRY}, worktree)  # git works meanwhile
    try:
        report.problems = _policy(ws) + ruleset.problems + _machinery(ws, ruleset, command, doctor)
        foreign = ws.foreign_local() if doctor else None
        if foreign:
            report.problems.append(Finding("doctor.local", foreign.split(": run ", 1)[0],
                                           "`git rm -r --cached .ai/local`, add `.ai/local/` to .gitignore, then commit",
                                           True, file=".ai/local", reproduce="git ls-files .ai/local"))
        if doctor:
            report.notes = _notes(ws, ctx)
        for rule in chosen:
            fn = REGISTRY.get(rule.validator)
            if fn is None:
                continue
            t0 = time.perf_counter()
            verdict = _judge(fn, ctx, rule, command)
            report.ran.append(Ran(rule, verdict, (time.perf_counter() - t0) * 1000))
    finally:
        ctx.end()
    report.total_ms = (time.perf_counter() - started) * 1000
    return report


def _judge(fn: Any, ctx: Context, rule: Rule, command: str) -> Verdict:
    """One validator's verdict; a validator that crashes is a finding of its rule, at its class,
    and the other rules still run. A `FatalError` (a cause with a known fix) goes to the handler."""

    try:
        return fn(ctx, rule)  # type: ignore[no-any-return]
    except FatalError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported as a finding, never a traceback
        if os.environ.get("MJ_DEBUG") == "1":
            raise
        return Verdict([Finding(rule.id, f"validator {rule.validator} failed: {type(exc).__name__}: "
                                f"{exc}", "rerun with MJ_DEBUG=1 for the traceback and report it",
                                rule.blocking, reproduce=f"MJ_DEBUG=1 majordomus {command}")])


def timing() -> bool:
    return os.environ.get("MJ_TIMING") == "1"


def render_text(report: Report) -> tuple[str, list[str]]:
    """(stdout: the findings and each rule's state, stderr lines: the summary and timings)."""
    out: list[str] = grouped(report.problems)
    for ran in report.ran:
        out += grouped(ran.verdict.findings)
        if ran.verdict.skipped:
            out.append(f"SKIP {ran.rule.id}: {ran.verdict.skipped}")
        if not ran.verdict.findings and not ran.verdict.skipped:
            out.append(f"ok   {ran.rule.id}" + (f": {ran.verdict.detail}" if ran.verdict.detail else ""))
    for note in report.notes:
        out.append(note.line().replace("WARN ", "NOTE ", 1))
    found = report.findings
    blocking = sum(f.blocking for f in found)
    talk = [f"{report.command}: {len(report.ran)} rule(s), {blocking} blocking, "
            f"{len(found) - blocking} advisory, {sum(bool(r.verdict.skipped) for r in report.ran)} skipped"
            f" -> exit {report.exit_code}"]
    if timing():
        talk += [f"MJ_TIMING rule {r.rule.id}: {r.ms:.1f} ms" for r in report.ran]
        talk.append(f"MJ_TIMING {report.command}: {report.total_ms:.1f} ms")
    if report.command == "doctor":
        over = report.total_ms > DOCTOR_BUDGET_MS
        talk.append(f"doctor: {report.total_ms:.0f} ms of a {DOCTOR_BUDGET_MS:.0f} ms budget"
                    + (" (OVER BUDGET: MJ_TIMING=1 names the slow rule)" if over else ""))
    return "\n".join(out) + ("\n" if out else ""), talk


def as_data(report: Report) -> dict[str, Any]:
    data: dict[str, Any] = {
        "command": report.command,
        "exit": report.exit_code,
        "rules": [{"id": r.rule.id, "class": r.rule.cls, "validator": r.rule.validator,
                   "origin": r.rule.origin,
                   "status": "findings" if r.verdict.findings else ("skipped" if r.verdict.skipped else "ok"),
                   "skipped": r.verdict.skipped, "detail": r.verdict.detail} for r in report.ran],
        "findings": [f.as_dict() for f in report.findings],
        "notes": [n.as_dict() for n in report.notes],
    }
    if report.command == "doctor" or timing():
        data["timing"] = {"total_ms": round(report.total_ms, 1),
                          "rules": {r.rule.id: round(r.ms, 1) for r in report.ran}}
        if report.command == "doctor":
            data["timing"]["budget_ms"] = DOCTOR_BUDGET_MS
    return data
