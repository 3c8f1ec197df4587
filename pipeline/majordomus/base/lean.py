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
module of ours imports it; a module on the start path imports `json` from here (`Json`): `json`'s
own modules compile patterns at import, and with `re` come `enum` and `functools`' reach (~5 ms
of a start whose floor is ~15).
"""
from __future__ import annotations

import collections
import sys
from itertools import chain

TYPE_CHECKING = False

if TYPE_CHECKING:
    import json as json  # `json` below: what mypy checks its callers against
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


def _forwarder(name: str) -> Any:
    """A stand-in module for `name` whose attributes are the real module's, imported on first use
    (the stand-in is taken out of `sys.modules` first, so the real one is what is imported)."""
    stand_in = type(sys)(name)

    def __getattr__(attr: str) -> Any:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        __import__(name)
        return getattr(sys.modules[name], attr)

    stand_in.__dict__["__getattr__"] = __getattr__
    return stand_in


def pathlib_alone() -> None:
    """Import `pathlib` without `urllib.parse` and the `ipaddress` it imports (~3 ms of a start
    hook's 50), nor `re` and `fnmatch` (with `re` come `enum` and its kin, ~3 ms more). Python
    3.10 to 3.12 import `urllib.parse` at pathlib's top for `Path.as_uri` alone (3.13 in
    `as_uri`); `re` and `fnmatch` serve its globbing and matching alone. While pathlib is
    imported, `urllib.parse` is a stand-in whose one function imports the real module when it is
    called, and `re` and `fnmatch` (those not imported yet) are stand-ins whose attributes are
    the real modules', imported on first use (`_forwarder`); once pathlib is in, the stand-ins
    are gone from `sys.modules`, so a later import gets the real module. A pathlib that asks the
    `urllib.parse` stand-in for more is imported again with the real one."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return

    def quote_from_bytes(*args: Any, **kwargs: Any) -> str:
        import urllib.parse  # the real module: the stand-in is gone by then

        return urllib.parse.quote_from_bytes(*args, **kwargs)

    stand_in = type(sys)("urllib.parse")
    stand_in.__dict__["quote_from_bytes"] = quote_from_bytes
    forwarders = {name: _forwarder(name) for name in ("re", "fnmatch") if name not in sys.modules}
    sys.modules["urllib.parse"] = stand_in
    sys.modules.update(forwarders)
    try:
        import pathlib
    except ImportError:
        pass  # imported below, with the real module
    finally:
        for name, module in [("urllib.parse", stand_in), *forwarders.items()]:
            if sys.modules.get(name) is module:
                del sys.modules[name]
    import pathlib  # noqa: F401


class Json:
    """`json`'s `loads` and `dumps` without importing `json`'s modules (they compile patterns at
    import, which brings `re` and `enum`): what `json` itself runs for the calls the start path
    makes, `_json`'s scanner and one-shot encoder. Any other call or argument, and any failure,
    goes to the real module (a failure is raised again by it, as `json` raises it, a `default`
    called again); any other attribute is the real module's. Imported as `from majordomus.base.lean import json`."""

    __slots__ = ("_scan",)

    def __init__(self) -> None:
        self._scan: Any = None

    def __getattr__(self, name: str) -> Any:
        import json

        return getattr(json, name)

    def _scanner(self) -> Any:
        if self._scan is None:
            import _json

            nan, inf = float("nan"), float("inf")
            context = type(sys)("context")  # the attributes `_json.make_scanner` reads, as `json`'s
            context.__dict__.update(strict=True, object_hook=None, object_pairs_hook=None, parse_float=float,
                                    parse_int=int, memo={},
                                    parse_constant={"-Infinity": -inf, "Infinity": inf, "NaN": nan}.__getitem__)
            self._scan = _json.make_scanner(context)  # type: ignore[arg-type]
        return self._scan

    def loads(self, s: str | bytes | bytearray, **kwargs: Any) -> Any:
        if not kwargs:
            if isinstance(s, (bytes, bytearray)) and s[:1] not in (b"", b"\x00", b"\xef", b"\xfe", b"\xff") \
                    and s[1:2] != b"\x00":  # UTF-8 by `json.detect_encoding`: no BOM, no zero byte first
                text: Any = s.decode("utf-8", "surrogatepass")
            else:
                text = s
            if isinstance(text, str) and not text.startswith("\ufeff"):
                try:
                    start = 0
                    while text[start:start + 1] in (" ", "\t", "\n", "\r"):  # json's leading whitespace,
                        start += 1  # not a copy of a text of megabytes to find it
                    value, end = self.raw_decode(text, start)
                    if not text[end:].strip(" \t\n\r"):
                        return value
                except Exception:  # noqa: BLE001, S110 - the real module says why, as it always does
                    pass
        import json

        return json.loads(s, **kwargs)

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        """`json.JSONDecoder().raw_decode(s, idx)`."""
        try:
            return self._scanner()(s, idx)  # type: ignore[no-any-return]
        except Exception:  # noqa: BLE001 - the real decoder says why
            import json

            return json.JSONDecoder().raw_decode(s, idx)

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if set(kwargs) <= {"ensure_ascii", "separators", "sort_keys", "default"}:
            ascii_only = bool(kwargs.get("ensure_ascii", True))
            default = kwargs.get("default") or _unserializable
            item, key = kwargs.get("separators") or (", ", ": ")
            sort = bool(kwargs.get("sort_keys", False))
            try:
                import _json

                encode_text = _json.encode_basestring_ascii if ascii_only else _json.encode_basestring
                if isinstance(obj, str):
                    return encode_text(obj)
                # what `JSONEncoder.iterencode(obj, _one_shot=True)` makes (check_circular, allow_nan)
                return "".join(_json.make_encoder({}, default, encode_text, None, key, item, sort,
                                                  False, True)(obj, 0))
            except Exception:  # noqa: BLE001, S110 - the real module says why, as it always does
                pass
        elif set(kwargs) <= {"indent", "ensure_ascii", "sort_keys"} and type(kwargs.get("indent")) is int:
            out: list[str] = []
            try:
                _indent(obj, "", " " * kwargs["indent"], bool(kwargs.get("ensure_ascii", True)), out,
                        bool(kwargs.get("sort_keys", False)))
                return "".join(out)
            except Exception:  # noqa: BLE001, S110 - the real module says why, as it always does
                pass
        import json

        return json.dumps(obj, **kwargs)


_SCALARS = frozenset((str, int, float, bool, type(None)))  # encoded by C as by Python
_CONTAINERS = frozenset((dict, list, tuple))  # an empty one is `{}` or `[]` whatever the indent
_ITEMS: dict[tuple[str, bool, bool], Any] = {}  # by the indent of a container's items, ensure_ascii, sort_keys


def _items(pad: str, ascii_only: bool, sort: bool = False) -> Any:
    """`_json`'s encoder of a dict or list of scalars whose items are indented by `pad`."""
    encoder = _ITEMS.get((pad, ascii_only, sort))
    if encoder is None:
        import _json

        text = _json.encode_basestring_ascii if ascii_only else _json.encode_basestring
        encoder = _ITEMS[pad, ascii_only, sort] = _json.make_encoder(None, _unserializable, text, None, ": ",
                                                                     ",\n" + pad, sort, False, True)
    return encoder


def _indent(value: Any, pad: str, step: str, ascii_only: bool, out: list[str], sort: bool = False) -> None:
    """`json.dumps(value, indent=len(step))`'s text: json indents in Python, a generator step a
    value (a queue of 8,000 entries, 100,000 values: ~50 ms); here each run of items that are
    scalars or empty containers (which json writes as `[]` and `{}` at any indent) is one call of
    `_json`'s encoder, its separator the newline and indent of its level: a dict or a list of such
    items alone is one call, a search hit with a list and a dict in it three. A value it does not
    know (a key not a string beside values that are not scalars, a subclass) raises: `dumps` has
    the real module answer, or raise its own error. With `sort`, a dict's items in the order
    `sort_keys` gives them (`sorted` of its items, as json sorts them)."""
    kind = type(value)
    if kind is dict or kind is list or kind is tuple:
        if not value:
            out.append("{}" if kind is dict else "[]")
            return
        inner = pad + step
        close = "}" if kind is dict else "]"
        flat = _items(inner, ascii_only, sort)
        if _SCALARS.issuperset(map(type, value.values() if kind is dict else value)):  # keys as json converts them
            out.append(("{" if kind is dict else "[") + "\n" + inner + "".join(flat(value, 0))[1:-1]
                       + "\n" + pad + close)
            return
        sep = ("{" if kind is dict else "[") + "\n" + inner
        if kind is dict:
            import _json

            text = _json.encode_basestring_ascii if ascii_only else _json.encode_basestring
            run: dict[str, Any] = {}
            for key, item in sorted(value.items()) if sort else value.items():
                if type(key) is not str:  # json's conversion, or its TypeError
                    raise TypeError(type(key).__name__)
                if type(item) in _SCALARS or (type(item) in _CONTAINERS and not item):
                    run[key] = item
                    continue
                if run:
                    out.append(sep + "".join(flat(run, 0))[1:-1])
                    sep, run = ",\n" + inner, {}
                out.append(sep + text(key) + ": ")
                _indent(item, inner, step, ascii_only, out, sort)
                sep = ",\n" + inner
            if run:
                out.append(sep + "".join(flat(run, 0))[1:-1])
        else:
            items: list[Any] = []
            for item in value:
                if type(item) in _SCALARS or (type(item) in _CONTAINERS and not item):
                    items.append(item)
                    continue
                if items:
                    out.append(sep + "".join(flat(items, 0))[1:-1])
                    sep, items = ",\n" + inner, []
                out.append(sep)
                sep = ",\n" + inner
                _indent(item, inner, step, ascii_only, out, sort)
            if items:
                out.append(sep + "".join(flat(items, 0))[1:-1])
        out.append("\n" + pad + close)
    elif kind in _SCALARS:
        out.append("".join(_items(pad, ascii_only, sort)([value], 0))[1:-1])
    else:
        raise TypeError(kind.__name__)


def rows_twice(value: Any) -> tuple[list[bytes | memoryview], list[bytes | memoryview]] | None:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` and the JSON
    string of `json.dumps(value, indent=2, ensure_ascii=False)` (that text as `json.dumps(text,
    ensure_ascii=False)` writes it), each as pieces of its UTF-8 bytes, from one call of `_json`'s
    encoder, for a list of non-empty dicts whose keys are text and whose values are scalars, alone
    or the one value of a dict (the review queue); None for any other value, and for one of whose
    strings holds `": ` (then a key's end is not told from text by a replace). The encoder writes
    the rows' items as the indented text does (`": "`, `",\n"` and their indent); no encoded string
    holds a raw newline, so a newline between `},` and `{` is the list's, which the escaped text
    indents, and the compact text drops the newlines with their indent and the space after each
    key. ValueError for a number that is not finite (as `allow_nan=False`) or a lone surrogate (as
    UTF-8 refuses it)."""
    rows, pad, key = value, "", None
    if type(value) is dict and len(value) == 1:
        ((key, rows),) = value.items()
        pad = "  "
        if type(key) is not str:
            return None
    if type(rows) is not list or not rows or set(map(type, rows)) != {dict} or not all(rows) \
            or set(map(type, chain.from_iterable(rows))) != {str} \
            or not _SCALARS.issuperset(map(type, chain.from_iterable(map(dict.values, rows)))):
        return None
    import _json

    text = _json.encode_basestring
    inner, items = pad + "  ", pad + "    "
    marked = "".join(_json.make_encoder(None, _unserializable, text, None, ": ", ",\n" + items,
                                        False, False, False)(rows, 0))
    if marked.count('": ') != sum(map(len, rows)):
        return None
    compact = marked.replace(",\n" + items, ",").replace('": ', '":').encode("utf-8")
    # escaped, "\n" is the two characters \ and n; it starts '"[{' and ends '}]"', each one byte
    escaped = text(marked).replace("},\\n" + items + "{", "\\n" + inner + "},\\n" + inner + "{\\n" + items)
    del marked
    body = memoryview(escaped.encode("utf-8"))[3:-3]
    head, tail = "[\n" + inner + "{\n" + items, "\n" + inner + "}\n" + pad + "]"
    pieces: tuple[list[bytes | memoryview], list[bytes | memoryview]] = ([compact], [])
    if key is not None:
        name = text(key)
        pieces = ([f"{{{name}:".encode("utf-8"), compact, b"}"], [])
        head, tail = "{\n  " + name + ": " + head, tail + "\n}"
    pieces[1].extend((text(head)[:-1].encode("utf-8"), body, text(tail)[1:].encode("utf-8")))
    return pieces


def _unserializable(o: Any) -> Any:
    raise TypeError(type(o).__name__)  # `dumps` has the real module raise its own


_JSON = Json()
raw_decode = _JSON.raw_decode  # `json.JSONDecoder().raw_decode`
if not TYPE_CHECKING:
    json = _JSON
