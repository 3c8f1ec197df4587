"""What the hook path's modules use instead of `typing` and module-level `re.compile`.

The session-start hook blocks the person's first prompt, and on a prebuilt briefing most of its
cost is imports (docs/PERFORMANCE.md, "issue 31: start hook"). `typing` (with `contextlib` and
`re`) is ~3 ms quiet, and a pattern compiled at import is paid by every run that never matches
it. So a module on the start path:

- writes `from majordomus.base.lean import TYPE_CHECKING` and imports its annotations' names
  under `if TYPE_CHECKING:` (mypy treats any name `TYPE_CHECKING` as true; with
  `from __future__ import annotations` the annotations are never evaluated);
- declares its records with `NamedTuple` from here (a `collections.namedtuple` built from the
  class body, as `typing.NamedTuple` does, without `typing` and its per-field `ForwardRef`s),
  imported as `typing.NamedTuple` under TYPE_CHECKING so mypy checks the fields;
- keeps its regular expressions as `pattern(src)`: the source, compiled (and `re` imported) on
  the first call.
"""
from __future__ import annotations

import collections

TYPE_CHECKING = False

if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

# what a class body holds that is not a field or a method to keep
_SKIP = frozenset({"__module__", "__qualname__", "__annotations__", "__doc__", "__slots__",
                   "__orig_bases__", "__static_attributes__", "__firstlineno__"})


class _Meta(type):
    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # `NamedTuple` itself
            return super().__new__(mcls, name, bases, ns)
        fields = list(ns.get("__annotations__", {}))
        defaults = [ns[f] for f in fields if f in ns]
        if any(f not in ns for f in fields[len(fields) - len(defaults):]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        factory: Any = collections.namedtuple  # (mypy checks the literal form only)
        made = factory(name, fields, defaults=defaults, module=ns.get("__module__"))
        made.__qualname__ = ns.get("__qualname__", name)
        made.__annotations__ = dict(ns.get("__annotations__", {}))
        if ns.get("__doc__"):
            made.__doc__ = ns["__doc__"]
        for key, value in ns.items():
            if key not in _SKIP and key not in fields:
                setattr(made, key, value)
        return made


class NamedTuple(metaclass=_Meta):
    """`class Head(NamedTuple): sha: str | None` makes a `collections.namedtuple` with those
    fields, defaults and methods, like `typing.NamedTuple` (no generics, no inheritance)."""


def pattern(src: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A compiled pattern, compiled on the first call: `_WORD = pattern(r"\\w+")`, then
    `_WORD().match(text)`."""
    compiled: list[re.Pattern[str]] = []

    def get() -> re.Pattern[str]:
        if not compiled:
            import re

            compiled.append(re.compile(src, flags))
        return compiled[0]

    return get


def bpattern(src: bytes, flags: int = 0) -> Callable[[], re.Pattern[bytes]]:
    """`pattern` for a bytes pattern."""
    compiled: list[re.Pattern[bytes]] = []

    def get() -> re.Pattern[bytes]:
        if not compiled:
            import re

            compiled.append(re.compile(src, flags))
        return compiled[0]

    return get
