"""evidence:<episode>, render:<record-id> and derive:<episode>: the derivation as doit's data flow.

    ledger + git ──evidence:<episode>──▶ .ai/local/state/evidence/<episode>.json
    evidence file + the record writer ──render:<id>──▶ candidates/<id>.md (or the trunk outbox)
    renders ──derive:<episode>──▶ the `knowledge.derived` ledger line

`evidence:<episode>` reads what doit cannot track as files (the ledger's lines of the episode,
the task notes, git's commits), so it always runs, and rewrites its file only when the evidence
changed. `render:<id>` has `file_dep` on that file and on the record writer's source
(`store/records.py`, which is the record's template), so doit (its md5 check)
decides whether a record is up to date. `derive:<episode>` is bookkeeping: it always runs, to
say what the renders did, so a re-run over unchanged evidence writes nothing, says so, and
leaves its line in the ledger.

doit, whose import alone costs several times an interpreter's start, runs only where its
up-to-date check has something to decide. The two runs where it has not are told without it, under
the dep file's lock, by the same actions in doit's order: a run that would change nothing
(`settled`: the evidence file holds this evidence, every record the bytes the writer renders, so
every task is up to date), and an episode's first derivation here (`first`: no evidence file and
no draft's file yet, so every task would run). The end hook's close is mostly the second; the
dep file learns those renders at the next run doit makes, whose actions find them written.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import fsio, git
from majordomus.base.errors import UNKNOWN, Busy, FatalError
from majordomus.base.fsio import atomic_write, read_regular, sweep_tmp, write_if_changed
from majordomus.base.output import say
from majordomus.base.resources import data_dir
from majordomus.derive import handedit, table
from majordomus.derive.table import Draft, Outcome, Plan
from majordomus.evidence import episodes
from majordomus.outbox import staging as outbox
from majordomus.store import records
from majordomus.store.records import lock_path
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace
from majordomus.tasks import engine, noop

if TYPE_CHECKING:
    from typing import Any


class RunState:
    """What this run's actions did, shared by the render and derive actions of one doit run."""

    __slots__ = ("written", "edited", "acted", "outcomes", "busy", "failure")

    def __init__(self) -> None:
        self.written: set[str] = set()
        self.edited: set[str] = set()  # changed by a person: left alone
        self.acted: set[str] = set()  # promoted or rejected since the plan
        self.outcomes: dict[str, Outcome] = {}
        self.busy: Busy | None = None  # a lock an action could not get in time (doit reports it as a failure)
        self.failure: BaseException | None = None  # what an action raised: the cause a failed run names


def _recorded(action: Callable[..., dict[str, Any]], state: RunState) -> Callable[..., dict[str, Any]]:
    """`action`, keeping the exception it raises in `state` (doit reduces it to report text)."""

    def run(*args: Any) -> dict[str, Any]:
        try:
            return action(*args)
        except BaseException as exc:
            if state.failure is None:
                state.failure = exc
            raise
    return run


def write_record(ws: Workspace, draft: Draft, state: RunState) -> dict[str, Any]:
    """Write one candidate, unless an act got there first: a promotion or rejection since the
    plan, or a person's edit (bytes other than the deriver last wrote), which is left alone."""
    data = table.render(draft)
    seed_contract(ws, draft.path.parent)
    with _busy_kept(state), ws.lock(lock_path(ws)):
        if table.acted_on(ws, draft.id, draft.path.parent):
            state.acted.add(draft.id)
            return {"path": ws.rel(draft.path), "kept": True}
        try:
            current: bytes | None = fsio.read_bytes(draft.path)
        except FileNotFoundError:
            current = None
        if current is not None and current != data and handedit.edited_by_hand(ws, draft.id, current):
            state.edited.add(draft.id)
            return {"path": ws.rel(draft.path), "edited": True}
        if current != data:
            atomic_write(draft.path, data, root=ws.root)
            state.written.add(draft.id)
        handedit.remember(ws, draft.id, data)
    return {"path": ws.rel(draft.path)}


def as_last_written(task: Any, values: Any, ws: Workspace, draft: Draft) -> bool:
    """Up to date only while the file holds the bytes the deriver last wrote: the evidence digest
    alone would call a hand-edited file unchanged, and the edit must be reported and counted."""
    try:
        current = draft.path.read_bytes()
    except OSError:  # missing, or unreadable: the render runs, and a failure is its own, with its cause
        return False
    return handedit.last_written(ws, draft.id) == handedit.digest(current)


def seed_contract(ws: Workspace, folder: Path) -> None:
    """A candidates folder never lacks its README contract (a repository initialised before it)."""
    if folder != ws.candidates or (folder / "README.md").exists():
        return
    source = data_dir("skeleton") / "repo" / "knowledge" / "candidates" / "README.md"
    atomic_write(folder / "README.md", source.read_bytes(), root=ws.root)


def finish_derivation(ws: Workspace, plan: Plan, state: RunState) -> dict[str, Any]:
    outcome = Outcome(plan.episode, skipped=plan.skipped, kept=list(plan.kept), drafts=plan.drafts,
                      provenance=plan.provenance)
    for draft in plan.drafts:
        if draft.id in state.edited:
            outcome.edited.append(draft.path)
        elif draft.id in state.acted:
            outcome.kept.append(draft.id)
        else:
            (outcome.written if draft.id in state.written else outcome.unchanged).append(draft.path)
    state.outcomes[plan.episode] = outcome
    with _busy_kept(state):
        ws.ledger.append("knowledge.derived", stamped_as(ws, plan.episode), **derived_line(ws, outcome))
    # derived now, by whichever caller: no boundary need run it again, and doctor stops naming it
    fsio.remove(episodes.waiting_dir(ws) / plan.episode, root=ws.root)
    return {"written": len(outcome.written)}


def derived_line(ws: Workspace, outcome: Outcome) -> dict[str, Any]:
    """The fields of the `knowledge.derived` line that says what a derivation did."""
    data: dict[str, Any] = {"episode": outcome.episode, "written": len(outcome.written),
                            "unchanged": len(outcome.unchanged),
                            "paths": [ws.rel(p) for p in outcome.written]}
    if outcome.skipped:
        data["skipped"] = len(outcome.skipped)
    if outcome.kept:
        data["kept"] = len(outcome.kept)
    if outcome.edited:
        data["edited"] = len(outcome.edited)
    if outcome.provenance:
        data["provenance"] = outcome.provenance
    return data


def stamped_as(ws: Workspace, episode: str) -> str | None:
    """The episode a `knowledge.derived` line is stamped with: its own while open, else the
    command's."""
    return episode if episodes.open_record(ws, episode) else episodes.current(ws)


def keep_noop(ws: Workspace, plan: Plan, outcome: Outcome) -> None:
    """After a derivation that left every record as the deriver renders it (none edited by hand,
    none acted on since the plan, no line skipped): keep what a re-run over the same inputs does,
    with the stamps of those inputs (`tasks/noop.py`), so that re-run is told without the
    deriver. Any other outcome forgets them: its re-run derives."""
    if outcome.edited or outcome.skipped or len(outcome.kept) != len(plan.kept) or outcome.dry_run:
        noop.forget(ws, plan.episode)
        return
    again = Outcome(plan.episode, kept=list(plan.kept), drafts=plan.drafts, provenance=plan.provenance)
    again.unchanged.extend(d.path for d in plan.drafts)
    folders = noop_folders(ws)
    noop.keep(ws, plan.episode, [*noop_sources(ws, plan), *folders], again.summary(ws), derived_line(ws, again),
              stamped_as(ws, plan.episode), folders=frozenset(folders))


def noop_sources(ws: Workspace, plan: Plan) -> list[Path]:
    """Every file whose change could change what a derivation of `plan.episode` does, besides the
    ledger and the refs (`noop` checks those itself): the evidence file; of each draft's id, every
    path the derivation reads (`draft_paths`); the policy, the open episodes (the line's stamp),
    git's index (tracked scopes) and HEAD reflog (the commits made), the source of the deriver and
    the record writer, and the schemas. The record folders' entries are not (`noop_folders`: the
    folders themselves are): the derivation reads no listing of them, only these paths, so another
    episode's records written beside its own (every close) leave its stamps holding, and no folder
    of thousands is listed for a digest because the close has just written to it."""
    package = Path(__file__).resolve().parent.parent
    target = outbox.candidates_dir(ws)
    found = [evidence_path(ws, plan.episode), *(p for d in plan.drafts for p in draft_paths(ws, d, target)),
             ws.policy_path, episodes.open_dir(ws) / f"{plan.episode}.json", *episodes.current_sources(ws),
             episodes.waiting_dir(ws) / plan.episode]
    where = git.git_dir(ws.root)
    if where is not None:
        found += [where / "index", where / "logs" / "HEAD"]
    for folder in ("base", "derive", "evidence", "outbox", "proto", "store", "tasks"):
        found += sorted((package / folder).glob("*.py"))
    found += sorted(p for p in data_dir("schemas").iterdir() if p.is_file())
    return found


def noop_folders(ws: Workspace) -> list[Path]:
    """The folders whose records' paths `noop_sources` stamps: each must stay the folder it was
    (one a link or a file replaced is refused by the derivation), whatever entries it gains."""
    return [ws.candidates, outbox.candidates_dir(ws), ws.curated, ws.state / "derived"]


def draft_paths(ws: Workspace, draft: Draft, target: Path) -> list[Path]:
    """The paths a derivation reads for `draft`'s id: its file (in `target`, where the routing puts
    it), the same name in the tracked candidates and in curated (a promotion or rejection:
    `table.acted_on`), and its hand-edit digest (`handedit`)."""
    name = f"{draft.id}.md"
    found = [draft.path, *((ws.candidates / name,) if ws.candidates / name != draft.path else ()),
             ws.curated / name, handedit.entry(ws, draft.id)]
    if target / name not in found:
        found.append(target / name)
    return found


@contextmanager
def _busy_kept(state: RunState) -> Iterator[None]:
    """Keep a `Busy` raised in an action, which doit turns into a task failure, for `run` to
    raise as what it is: a derivation a lock kept from running, to be run again."""
    try:
        yield
    except Busy as exc:
        state.busy = exc
        raise


def evidence_path(ws: Workspace, episode: str) -> Path:
    return ws.state / "evidence" / f"{episode}.json"


def write_evidence(ws: Workspace, plan: Plan) -> dict[str, Any]:
    """The action of `evidence:<episode>`: the file changes only when the evidence did."""
    return {"changed": write_if_changed(evidence_path(ws, plan.episode), plan.evidence_json(), root=ws.root)}


def creators(ws: Workspace, plans: list[Plan], state: RunState) -> dict[str, Callable[[], Any]]:
    writer = str(Path(records.__file__ or "").resolve())  # the one record writer is the template

    def task_evidence() -> Iterator[dict[str, Any]]:
        """Write an episode's evidence (its ledger lines, notes and commits) as a file."""
        for plan in plans:
            yield {"name": plan.episode, "actions": [(_recorded(write_evidence, state), (ws, plan))],
                   "targets": [str(evidence_path(ws, plan.episode))], "uptodate": [False],
                   "meta": {engine.BOOKKEEPING: True}, "doc": f"the evidence of {plan.episode}"}

    def task_render() -> Iterator[dict[str, Any]]:
        """Render one candidate record from its episode's evidence and the template."""
        for plan in plans:
            for draft in plan.drafts:
                yield {"name": draft.id, "actions": [(_recorded(write_record, state), (ws, draft, state))],
                       "file_dep": [str(evidence_path(ws, plan.episode)), writer],
                       "uptodate": [(as_last_written, (ws, draft))],
                       "targets": [str(draft.path)], "doc": f"render {draft.id}"}

    def task_derive() -> Iterator[dict[str, Any]]:
        """Derive an episode's candidates and record that it ran."""
        for plan in plans:
            yield {"name": plan.episode, "actions": [(_recorded(finish_derivation, state), (ws, plan, state))],
                   "task_dep": [f"evidence:{plan.episode}", *(f"render:{d.id}" for d in plan.drafts)],
                   "uptodate": [False], "meta": {engine.BOOKKEEPING: True},
                   "doc": f"derive {plan.episode}"}

    return {"task_evidence": task_evidence, "task_render": task_render, "task_derive": task_derive}


def settled(ws: Workspace, plan: Plan) -> Outcome | None:
    """The outcome of a run that would change nothing, told without doit: the evidence file holds
    this plan's evidence and every draft's file the bytes the writer renders, so every render is
    up to date and the run is its bookkeeping (the deriver's bytes remembered, the
    `knowledge.derived` line). None when anything would change: doit decides then. Under the dep
    file's lock, as a run."""
    with ws.lock(engine.lock_path(ws.dep_file)):
        try:
            if read_regular(evidence_path(ws, plan.episode)) != plan.evidence_json():
                return None
            rendered = [(draft, table.render(draft)) for draft in plan.drafts]
            with ws.lock(lock_path(ws)):
                if any(read_regular(draft.path) != data for draft, data in rendered):
                    return None
                for draft, data in rendered:
                    handedit.remember(ws, draft.id, data)
        except OSError:
            return None
        state = RunState()
        finish_derivation(ws, plan, state)
        return state.outcomes[plan.episode]


def first(ws: Workspace, plan: Plan) -> Outcome | None:
    """The outcome of an episode's first derivation here, told without doit: with no evidence file
    and no file at any draft's path, doit's check has nothing to compare (a missing target runs)
    and would run every action, so they run here, in its order: the evidence, each render, the
    bookkeeping. None when any of those files exists: doit decides then. Under the dep file's lock,
    as a run."""
    with ws.lock(engine.lock_path(ws.dep_file)):
        if os.path.lexists(evidence_path(ws, plan.episode)) or any(os.path.lexists(d.path) for d in plan.drafts):
            return None
        engine.refuse_links(ws.dep_file, ws.root)  # what a run refuses (a link where the dep file goes), this refuses
        state = RunState()
        try:
            write_evidence(ws, plan)
            for draft in plan.drafts:
                write_record(ws, draft, state)
            finish_derivation(ws, plan, state)
        except Busy:
            raise
        except FatalError as exc:  # a refusal keeps its exit code; its line gains the rerun, as a run's does
            raise FatalError(explain(ws, exc, _rerun([plan])), exc.code) from exc
        except Exception as exc:  # noqa: BLE001 - one line with the cause, as a failed doit run says it
            raise FatalError(explain(ws, exc, _rerun([plan]))) from exc
        return state.outcomes[plan.episode]


def _rerun(plans: list[Plan]) -> str:
    return "`majordomus knowledge derive" + "".join(f" --episode {p.episode}" for p in plans[:1]) + "`"


def run(ws: Workspace, plans: list[Plan]) -> dict[str, Outcome]:
    state = RunState()
    code, report, text = engine.run_quietly(creators(ws, plans, state),
                                             [f"derive:{p.episode}" for p in plans], ws.dep_file, ws.root,
                                             wait_s=ws.wait_s())
    if state.busy is not None:
        raise state.busy
    if code != 0:
        rerun = _rerun(plans)
        if state.failure is not None:
            raise FatalError(explain(ws, state.failure, rerun))
        why = engine.cause(text) or f"doit exit {code}"
        raise FatalError(f"derive failed ({why}; tasks {', '.join(report.failed) or '-'}): fix that, then "
                         f"rerun {rerun} (MJ_DEBUG=1 shows doit's report)")
    return state.outcomes


def explain(ws: Workspace, exc: BaseException, rerun: str) -> str:
    """One line for a failed derivation: the real cause (a path relative to the root when it is
    one), and the fix."""

    if isinstance(exc, FatalError):
        return exc.message if "majordomus knowledge derive" in exc.message else f"{exc.message}; then rerun {rerun}"
    kind = type(exc).__name__
    if isinstance(exc, OSError) and isinstance(exc.filename, str):
        path = Path(exc.filename)
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            culprit = not_a_folder(path, include_self=isinstance(exc, FileExistsError))
            if culprit is not None:
                where = _shown(ws, culprit)
                return (f"{where} is a file where a folder belongs ({kind}): move it aside "
                        f"(`mv {where} {where}.bak`), then rerun {rerun}")
        if isinstance(exc, PermissionError):
            return (f"{_shown(ws, path)} is not writable ({kind}): give the user write permission on it, "
                    f"then rerun {rerun}")
        return f"cannot write {_shown(ws, path)} ({kind}: {exc.strerror}): fix that, then rerun {rerun}"
    text = str(exc).splitlines()[0][:200] if str(exc) else ""
    return (f"derive failed ({kind}{': ' + text if text else ''}): fix that, then rerun {rerun} "
            "(MJ_DEBUG=1 shows doit's report)")


def not_a_folder(path: Path, include_self: bool) -> Path | None:
    """The nearest path at or above `path` that exists and is not a folder (what a write under
    it trips on), or None."""

    for candidate in ([path] if include_self else []) + list(path.parents):
        if os.path.lexists(candidate) and not candidate.is_dir():
            return candidate
    return None


def _shown(ws: Workspace, path: Path) -> str:
    try:
        return ws.rel(path)
    except ValueError:
        return str(path)


def derive(ws: Workspace, episode: str, dry_run: bool = False, window: list[Line] | None = None,
           record: dict[str, Any] | None = None) -> table.Outcome:
    """Derive `episode` through doit, then append `knowledge.derived` (even when nothing changed).

    A dry run renders every draft and compares it with the file on disk; it writes nothing,
    not even the ledger line. `window` and `record` (the episode's ledger window and open record):
    as a boundary read them once for all its steps; read here when not given.
    """
    started = time.perf_counter()
    if window is None:
        window = ws.ledger.window(episode)
    if not window:
        raise FatalError(f"no ledger line is stamped with episode {episode!r}: "
                         "`majordomus history --event session.opened` lists the episodes", UNKNOWN)
    the_plan = table.plan(ws, episode, outbox.candidates_dir(ws), window, record)
    planned = time.perf_counter()
    for number, why in the_plan.skipped:
        say(f"majordomus: skipped ledger line {number}: {why}")
    swept = 0
    if dry_run:
        outcome = table.Outcome(episode, skipped=the_plan.skipped, kept=the_plan.kept, dry_run=True,
                                drafts=the_plan.drafts, provenance=the_plan.provenance)
        for draft in the_plan.drafts:
            try:
                same = fsio.read_bytes(draft.path) == table.render(draft)
            except FileNotFoundError:
                same = False
            if not same and draft.path.exists() and table.edited(ws, draft):
                outcome.edited.append(draft.path)
                continue
            (outcome.unchanged if same else outcome.written).append(draft.path)
    else:
        swept = sum(sweep_tmp(folder) for folder in {ws.candidates, outbox.candidates_dir(ws)})
        # doit only where its check has something to decide
        outcome = settled(ws, the_plan) or first(ws, the_plan) or run(ws, [the_plan])[episode]
    if not dry_run:
        keep_noop(ws, the_plan, outcome)
    for path in outcome.edited:
        say(f"majordomus: left {ws.rel(path)} alone: it was edited by hand "
            "(delete it to derive it again)")
    if _timing():
        total = time.perf_counter() - started
        print(f"MJ_TIMING derive {episode}: {total * 1000:.1f} ms (plan {(planned - started) * 1000:.1f} ms); "
              f"lines {len(window)}, evidence {the_plan.evidence}, drafts {len(the_plan.drafts)}, "
              f"written {len(outcome.written)}, unchanged {len(outcome.unchanged)}, "
              f"skipped {len(outcome.skipped)}, kept {len(outcome.kept)}, swept {swept}", file=sys.stderr)
    return outcome


def _timing() -> bool:
    return os.environ.get("MJ_TIMING") == "1"
