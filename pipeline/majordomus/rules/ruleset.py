"""Rules as data: one YAML file a rule, in the vendored standard package
(`.ai/repo/rules/vendor/`, a copy of the package shipped in the wheel) and in the project's own
folder (`.ai/repo/rules/project/`). Together they are the effective set `check`, `doctor` and
`watch` run.

A rule names its validator (a function of `pipeline.validators`), its class, the commands it is
dispatched from, a category, the exit code its class means and a one-line message. A rule file
that cannot be read is a finding of `majordomus.rules`, never an exception: the other rules run.
"""
from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import NamedTuple

from majordomus.base import fsio, yamlio
from majordomus.base.findings import Finding
from majordomus.store.filecache import FileCache, lstat
from majordomus.store.workspace import Workspace

MACHINERY = "majordomus.rules"  # the rule id of findings about the rule set itself
COMMANDS = ("check", "doctor", "watch")
CLASSES = {"blocking": 10, "advisory": 11}  # class -> the exit code it means
REQUIRED = ("id", "class", "validator", "dispatch", "category", "exit", "message")
OPTIONAL = ("text",)
# What each valid rule file held, kept by its stat (store/filecache.py): doctor, check and watch
# read the rule set on every run, and YAML's import alone is ~15 ms of a doctor on an empty store.
# Derived: without it every file is parsed again, and a file that changed is (its stat differs).
CACHE = "rules.cache.json"
_VERSION = 1
RULE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+\Z")


class Rule(NamedTuple):  # no `dataclasses` import for doctor, `check`, `watch`
    id: str
    cls: str  # blocking | advisory
    validator: str
    dispatch: tuple[str, ...]
    category: str
    exit: int
    message: str
    path: Path
    origin: str  # vendor | project
    text: str = ""

    @property
    def blocking(self) -> bool:
        return self.cls == "blocking"

    def finding(self, what: str, fix: str, **where: str | None) -> Finding:
        """A finding of this rule, at this rule's class."""
        return Finding(self.id, what, fix, self.blocking, **where)


class RuleSet:
    __slots__ = ("rules", "problems")

    def __init__(self) -> None:
        self.rules: list[Rule] = []
        self.problems: list[Finding] = []  # rule files that could not be read

    def for_command(self, command: str) -> list[Rule]:
        return [r for r in self.rules if command in r.dispatch]


def vendor_dir(ws: Workspace) -> Path:
    return ws.repo / "rules" / "vendor"


def project_dir(ws: Workspace) -> Path:
    return ws.repo / "rules" / "project"


def load(ws: Workspace) -> RuleSet:
    """The effective set: every `*.yaml` under vendor/ then project/, sorted by file name."""
    result = RuleSet()
    seen: dict[str, Path] = {}
    cache = FileCache(ws.state / CACHE, _VERSION, ws.root)
    for origin, folder in (("vendor", vendor_dir(ws)), ("project", project_dir(ws))):
        if not folder.is_dir():
            continue
        paths = sorted(folder.glob("*.yaml"))
        cache.keep_only(ws.rel(folder), {p.name for p in paths})
        for path in paths:
            rule = load_rule(ws, path, origin, result.problems, cache)
            if rule is None:
                continue
            if rule.id in seen:
                result.problems.append(_problem(ws, path, "id", f"rule id {rule.id} is declared "
                                                f"twice (also in {ws.rel(seen[rule.id])})",
                                                "give the project rule its own id"))
                continue
            seen[rule.id] = path
            result.rules.append(rule)
    cache.save()
    return result


def _problem(ws: Workspace, path: Path, fld: str | None, what: str, fix: str) -> Finding:
    return Finding(MACHINERY, what, fix, True, file=ws.rel(path), field=fld,
                   reproduce="majordomus rules list")


def load_rule(ws: Workspace, path: Path, origin: str, problems: list[Finding],
              cache: FileCache | None = None) -> Rule | None:
    """One rule file, checked field by field; None (and a problem) when it is not a rule. With
    `cache`, a file whose stat is unchanged is not parsed again (only a valid rule is kept)."""

    fix = ("run `majordomus rules vendor update`" if origin == "vendor"
           else f"correct {ws.rel(path)} (docs/RULES.md gives the format)")
    st = lstat(path) if cache is not None else None
    st = st if st is not None and stat.S_ISREG(st.st_mode) else None  # a link's own stat vouches for nothing
    hit, data = cache.get(ws.rel(path.parent), path.name, st) if cache is not None and st is not None else (False, None)
    if not hit:
        try:
            data = yamlio.load(fsio.read_text(path), ws.rel(path))
        except (OSError, UnicodeDecodeError, yamlio.YamlError) as exc:
            problems.append(_problem(ws, path, None, f"rule file unreadable: {exc}", fix))
            return None
    if not isinstance(data, dict):
        problems.append(_problem(ws, path, None, "a rule file is a mapping of keys", fix))
        return None
    bad: list[tuple[str, str]] = []
    for key in REQUIRED:
        if key not in data:
            bad.append((key, f"missing key {key}"))
    for key in data:
        if key not in REQUIRED and key not in OPTIONAL:
            bad.append((str(key), f"unknown key {key!r} (known: {', '.join(REQUIRED + OPTIONAL)})"))
    rid, cls, dispatch = data.get("id"), data.get("class"), data.get("dispatch")
    if "id" in data and (not isinstance(rid, str) or not RULE_ID.match(rid)):
        bad.append(("id", f"id {rid!r} is not a dotted lower-case rule id"))
    elif isinstance(rid, str) and path.name != f"{rid}.yaml":
        bad.append(("id", f"the file of rule {rid} is named {rid}.yaml, not {path.name}"))
    if "class" in data and cls not in CLASSES:
        bad.append(("class", f"class {cls!r} is not blocking or advisory"))
    if isinstance(dispatch, str):
        dispatch = [dispatch]
    if "dispatch" in data and (not isinstance(dispatch, list) or not dispatch
                               or any(d not in COMMANDS for d in dispatch)):
        bad.append(("dispatch", f"dispatch {data.get('dispatch')!r} is not a list drawn from "
                    f"{', '.join(COMMANDS)}"))
    if cls in CLASSES and "exit" in data and data.get("exit") != CLASSES[cls]:
        bad.append(("exit", f"exit {data.get('exit')!r} does not match class {cls} ({CLASSES[cls]})"))
    for key in ("validator", "category", "message"):
        if key in data and (not isinstance(data[key], str) or not data[key].strip()):
            bad.append((key, f"{key} is not a non-empty string"))
    if "text" in data and not isinstance(data["text"], str):
        bad.append(("text", "text is not a string"))
    for fld, what in bad:
        problems.append(_problem(ws, path, fld, what, fix))
    if bad:
        return None
    assert isinstance(rid, str) and isinstance(cls, str) and isinstance(dispatch, list)
    if cache is not None and st is not None and not hit:  # checked: strings, a list of them, an int
        cache.put(ws.rel(path.parent), path.name, st, data)
    return Rule(rid, cls, data["validator"].strip(), tuple(dict.fromkeys(str(d) for d in dispatch)),
                data["category"].strip(), data["exit"], data["message"].strip(), path, origin,
                data.get("text", "").strip())
