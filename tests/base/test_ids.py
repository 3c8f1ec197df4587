"""base/ids.py's SHA-256, taken from the interpreter's own module rather than hashlib's OpenSSL:
the same digests, so record ids and hand-edit digests do not change."""
from __future__ import annotations

import hashlib
import re

from hypothesis import given
from hypothesis import strategies as st

from majordomus.base.ids import ID_PATTERN, sha256_hex


@given(st.binary(max_size=4096))
def test_sha256_hex_is_hashlibs(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_sha256_hex_of_a_record_ids_blob() -> None:
    blob = '["e1","decision","use sqlite for the dep file"]'.encode("utf-8")
    assert sha256_hex(blob) == hashlib.sha256(blob).hexdigest()
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


_COMPILED = re.compile(ID_PATTERN.pattern)
_NEAR = ["a", "A", "0", "a" * 128, "a" * 129, "a" * 127 + "\n", "e1\n", "\n", "", ".a", "-a", "_a", "a.b-c_d",
         "a..b", "a/b", "a b", "\u00e9", "a\u00e9", "\uff21", "a\u0661", "\u0661", "a\x00", "Z9", "a\t", "a\r",
         "\U0001d7d8", "a\u00b2", "\u00b2", "ß", "a-", "a.", "K\u212a", "\u212a"]


@given(st.text(alphabet=st.sampled_from("aZ09._- \n\u00e9\u0661\u00b2/\x00"), max_size=140) | st.text(max_size=20))
def test_an_id_is_what_the_pattern_matches(value: str) -> None:
    assert bool(ID_PATTERN.match(value)) == bool(_COMPILED.match(value))


def test_an_id_at_the_edges_is_what_the_pattern_matches() -> None:
    assert [bool(ID_PATTERN.match(v)) for v in _NEAR] == [bool(_COMPILED.match(v)) for v in _NEAR]
    assert ID_PATTERN.match("a" * 128) and not ID_PATTERN.match("e1\n") and not ID_PATTERN.match("\u0661")
