"""The wiring half of `majordomus.knowledge-observed`: does the close path call the deriver?

Read from the tool's own source with `ast`, not from a flag a module could set: the one close
path, `majordomus.session.end.close_episode`, must call `derive_on_close` before it appends
`session.closed`, and `derive_on_close` must call the deriver (`derive.derive`). `ast` is imported
by the parse alone: doctor answers from the cache on nearly every run.
"""
from __future__ import annotations

from pathlib import Path
from stat import S_ISREG

from majordomus.base.lean import TYPE_CHECKING
from majordomus.store.filecache import FileCache, lstat

if TYPE_CHECKING:
    import ast

CLOSE = "close_episode"
HOOK = "derive_on_close"
DERIVER = "derive"
# What `check` found, kept by the close path's stat (store/filecache.py): derived, and a source
# that changed is read again. Raise VERSION when what `check_source` checks changes.
CACHE = "wiring.cache.json"
VERSION = 1
_KEPT = "close path"


def close_path_source() -> Path:
    """Where the installed `majordomus.session.end` lives, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("majordomus.session.end")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("majordomus.session.end has no source file: reinstall majordomus")
    return Path(spec.origin)


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    import ast

    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _called(node: ast.AST, name: str) -> list[ast.Call]:
    """Calls inside `node` of `name(...)` or `<anything>.name(...)`."""
    import ast

    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            if (isinstance(func, ast.Name) and func.id == name) or \
               (isinstance(func, ast.Attribute) and func.attr == name):
                found.append(sub)
    return found


def _appends_closed(node: ast.AST) -> list[ast.Call]:
    import ast

    return [c for c in _called(node, "append")
            if c.args and isinstance(c.args[0], ast.Constant) and c.args[0].value == "session.closed"]


def check_source(text: str, filename: str = "majordomus/session/end.py") -> str | None:
    """What is wrong with the close path's wiring in `text`, or None when it calls the deriver."""
    import ast

    try:
        tree = ast.parse(text, filename)
    except SyntaxError as exc:
        return f"{filename} does not parse ({exc.msg}, line {exc.lineno})"
    close = _function(tree, CLOSE)
    if close is None:
        return f"{filename} defines no {CLOSE}: the close path is gone"
    calls = _called(close, HOOK)
    if not calls:
        return f"{CLOSE} in {filename} never calls {HOOK}: an episode closes without a derivation"
    appends = _appends_closed(close)
    first_call = min(c.lineno for c in calls)
    if appends and min(a.lineno for a in appends) < first_call:
        return (f"{CLOSE} in {filename} appends session.closed (line {min(a.lineno for a in appends)}) "
                f"before it calls {HOOK} (line {first_call}): the close must derive first")
    hook = _function(tree, HOOK)
    if hook is None:
        return f"{filename} calls {HOOK} but does not define it"
    if not _called(hook, DERIVER):
        return f"{HOOK} in {filename} never calls the deriver ({DERIVER}.{DERIVER})"
    return None


def check(path: Path | None = None, cache: FileCache | None = None) -> tuple[str | None, Path]:
    """(what is wrong or None, the source read) for the installed close path. With `cache`, the
    answer is kept by the source's stat (doctor asks on every run, and parsing the close path is
    ~10 ms of it; the source changes with the package only): a source whose stat is the one kept
    is not read again, and a source that changed is (its stat differs)."""
    path = path or close_path_source()
    st = lstat(path) if cache is not None else None  # taken first: a change after it shows in it
    st = st if st is not None and S_ISREG(st.st_mode) else None
    if cache is not None and st is not None:
        hit, kept = cache.get(_KEPT, str(path), st)
        if hit and (kept is None or isinstance(kept, str)):
            return kept, path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return f"cannot read the close path's source {path}: {exc}", path
    problem = check_source(text, str(path))
    if cache is not None and st is not None:
        cache.keep_only(_KEPT, {str(path)})
        cache.put(_KEPT, str(path), st, problem)
        cache.save()
    return problem, path
