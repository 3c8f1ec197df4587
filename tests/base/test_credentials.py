"""The credential screen's cheap pre-test is a superset of what the plugins find: for every
pattern of every plugin it uses, text that the plugin reports passes the pre-test, so skipping
the import of detect-secrets never lets a credential through."""
from __future__ import annotations

import importlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SCALE
from majordomus.base import credentials


def _plugin(module: str, name: str) -> object:
    return getattr(importlib.import_module(module), name)()


@pytest.mark.parametrize(("module", "name"), credentials.PLUGINS, ids=[n for _, n in credentials.PLUGINS])
def test_every_text_a_plugin_reports_passes_the_pre_test(module: str, name: str) -> None:
    plugin = _plugin(module, name)

    @settings(max_examples=12 * SCALE)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        regex = data.draw(st.sampled_from(list(plugin.denylist)))  # type: ignore[attr-defined]
        found = data.draw(st.from_regex(regex))
        text = data.draw(st.text(max_size=10)) + found + data.draw(st.text(max_size=10))
        if any(True for _ in plugin.analyze_string(text)):  # type: ignore[attr-defined]
            assert credentials._MAY_HOLD.search(text), (name, text)
            assert credentials.credential_in(text) is not None

    check()


def test_anthropic_keys_are_found_by_kind() -> None:
    """detect-secrets has no plugin for Anthropic's keys: ours (credential_plugins.py) finds both
    kinds in the shape gitleaks matches, and the pre-test lets them through to it."""
    body = "x9Ab_-" * 15 + "Z7qAA"
    for prefix, kind in (("sk-ant-api03-", "Anthropic API Key"), ("sk-ant-admin01-", "Anthropic Admin API Key")):
        assert credentials.credential_in(f"export ANTHROPIC_API_KEY={prefix}{body}") == kind
        assert credentials.credential_in(f"{prefix}{body[:-10]}") is None  # too short: not a key
    assert credentials.credential_in("set ANTHROPIC_API_KEY=sk-ant-... in your shell") is None


def test_prose_is_not_a_credential() -> None:
    for text in ("use sqlite for the dep file", "see https://example.com/docs", "",
                 "rename knowledge_on_end to on_end", "the key lives in the vault under deploy/eu"):
        assert credentials.credential_in(text) is None, text


def test_keys_whose_slashes_break_every_long_run_are_still_found() -> None:
    """An AWS secret key and an Azure storage key are base64: `/` and `+` cut them into runs
    shorter than 15, so the pre-test needs their literals (hypothesis found the AWS one)."""
    aws = "awspw'" + "/".join(["0" * 14, "0" * 14, "0" * 10]) + "'"
    azure = "AccountKey=" + "/+".join(["a" * 12] * 7) + "=="
    for text in (aws, azure):
        assert re.search(r"[\w\-]{15,}", text) is None, text
        assert credentials.credential_in(text) is not None, text
