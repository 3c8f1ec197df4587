"""The validator registry: the Python functions rules name in their `validator:` key.

A validator takes the run's `Context` and the `Rule` that dispatched it and returns a `Verdict`:
its findings (made at the rule's class), and, when it could not judge, why (a skip, never red).
A validator no rule of the effective set declares is a doctor finding; so is a rule naming one
that is not registered here.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from majordomus.base import git
from majordomus.base.findings import Finding
from majordomus.evidence import episodes
from majordomus.knowledge import accumulation as acc
from majordomus.knowledge import currency, freshness, integrity, queue
from majordomus.knowledge.freshness import read_events
from majordomus.knowledge.verdict import fix
from majordomus.knowledge.worktree import Worktree
from majordomus.rules import wiring
from majordomus.rules.ruleset import Rule
from majordomus.store import agents, index, records
from majordomus.store.facts import Facts
from majordomus.store.filecache import FileCache
from majordomus.store.ledger import Line, ReadResult
from majordomus.store.workspace import Workspace

REPRODUCE_OBSERVED = "majordomus history --event session.closed --event knowledge.derived"
OVERDUE_AS_ONE = 3  # overdue candidates from this many on are one finding, naming the oldest


class Verdict:
    """A rule's judgement (plain classes here: no `dataclasses` import for doctor, `check`, `watch`)."""

    __slots__ = ("findings", "skipped", "detail")

    def __init__(self, findings: list[Finding] | None = None, skipped: str | None = None,
                 detail: str | None = None) -> None:
        self.findings: list[Finding] = findings if findings is not None else []
        self.skipped = skipped  # why (part of) the rule did not judge
        self.detail = detail  # what a clean judgement found, one line


class Context:
    """What one run of the rules shares: the workspace, the ledger's facts (kept in the knowledge
    index and extended over what was appended since: no pass over the whole ledger), the clock."""

    __slots__ = ("ws", "now", "trusted", "_facts", "_listing", "_acts", "_sessions", "_worktree")

    def __init__(self, ws: Workspace, now: float | None = None, trusted: bool = False,
                 _facts: Facts | None = None, _listing: git.Listing | None = None) -> None:
        self.ws = ws
        self.now = time.time() if now is None else now
        self.trusted = trusted  # doctor: the index's integrity view stands for the record files that kept their stamp
        self._facts = _facts
        self._listing = _listing
        self._acts: git.Running | None = None
        self._sessions: list[os.DirEntry[str]] | OSError | None = None
        self._worktree: Worktree | None = None

    def start(self, validators: set[str], worktree: Worktree | None = None) -> None:
        """Start the git processes the rules of `validators` will read (git's listing, the review
        acts' status, under doctor git's word on the files under `.ai/repo/`), so that git works while the run does: each is read where it was read. The
        knowledge index is held for the run (`Index.hold`): a folder checked file by file once is
        not checked again by a later rule. `worktree`: git's word asked ahead by the caller (used
        under doctor's integrity rule, else stopped)."""
        index.of(self.ws).hold()
        if worktree is not None and not (worktree.root == self.ws.root and worktree.state == self.ws.state
                                         and "knowledge_integrity" in validators and self.trusted):
            worktree.end()
            worktree = None
        if "knowledge_integrity" in validators and self.trusted:  # git's index stamped before any git reads it
            self._worktree = worktree or Worktree(self.ws.root, self.ws.state)
        if self._worktree is not None:
            self._worktree.start()
        if validators & {"knowledge_accumulation", "knowledge_integrity"} and (
                self._worktree is None or self._worktree.held is None):  # else nothing changed since git's
            # word was last asked whole: the kept judgement and git's word answer, the listing is asked if read
            self.listing().start()
        if "knowledge_accumulation" in validators:
            try:
                self._acts = acc.acts_asked(self.ws)
            except OSError:  # git cannot be started: the rule says so where it asks
                pass

    def acts(self) -> git.Running | None:
        """The review acts' `git status` started by `start` (None: not started), handed out once."""
        asked, self._acts = self._acts, None
        return asked

    def end(self) -> None:
        """Stop what `start` asked and no rule read (a rule that failed before it read it); release
        the index."""
        index.of(self.ws).release()
        if self._acts is not None:
            self._acts.end()
        if self._listing is not None:
            self._listing.end()
        if self._worktree is not None:
            self._worktree.end()

    def untracked(self, folder: str) -> set[str] | None:
        """The names of the files right in `folder` git's index does not hold, from git's word on
        the files under `.ai/repo/` that doctor asks ahead (`integrity.Worktree`); None when it was
        not asked or could not say."""
        return self._worktree.untracked(folder) if self._worktree is not None else None

    def listing(self) -> git.Listing:
        """git's listing of the tracked files, asked once a run (the queue's rule and the integrity
        rule both read it)."""
        if self._listing is None:
            self._listing = git.Listing(self.ws.root)
        return self._listing

    def sessions(self) -> list[os.DirEntry[str]]:
        """The entries of the sessions folder, listed once a run: the queue rule's tracking and the
        integrity rule's references each read it, each filtering it its own way (at a million
        ledger lines, 20,000 names listed twice). The listing's OSError is raised to each."""
        if self._sessions is None:
            try:
                with os.scandir(self.ws.sessions) as listing:
                    self._sessions = list(listing)
            except OSError as exc:
                self._sessions = exc
        if isinstance(self._sessions, OSError):
            raise self._sessions
        return self._sessions

    def facts(self) -> Facts:
        """The ledger's facts (store/facts.py), read once a run."""
        if self._facts is None:
            self._facts = acc.facts(self.ws)
        return self._facts

    def records(self, folder: Path) -> list[str]:
        """The record files of `folder`, sorted: the index's, checked against the folder's stamp
        (which changes with every name added, removed or renamed in it), else a scan."""
        found = index.of(self.ws).names(folder)
        return found if found is not None else records.names(folder)

    def ledger(self) -> ReadResult:
        """The malformed lines of the whole ledger, counted (no lines kept)."""
        return self.facts().result()

    def events(self, *names: str) -> list[Line]:
        """The lines of `names`, in order, read on their own (a substring pre-filter)."""
        return read_events(self.ws, names)


Validator = Callable[[Context, Rule], Verdict]
REGISTRY: dict[str, Validator] = {}


def validator(name: str) -> Callable[[Validator], Validator]:
    def register(fn: Validator) -> Validator:
        REGISTRY[name] = fn
        return fn
    return register


@validator("knowledge_lifecycle")
def knowledge_lifecycle(ctx: Context, rule: Rule) -> Verdict:
    """majordomus.knowledge-observed: a stopped knowledge writer, or a close path not wired to it.

    Only the freshness half is gated (not judged until the first derivation). The wiring half is
    not: a close path that never calls the deriver never writes the first knowledge.derived line,
    so a gated wiring check would stay a skip for ever in exactly the repository it is for. When
    the wiring is broken and freshness is not judged yet, the rule reports one finding that says
    both, not an ERROR and a SKIP side by side."""

    ws, verdict = ctx.ws, Verdict()
    wired = ws.policy.on("session.knowledge_on_end")
    judged = freshness.judge(ws, ctx.facts().freshness_lines(), now=ctx.now)
    if wired:
        problem, source = wiring.check(cache=FileCache(ws.state / wiring.CACHE, wiring.VERSION, ws.root))
        if problem:
            pending = "" if judged.judged else f" (freshness is not judged yet: {judged.reason})"
            verdict.findings.append(rule.finding(
                f"session.knowledge_on_end is on but the close path does not derive: {problem}{pending}",
                "reinstall majordomus (`pip install --force-reinstall majordomus`): every close must "
                "call the deriver before it appends session.closed",
                reproduce=f"grep -n 'derive_on_close\\|session.closed' {source}"))
    if not judged.judged:
        if not verdict.findings:
            verdict.skipped = judged.reason
    elif not judged.fresh:
        verdict.findings.append(rule.finding(
            judged.reason + f" (session.freshness.stale_minutes is "
            f"{ws.policy['session.freshness.stale_minutes']})",
            f"majordomus knowledge derive --episode {judged.episode}", reproduce=REPRODUCE_OBSERVED))
    else:
        verdict.detail = judged.reason
    if not wired and verdict.detail:
        verdict.detail += " (close-path wiring not checked: session.knowledge_on_end is off)"
    return verdict


@validator("knowledge_integrity")
def knowledge_integrity(ctx: Context, rule: Rule) -> Verdict:
    """majordomus.knowledge-integrity: the integrity validator of `knowledge check`; under doctor
    it trusts the index for the record files that kept their stamp (`check`, the pre-commit gate,
    reads every record)."""

    found = integrity.check(ctx.ws, ctx.facts(), trusted=ctx.trusted, listing=ctx.listing(), sessions=ctx.sessions,
                            worktree=ctx._worktree)
    return Verdict([f._replace(rule=rule.id, blocking=rule.blocking and f.blocking,
                            reproduce=f.reproduce or "majordomus knowledge check") for f in found],
                   detail=None if found else "every record is consistent")


@validator("knowledge_accumulation")
def knowledge_accumulation(ctx: Context, rule: Rule) -> Verdict:
    """majordomus.candidates-reviewed: the queue is tracked, short and young enough."""

    ws, verdict = ctx.ws, Verdict()
    policy = ws.policy
    undeclared = [k for k in acc.KEYS if not policy.declares(k)]
    if undeclared:
        verdict.findings.append(rule.finding(
            f"the policy does not declare {' nor '.join(undeclared)}: the defaults "
            f"({', '.join(f'{k}={policy[k]}' for k in undeclared)}) apply unseen",
            "declare them under `knowledge:` in .ai/repo/policy.yaml (`majordomus init` shows the skeleton's)",
            file=ws.rel(ws.policy_path), field=", ".join(undeclared),
            reproduce=f"grep -n -A3 '^knowledge:' {ws.rel(ws.policy_path)}"))
    names, sinces, details = _waiting(ctx)
    cap, max_age = policy["knowledge.candidates_max_files"], policy["knowledge.candidate_max_age_minutes"]
    review = "review them: `majordomus knowledge promote <id>` or `majordomus knowledge reject <id> --reason …`"
    if len(names) > cap:
        ids = [os.path.splitext(name)[0] for name in names[:10]]  # the ten named: not 8,000
        named = ", ".join(ids) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        verdict.findings.append(rule.finding(
            f"{len(names)} candidates await review, more than knowledge.candidates_max_files "
            f"({cap}): {named}", review, reproduce="majordomus knowledge candidates"))
    now = ctx.now
    overdue = [(now - since, name, detail) for name, since, detail in zip(names, sinces, details)
               if since is not None and (now - since) / 60.0 > max_age]
    where = os.fspath(ws.candidates) + os.sep
    if len(overdue) >= OVERDUE_AS_ONE:  # one finding for them all, the oldest named (names differ: no tie)
        waited, oldest, detail = max(overdue)
        path = Path(where + oldest)
        verdict.findings.append(rule.finding(
            f"{len(overdue)} candidates have waited longer than knowledge.candidate_max_age_minutes "
            f"({max_age}) for review; the oldest, {path.stem}, {acc.minutes(waited)} (measured from {detail})",
            "review them: `majordomus knowledge review` walks the queue", file=ws.rel(ws.candidates) + "/",
            reproduce="majordomus knowledge candidates"))
        overdue = []
    for waited, one, detail in overdue:
        path = Path(where + one)
        verdict.findings.append(rule.finding(
            f"candidate {path.stem} has waited {acc.minutes(waited)} for review, more than "
            f"knowledge.candidate_max_age_minutes ({max_age}); measured from {detail}",
            f"review it: `majordomus knowledge promote {path.stem}` or "
            f"`majordomus knowledge reject {path.stem} --reason …`",
            file=ws.rel(path), reproduce=f"majordomus knowledge record {path.stem}"))
    candidates, sessions = ctx.untracked(ws.rel(ws.candidates)), ctx.untracked(ws.rel(ws.sessions))
    if candidates is None or sessions is None:  # git's word on the files not asked (or not given): its listing
        held = acc.tracked(ws, ctx.listing())
        where = ws.rel(ws.candidates) + "/"  # one relative path made, not one a record
        loose = [name for name in ctx.records(ws.candidates) if where + name not in held]
        where = ws.rel(ws.sessions) + "/"
        unheld = [name for name in acc.session_records(ws, ctx.sessions) if where + name not in held]
    else:  # none, nearly always: neither folder listed nor its names compared
        loose = [name for name in ctx.records(ws.candidates) if name in candidates] if candidates else []
        unheld = [name for name in acc.session_records(ws, ctx.sessions) if name in sessions] if sessions else []
    for found, folder, what, beside in (
            (loose, ws.candidates, "git does not track this candidate: a record git does not hold is "
             "discovered by nothing and reviewed by nobody", "its session record"),
            (unheld, ws.sessions, "git does not track this session record: the episode it closes is placed "
             "on its branch by no other checkout, and its candidates are unattributed there", "the episode's candidates")):
        for name in found:
            path = folder / name
            verdict.findings.append(rule.finding(
                what, f"git add {ws.rel(path)} && git commit (beside {beside})",
                file=ws.rel(path), reproduce=f"git status --short -- {ws.rel(folder)}/"))
    staged, loose = acc.uncommitted_acts(ws, ctx.acts())
    curated = ws.rel(ws.curated) + "/"
    if staged:  # a person's review acts, staged by the acts themselves: say so, with the one command
        verdict.findings.append(rule.finding(
            f"{len(staged)} review act(s) staged and not committed ({', '.join(p.rsplit('/', 1)[-1][:-3] for p in staged[:3])}"
            f"{' …' if len(staged) > 3 else ''}): no other clone sees them until they are committed",
            f"git commit -m \"knowledge: review\" -- {curated}", file=curated,
            reproduce=f"git status --short -- {curated}"))
    if loose:
        verdict.findings.append(rule.finding(
            f"{len(loose)} reviewed record(s) changed and not staged (an act whose staging failed, or a hand "
            "edit)", f"git add {curated} && git commit -m \"knowledge: review\"", file=curated,
            reproduce=f"git status --short -- {curated}"))
    if not verdict.findings:
        verdict.detail = (f"{len(names)} candidate(s) await review, none overdue; candidates and "
                          "session records all tracked")
    return verdict


_WAITING = "doctor.waiting"  # the queue rule's waiting candidates and their ages, kept beside the index
_WAITING_VERSION = 1  # of what `_waiting` keeps: raise it when that changes


def _waiting(ctx: Context) -> tuple[list[str], list[float | None], list[str | None]]:
    """The file names of the candidates waiting for review (`accumulation.waiting`), and each one's
    review age (`accumulation.review_ages`) as the date it waits from and what says so (None, None:
    undated). Kept beside the index (`Index.keep`) while the index is in the state it was read from
    once the queue's rows and the ledger's facts are brought up to date, with the same tail of the
    ledger (`_waiting_key`), when the ledger dated every entry: the dates are kept, the minutes
    waited are counted now."""
    ws = ctx.ws
    key = _waiting_key(ctx)
    store = index.of(ws)
    kept: tuple[list[str], list[float | None], list[str | None]] | None = store.kept(_WAITING, key, _kept_waiting)
    if kept is not None:
        return kept
    where = os.fspath(ws.candidates) + os.sep
    waiting = acc.waiting(ws)
    ages = acc.review_ages(ws, waiting, found=ctx.facts())
    dated = [ages.get(p) for p in waiting]
    names = [p[len(where):] for p in waiting]
    sinces = [a.since if a is not None else None for a in dated]
    details = [a.detail if a is not None else None for a in dated]
    if key is not None and all(a is not None and a.source == "ledger" for a in dated) \
            and _waiting_key(ctx) == key:  # all the ledger's, and nothing wrote to the index meanwhile
        store.keep(_WAITING, key, [names, sinces, details])
    return names, sinces, details


def _waiting_key(ctx: Context) -> list[object] | None:
    """What `_waiting` depends on when the ledger dates every entry: the index's state once the
    queue's rows (the records' statuses) and the ledger's facts are brought up to date, and the
    facts' tail (the last line, in no table yet). None when the index cannot say."""
    found = ctx.facts()
    if found.db is None or not queue.brought_up(ctx.ws, sessions=False):
        return None
    written = index.of(ctx.ws).written()
    return None if written is None else [_WAITING_VERSION, written, sorted(found.tail.derived.items())]


def _kept_waiting(kept: object) -> tuple[list[str], list[float | None], list[str | None]] | None:
    """`_waiting`'s answer from what it kept ([names], [dates], [details], every entry dated by the
    ledger); None when `kept` is not of that shape."""
    if not (isinstance(kept, list) and len(kept) == 3 and all(type(part) is list for part in kept)):
        return None
    names, sinces, details = kept
    if not (len(names) == len(sinces) == len(details) and set(map(type, names)) <= {str}
            and set(map(type, sinces)) <= {int, float} and set(map(type, details)) <= {str}):
        return None
    return names, sinces, details


@validator("knowledge_currency")
def knowledge_currency(ctx: Context, rule: Rule) -> Verdict:
    """majordomus.knowledge-stale: each verified record that may be stale or is disputed, with
    what changed and the command that re-verifies it (docs/CURRENCY.md)."""

    ws, verdict = ctx.ws, Verdict()
    verified, unknown, listed = _attention(ctx)
    for rid, what in listed:
        verdict.findings.append(rule.finding(
            what, fix(rid), file=ws.rel(ws.curated / f"{rid}.md"), reproduce=f"majordomus knowledge record {rid}"))
    if not verdict.findings:
        verdict.detail = (f"{verified} verified record(s), none may be stale or is disputed"
                          + (f" ({unknown} unknown on this clone: `majordomus knowledge status`)" if unknown else ""))
    return verdict


_ATTENTION = "doctor.attention"  # the currency rule's answer, kept beside the index
_ATTENTION_VERSION = 3  # of what `_attention` keeps: raise it when that changes


def _attention(ctx: Context) -> tuple[int, int, list[list[str]]]:
    """(how many verified records, how many of them unknown on this clone, [id, what is said] of each
    that may be stale or is disputed, by id): kept beside the index (`Index.keep`) while what it
    was judged from holds (`_attention_key`) and this clone has the verification commits it was
    judged by as it had them (`currency.judged`: a fetch brings them, a prune removes them, HEAD
    unmoved)."""
    ws = ctx.ws
    key = _attention_key(ctx)
    store = index.of(ws)
    kept: tuple[int, int, list[list[str]], list[list[str]]] | None = store.kept(_ATTENTION, key, _kept_attention)
    if kept is not None and not currency.arrived(ws, kept[3]):
        return kept[0], kept[1], kept[2]
    found, states, by = currency.judged(ws)
    listed = [[rec.id, f"{rec.id} ({rec.cls}: {rec.title}) {states[rec.id].reason}"] for rec in found
              if states[rec.id].stale or states[rec.id].dispute is not None]
    unknown = sum(1 for s in states.values() if s.state == "unknown")
    if key is not None and _attention_key(ctx) == key:  # nothing wrote to the index while it was read
        store.keep(_ATTENTION, key, [len(found), unknown, listed, by])
    return len(found), unknown, listed


def _kept_attention(kept: object) -> tuple[int, int, list[list[str]], list[list[str]]] | None:
    """What `_attention` kept ([verified, unknown, [[id, what is said]], [the commits it lacked,
    those outside HEAD's history]]); None when `kept` is not of that shape."""
    if (isinstance(kept, list) and len(kept) == 4 and type(kept[0]) is int and type(kept[1]) is int
            and type(kept[2]) is list and all(type(e) is list and len(e) == 2 and type(e[0]) is str
                                              and type(e[1]) is str for e in kept[2])
            and type(kept[3]) is list and len(kept[3]) == 2
            and all(type(e) is list and set(map(type, e)) <= {str} for e in kept[3])):
        return kept[0], kept[1], kept[2], kept[3]
    return None


def _attention_key(ctx: Context) -> list[object] | None:
    """What `_attention` depends on: the index's state once the ledger's facts and the curated
    folder's rows are brought up to date (the verified records' fields, the disputes the facts
    keep), the facts' tail's disputes, and git's history as the currencies read it
    (`currency.history`: HEAD, a shallow clone's cut). None when the index or git cannot say."""
    found = ctx.facts()
    if found.db is None:
        return None
    history = currency.history(ctx.ws)
    store = index.of(ctx.ws)
    store.check(ctx.ws.curated)  # a file too recent to vouch for itself is written again each check
    written = store.written()
    if history is None or written is None:
        return None
    return [_ATTENTION_VERSION, written, history, [list(d) for d in found.tail.disputes]]


@validator("agent_hooks_fired")
def agent_hooks_fired(ctx: Context, rule: Rule) -> Verdict:
    """majordomus.agents-fired: an agent whose hooks wait for the user's trust, installed here,
    that has never opened an episode in this checkout (its hooks are likely skipped, silently)."""

    ws, verdict = ctx.ws, Verdict()
    fired = episodes.agents_seen(ws) | ctx.facts().ids("agent")
    gated = [a for a in agents.AGENTS.values() if a.trust and agents.installed(ws.root, a)]
    for agent in gated:
        if agent.name in fired:
            continue
        verdict.findings.append(rule.finding(
            f"{agent.title}'s hooks are installed but have never fired in this checkout: no episode "
            f"was opened by {agent.name}", agent.trust or "", file=agent.registration,
            reproduce="majordomus history --event session.opened"))
    if not verdict.findings:
        verdict.detail = (f"{len(gated)} installed agent(s) behind a trust step, each has opened an "
                          "episode here" if gated else "no installed agent waits for a trust step")
    return verdict
