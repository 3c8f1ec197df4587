"""base/ids.py's SHA-256, taken from the interpreter's own module rather than hashlib's OpenSSL:
the same digests, so record ids and hand-edit digests do not change."""
from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from majordomus.base.ids import sha256_hex


@given(st.binary(max_size=4096))
def test_sha256_hex_is_hashlibs(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_sha256_hex_of_a_record_ids_blob() -> None:
    blob = '["e1","decision","use sqlite for the dep file"]'.encode("utf-8")
    assert sha256_hex(blob) == hashlib.sha256(blob).hexdigest()
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
