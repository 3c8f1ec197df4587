"""What the hook path's modules use instead of `typing` and module-level `re.compile`.

The session-start hook blocks the person's first prompt, and on a prebuilt briefing most of its
cost is imports (docs/PERFORMANCE.md, "issue 31: start hook"). `typing` (with `contextlib` and
`re`) is ~3 ms quiet, and a pattern compiled at import is paid by every run that never matches
it. So a module on the start path:

- writes `from majordomus.base.lean import TYPE_CHECKING` and imports its annotations' names
  under `if TYPE_CHECKING:` (mypy treats any name `TYPE_CHECKING` as true; with
  `from __future__ import annotations` the annotations are never evaluated);
- declares its records with `NamedTuple` from here (what `collections.namedtuple` makes, built
  from the class body as `typing.NamedTuple` does, without `typing`, its per-field `ForwardRef`s
  and namedtuple's compiled `__new__`), imported as `typing.NamedTuple` under TYPE_CHECKING so
  mypy checks the fields;
- keeps its regular expressions as `pattern(src)`: the source, compiled (and `re` imported) on
  the first call.

And the package imports `pathlib` through `pathlib_alone` (`majordomus/__init__.py`), before any
module of ours imports it.
"""
from __future__ import annotations

import collections
import sys

TYPE_CHECKING = False

if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any, AnyStr

# what a class body holds that is not a field or a method to keep
_SKIP = frozenset({"__module__", "__qualname__", "__annotations__", "__doc__", "__slots__",
                   "__orig_bases__", "__static_attributes__", "__firstlineno__"})


class _Meta(type):
    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # `NamedTuple` itself
            return super().__new__(mcls, name, bases, ns)
        return _record(name, ns)


class NamedTuple(metaclass=_Meta):
    """`class Head(NamedTuple): sha: str | None` makes a tuple class with those fields, defaults
    and methods, like `typing.NamedTuple` (no generics, no inheritance)."""


_MISSING = object()
HOT = 64  # instances of a record class after which its `__new__` is compiled (`_compiled`)


def _record(name: str, ns: dict[str, Any]) -> type:
    """The class `collections.namedtuple` would make, without its cost: namedtuple compiles a
    `__new__` for each class (~0.15 ms; a start defines a dozen), this one `__new__` is shared.
    The same behaviour (tuple, fields, defaults, `_replace`, `_asdict`, `_make`, repr, pickle);
    called with exactly its fields by position, it is as fast."""
    fields = tuple(ns.get("__annotations__", {}))
    defaults = tuple(ns[f] for f in fields if f in ns)
    first = len(fields) - len(defaults)
    if any(f not in ns for f in fields[first:]):
        raise TypeError(f"{name}: a field without a default follows one with a default")
    index = {f: i for i, f in enumerate(fields)}
    size = len(fields)
    calls = [0]

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == HOT:  # a class made by the thousand: namedtuple's own `__new__` from now on
            made.__new__ = _compiled(name, fields, defaults)
        if kwargs or len(args) != size:
            args = _bind(name, fields, index, defaults, first, args, kwargs)
        return tuple.__new__(cls, args)

    def _make(cls: type, iterable: Any) -> Any:
        values = tuple(iterable)
        if len(values) != size:
            raise TypeError(f"Expected {size} arguments, got {len(values)}")
        return tuple.__new__(cls, values)

    def _replace(self: Any, **kwargs: Any) -> Any:
        made = self._make(map(kwargs.pop, fields, self))
        if kwargs:
            raise ValueError(f"Got unexpected field names: {list(kwargs)!r}")
        return made

    def __repr__(self: Any) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={v!r}' for f, v in zip(fields, self))})"

    body: dict[str, Any] = {
        "__slots__": (), "__new__": __new__, "__repr__": __repr__, "_make": classmethod(_make),
        "_replace": _replace, "_asdict": lambda self: dict(zip(fields, self)),
        "__getnewargs__": lambda self: tuple(self), "_fields": fields, "__match_args__": fields,
        "_field_defaults": dict(zip(fields[first:], defaults)),
        "__module__": ns.get("__module__"), "__qualname__": ns.get("__qualname__", name),
        "__doc__": ns.get("__doc__") or f"{name}({', '.join(fields)})",
        "__annotations__": dict(ns.get("__annotations__", {})),
    }
    for i, field in enumerate(fields):
        body[field] = collections._tuplegetter(i, f"Alias for field number {i}")  # type: ignore[attr-defined]
    for key, value in ns.items():
        if key not in _SKIP and key not in index:
            body[key] = value
    made: Any = type(name, (tuple,), body)
    return made  # type: ignore[no-any-return]


def _compiled(name: str, fields: tuple[str, ...], defaults: tuple[Any, ...]) -> Any:
    """The `__new__` `collections.namedtuple` compiles: a call by position ~2.5× faster than the
    shared one, worth its ~0.15 ms for a class made HOT times (a ledger line per line read)."""
    names = ", ".join(fields)
    new = eval(f"lambda _cls, {names}: _tuple_new(_cls, ({names}{',' if len(fields) == 1 else ''}))",
               {"_tuple_new": tuple.__new__, "__builtins__": {}, "__name__": f"lean_{name}"})
    new.__defaults__ = defaults or None
    new.__name__, new.__qualname__ = "__new__", f"{name}.__new__"
    return staticmethod(new)


def _bind(name: str, fields: tuple[str, ...], index: dict[str, int], defaults: tuple[Any, ...], first: int,
          args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The values of a call by keyword or with defaults left out, in the fields' order."""
    if len(args) > len(fields):
        raise TypeError(f"{name}() takes {len(fields)} positional arguments but {len(args)} were given")
    values = list(args) + [_MISSING] * (len(fields) - len(args))
    for key, value in kwargs.items():
        at = index.get(key)
        if at is None:
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
        if at < len(args):
            raise TypeError(f"{name}() got multiple values for argument {key!r}")
        values[at] = value
    for at in range(len(args), len(fields)):
        if values[at] is _MISSING:
            if at < first:
                raise TypeError(f"{name}() missing required argument: {fields[at]!r}")
            values[at] = defaults[at - first]
    return tuple(values)


def pattern(src: AnyStr, flags: int = 0) -> Callable[[], re.Pattern[AnyStr]]:
    """A compiled pattern (of text or of bytes), compiled on the first call:
    `_WORD = pattern(r"\\w+")`, then `_WORD().match(text)`."""
    compiled: list[re.Pattern[AnyStr]] = []

    def get() -> re.Pattern[AnyStr]:
        if not compiled:
            import re

            compiled.append(re.compile(src, flags))
        return compiled[0]

    return get


def pathlib_alone() -> None:
    """Import `pathlib` without `urllib.parse` and the `ipaddress` it imports (~3 ms of a start
    hook's 50). Python 3.10 to 3.12 import it at pathlib's top for `Path.as_uri` alone (3.13 in
    `as_uri`). While pathlib is imported, `urllib.parse` is a stand-in whose one function imports
    the real module when it is called; once pathlib is in, the stand-in is gone, so a later
    `import urllib.parse` gets the real module. A pathlib that asks the stand-in for more is
    imported again with the real one."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return

    def quote_from_bytes(*args: Any, **kwargs: Any) -> str:
        import urllib.parse  # the real module: the stand-in is gone by then

        return urllib.parse.quote_from_bytes(*args, **kwargs)

    stand_in = type(sys)("urllib.parse")
    stand_in.__dict__["quote_from_bytes"] = quote_from_bytes
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib
    except ImportError:
        pass  # imported below, with the real module
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
    import pathlib  # noqa: F401
