"""base/lean.py's NamedTuple behaves as `typing.NamedTuple` (the start path's records are declared
with it), `pattern` compiles on first use, and the package imports pathlib without `urllib.parse`."""
from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple as TypedNamedTuple
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import SCALE
from majordomus.base import lean

if TYPE_CHECKING:
    from collections.abc import Callable


class Lean(lean.NamedTuple):
    """A record."""

    sha: str
    branch: str | None
    reflog: int | None = None
    size: int = 0

    def short(self) -> str:
        return self.sha[:7]


class Typed(TypedNamedTuple):
    """A record."""

    sha: str
    branch: str | None
    reflog: int | None = None
    size: int = 0

    def short(self) -> str:
        return self.sha[:7]


sys.modules[__name__].Lean = Lean  # pickled by reference, as a namedtuple is


@pytest.mark.parametrize("args, kwargs", [
    (("abcdef123", "main", 5, 9), {}), (("abcdef123", "main"), {}), (("abcdef123",), {"branch": None}),
    ((), {"sha": "x", "branch": "b", "size": 3}), (("x", "b"), {"reflog": 1}),
])
def test_a_record_is_what_typing_namedtuple_makes(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    lean_one, typed = Lean(*args, **kwargs), Typed(*args, **kwargs)  # type: ignore[arg-type]
    assert tuple(lean_one) == tuple(typed) and lean_one == typed and hash(lean_one) == hash(typed)
    assert repr(lean_one) == repr(typed).replace("Typed(", "Lean(")
    assert lean_one._asdict() == typed._asdict()
    assert lean_one._replace(size=7) == typed._replace(size=7) and isinstance(lean_one._replace(size=7), Lean)
    assert (lean_one.sha, lean_one.branch, lean_one.reflog, lean_one.size) == tuple(typed)
    assert lean_one.short() == typed.short()
    assert pickle.loads(pickle.dumps(lean_one)) == lean_one
    sha, *_ = lean_one
    assert sha == typed.sha and lean_one[1:] == typed[1:]


def test_the_class_says_what_a_namedtuple_says() -> None:
    assert Lean._fields == Typed._fields == Lean.__match_args__
    assert Lean._field_defaults == Typed._field_defaults
    assert Lean.__doc__ == "A record." and Lean.__name__ == "Lean" and Lean.__module__ == __name__
    assert Lean._make(["a", "b", 1, 2]) == Typed._make(["a", "b", 1, 2]) and issubclass(Lean, tuple)
    with pytest.raises(AttributeError):
        Lean("a", "b").sha = "c"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Lean("a", "b").other = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("args, kwargs", [
    ((), {}), (("a",), {}), (("a", "b", 1, 2, 3), {}), (("a", "b"), {"sha": "c"}), (("a", "b"), {"nope": 1}),
])
def test_a_wrong_call_is_refused_as_there(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        Typed(*args, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Lean(*args, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Lean("a", "b")._replace(nope=1)
    with pytest.raises(TypeError):
        Lean._make(["a"])


def test_a_default_before_a_field_without_one_is_refused() -> None:
    with pytest.raises(TypeError):
        class Bad(lean.NamedTuple):
            a: int = 1
            b: int


def test_a_pattern_is_compiled_on_first_use() -> None:
    word = lean.pattern(r"(?m)^w\w+$")
    assert word() is word() and [m.group(0) for m in word().finditer("word\nnot\nwhy")] == ["word", "why"]
    assert lean.pattern(rb"a+")().fullmatch(b"aaa")


def test_a_class_made_often_gets_namedtuples_compiled_new_and_behaves_the_same() -> None:
    class Hot(lean.NamedTuple):
        a: int
        b: int = 2

    shared = Hot.__new__
    made = [Hot(n) for n in range(lean.HOT + 5)]
    assert Hot.__new__ is not shared  # compiled: a ledger read makes a Line a line
    assert made[-1] == Hot(lean.HOT + 4, 2) == Hot(a=lean.HOT + 4) and Hot(1, b=3) == (1, 3)
    assert [h.a for h in made] == list(range(lean.HOT + 5)) and isinstance(Hot(1), Hot)
    assert Hot(1)._replace(b=5) == (1, 5) and repr(Hot(1)) == "Hot(a=1, b=2)"
    with pytest.raises(TypeError):
        Hot()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Hot(1, 2, 3)  # type: ignore[call-arg]

    class One(lean.NamedTuple):
        only: str

    assert [One("x") for _ in range(lean.HOT + 1)][-1] == ("x",) and One("y").only == "y"


def _fresh(code: str, *path: Path) -> list[str]:
    """What `code` prints in a fresh interpreter that imports the package first (`path` first on
    its module path)."""
    env = {"PYTHONPATH": ":".join([*map(str, path), *sys.path]), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", "import majordomus, sys\n" + code], env=env,
                          capture_output=True, text=True, check=True)
    return proc.stdout.splitlines()


def test_the_package_imports_pathlib_without_urllib_parse_and_both_still_work() -> None:
    assert _fresh("""
from pathlib import Path
print(sorted({"pathlib", "urllib", "urllib.parse", "ipaddress"} & set(sys.modules)))
print(Path("/a b/\u00e9").as_uri())
import urllib.parse
print(urllib.parse.urlsplit("http://h/p").netloc, urllib.parse.quote_from_bytes(b"a b"))
""") == ["['pathlib']", "file:///a%20b/%C3%A9", "h a%20b"]


def test_a_pathlib_that_imports_more_of_urllib_parse_gets_the_real_module(tmp_path: Path) -> None:
    (tmp_path / "pathlib.py").write_text("from urllib.parse import quote_from_bytes, urlsplit\n"
                                         "MORE = urlsplit('http://h/p').netloc\n", encoding="utf-8")
    assert _fresh("import pathlib\nprint(pathlib.MORE, sys.modules['urllib.parse'].urlsplit('http://g').netloc)",
                  tmp_path) == ["h g"]


def test_pathlib_comes_without_re_and_fnmatch_and_globs_with_them() -> None:
    """(3.10 and 3.11 use them in globbing and matching alone; a later pathlib that uses them at
    import gets the real modules through the stand-ins, and globs all the same.)"""
    assert _fresh("""
from pathlib import Path, PurePath
print(sorted({"re", "fnmatch", "enum"} & set(sys.modules)) if sys.version_info < (3, 12) else [])
print(PurePath("a/b.json").match("*.json"), sorted(p.name for p in Path(sys.prefix).glob("lib*"))[:1] != [])
import re, fnmatch
print(re.fullmatch("a+", "aa") is not None, fnmatch.fnmatch("x.md", "*.md"), type(sys.modules["re"].compile))
""") == ["[]", "True True", "True True <class 'function'>"]


_VALUES: list[object] = [
    {}, [], "", 0, -1, 1.5, -0.0, 1e300, float("inf"), float("-inf"), True, False, None, "\u00e9\u2028\x7f\x00\"\\",
    "\ud800", {"a": [1, 2.25, {"b": None, "c": []}], "é": {"z": {}, "y": "\U0001f600"}},
    [[], {}, [[1]], {"k": [True]}], (1, "t"), {"b": 1, "a": 2}, "x" * 300,
    # runs of scalars and empty containers between nested values, as a search hit has them
    {"id": "a", "tracked": True, "changed": [], "how": {}, "t": (), "matched": ["title"], "n": None,
     "currency": {"state": "current", "changed": [], "how": {}, "commits_since": 0}, "last": 1.5},
    [1, [], {}, (), [2, []], "s", {"k": (), "l": [{}]}, None], [{"k": []}, {}, [{}]],
    # keys out of order at every level, between nested values, and not text (json converts them after sorting)
    {"z": 1, "b": [1, {"d": 1, "c": [2, {"y": None, "x": {}}]}], "a": {}, "c": 1, "é": "ü", "B": ()},
    {10: "a", 9: "b", 1.5: None}, [{"b": 1, "a": {"d": [], "c": 0}}],
]


@pytest.mark.parametrize("value", _VALUES)
@pytest.mark.parametrize("kwargs", [{}, {"ensure_ascii": False}, {"ensure_ascii": False, "separators": (",", ":")},
                                    {"sort_keys": True, "default": str}, {"indent": 2}, {"indent": 1},
                                    {"indent": 0, "ensure_ascii": False}, {"indent": 2, "sort_keys": True},
                                    {"indent": 1, "sort_keys": True, "ensure_ascii": False}])
def test_lean_json_dumps_what_json_dumps(value: object, kwargs: dict[str, object]) -> None:
    import json

    assert lean.json.dumps(value, **kwargs) == json.dumps(value, **kwargs)


@pytest.mark.parametrize("value", [{1: "int key"}, {"s": {1, 2}}, [float("inf")], {"a": object()}, [float("nan")]])
def test_lean_json_dumps_what_json_dumps_or_raises_what_it_raises(value: object) -> None:
    import json

    for kwargs in ({}, {"indent": 2}, {"allow_nan": False}, {"ensure_ascii": False, "separators": (",", ":")}):
        try:
            expected: object = json.dumps(value, **kwargs)  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            expected = (type(exc), str(exc))
        try:
            got: object = lean.json.dumps(value, **kwargs)  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            got = (type(exc), str(exc))
        assert got == expected


_TEXTS: list[str | bytes] = [
    '{"a": 1}', ' \n\t{"a": [1, 2.5e3, -0, true, false, null, "\\u00e9\\ud83d\\ude00"]} \r\n', "[]", "0", '"x"',
    "NaN", "[-Infinity, Infinity]", "", " ", '{"a": 1} x', '{"a": 1}{', "[1,]", '{"a" 1}', "\ufeff{}", '"\\ud800"',
    '"tab\there"', "[" * 5 + "]" * 5, "1 2", '{"a": 1, "a": 2}', "\u00a0{}",
    b'{"b": "\xc3\xa9"}', b"\xef\xbb\xbf{}", b'\xff\xfe{\x00}\x00', b"\x00{", b"{\x00}", b"\xff", b'"\xed\xa0\x80"', b"",
    b"  [1] ", b"[1] x", "x".encode(),
]


@pytest.mark.parametrize("text", _TEXTS)
def test_lean_json_loads_what_json_loads_or_raises_what_it_raises(text: str | bytes) -> None:
    import json

    def outcome(loads: Callable[[str | bytes], object]) -> object:
        try:
            return ("value", repr(loads(text)))
        except (ValueError, TypeError) as exc:
            return (type(exc), str(exc))

    assert outcome(lean.json.loads) == outcome(json.loads)


@pytest.mark.parametrize(("text", "at"), [('{"a": 1} tail', 0), ('  [1, {"b": 2}]x', 2), ("[1", 0), ("x", 0),
                                          ('"s"', 1), ('{"a": 1}', 9)])
def test_lean_raw_decode_is_json_decoders(text: str, at: int) -> None:
    import json

    def outcome(decode: Callable[[str, int], object]) -> object:
        try:
            return decode(text, at)
        except ValueError as exc:
            return (type(exc), str(exc))

    assert outcome(lean.raw_decode) == outcome(json.JSONDecoder().raw_decode)


def test_lean_json_has_the_rest_of_json() -> None:
    import json

    assert lean.json.JSONDecodeError is json.JSONDecodeError and lean.json.dumps([1], indent="\t") == "[\n\t1\n]"


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(alphabet=st.sampled_from('ab": ,\n\\{}[]\x00\x7fé\u2028'), max_size=12))
_ROW = st.dictionaries(st.text(alphabet=st.sampled_from('k": \\,\n{é'), max_size=4), _SCALAR, min_size=1, max_size=5)


@settings(max_examples=80 * SCALE)
@given(rows=st.lists(_ROW, max_size=6), key=st.one_of(st.none(), st.text(max_size=3)))
def test_rows_twice_is_the_compact_json_and_the_indented_text_as_a_json_string(
        rows: list[dict[str, object]], key: str | None) -> None:
    """Each string holding any of the characters the replaces look for: when `rows_twice` answers,
    it is json's two texts; it declines a row list it cannot tell apart (a string holding `": `)."""
    import json

    value: object = rows if key is None else {key: rows}
    both = lean.rows_twice(value)
    if both is None:
        assert not rows or any('": ' in json.dumps(s) for row in rows for s in [*row, *row.values()]
                               if isinstance(s, str))
        return
    assert tuple(b"".join(pieces).decode() for pieces in both) == (
        json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False),
        json.dumps(json.dumps(value, indent=2, ensure_ascii=False), ensure_ascii=False))


@pytest.mark.parametrize("value", [[], {"a": []}, [{}], [{"a": 1}, {}], [{"a": [1]}], [{"a": {}}], {"a": [{"b": 1}], "c": 1},
                                   {1: [{"a": 1}]}, [{1: 2}], [{"a": True}, 3], ({"a": 1},), [{"a": 1.0 + 0j}]])
def test_rows_twice_declines_what_is_not_rows_of_scalars(value: object) -> None:
    assert lean.rows_twice(value) is None


def test_rows_twice_refuses_a_number_that_is_not_finite_and_a_lone_surrogate_as_json_and_utf_8_do() -> None:
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        lean.rows_twice({"result": [{"a": float("nan")}]})
    with pytest.raises(UnicodeEncodeError):
        lean.rows_twice({"result": [{"a": "\ud800"}]})
