"""The credential screen's cheap pre-test is a superset of what the plugins find: for every
pattern of every plugin it uses, text that the plugin reports passes the pre-test, so skipping
the import of detect-secrets never lets a credential through."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SCALE
from majordomus.base import credential_plugins, credentials


def _shaped() -> dict[str, type]:
    """Every plugin with patterns the screen uses: detect-secrets' whole set but the two it leaves
    out and the two heuristic ones (tested below), and ours."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    found = {kind: cls for kind, cls in get_mapping_from_secret_type_to_class().items()
             if kind not in credential_plugins.LEFT_OUT and issubclass(cls, RegexBasedDetector)}
    found.update({c.secret_type: c for c in credential_plugins.OURS})
    return found


SHAPED = _shaped()


@pytest.mark.parametrize("name", sorted(SHAPED))
def test_every_text_a_plugin_reports_passes_the_pre_test(name: str) -> None:
    plugin = SHAPED[name]()

    @settings(max_examples=12 * SCALE)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        regex = data.draw(st.sampled_from(list(plugin.denylist)))  # type: ignore[attr-defined]
        found = data.draw(st.from_regex(regex))
        text = data.draw(st.text(max_size=10)) + found + data.draw(st.text(max_size=10))
        if any(True for _ in plugin.analyze_string(text)):  # type: ignore[attr-defined]
            assert credentials._may_hold().search(text), (name, text)
            assert credentials.credential_in(text) is not None

    check()


def test_the_whole_plugin_set_is_used() -> None:
    """Every kind detect-secrets registers is screened for, but the two left out (with why)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    used = {kind for kind, _ in credentials._detectors()}
    assert set(get_mapping_from_secret_type_to_class()) - set(credential_plugins.LEFT_OUT) <= used
    assert {"Secret Keyword", "Base64 High Entropy String", "Google API Key", "Anthropic OAuth Token",
            "GitHub Fine-Grained Token", "Secret Assignment"} <= used


@settings(max_examples=60 * SCALE)
@given(name=st.from_regex(r"(?:cloudant_|ibm_cloud_|softlayer_|cl|sl|[A-Za-z_]{0,6})"
                          r"(?i:secret|password|passwd|pwd|api_key|token|key|credentials)[A-Za-z_.]{0,6}",
                          fullmatch=True),
       value=st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+", min_size=8, max_size=70),
       quote=st.sampled_from(["", "'", '"']), gap=st.sampled_from(["=", " = ", ": ", ":=", " => ", " ", "  "]))
def test_the_heuristic_plugins_hits_pass_the_pre_test(name: str, value: str, quote: str, gap: str) -> None:
    """The keyword-bound plugins (the keyword plugin, ours for assignments, Cloudant's, IBM's,
    SoftLayer's) read a secret-named variable, and the entropy plugin a quoted string: whatever
    they find, in every form they read, the pre-test passes on to them."""
    for text in (f"{name}{gap}{quote}{value}{quote}", f"use {quote}{value}{quote} here",
                 f'"{value}" == {name}', f'{name}("{value}")', f"{name}{quote} {quote}{value}{quote};"):
        if any(f(text) for _, f in credentials._detectors()):
            assert credentials._may_hold().search(text), text


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


ENTROPY_SET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/\\-_="


@settings(max_examples=60 * SCALE)
@given(value=st.text(ENTROPY_SET, min_size=20, max_size=60), quote=st.sampled_from(["'", '"']),
       before=st.text(max_size=8))
def test_every_quoted_string_the_entropy_plugin_reports_passes_the_pre_test(value: str, quote: str,
                                                                            before: str) -> None:
    """The entropy plugin's set holds the backslash, `-`, `_` and `=` too: a high-entropy quoted
    string holding any of them anywhere is passed on to it."""
    text = f"{before}{quote}{value}{quote}"
    if credentials.credential_in(text) or any(f(text) for _, f in credentials._detectors()):
        assert credentials._may_hold().search(text), text


def test_a_backslash_in_a_quoted_secret_no_longer_hides_it() -> None:
    """Before, the pre-test wanted 20 base64 characters after the quote with no backslash among
    them, and this string passed unscreened."""
    assert credentials.credential_in('x = "q8Zr\\Tn4WpX2Lk9Vb7MhYc3Fs6Jd1Ge5Ua0Ro"') == "Base64 High Entropy String"


@pytest.mark.parametrize("text", ['head: "1b800be4a7c3f0e9d8b7a6c5d4e3f2a1b0c9d8e7"',
                                  "session '123e4567-e89b-12d3-a456-426614174000' closed",
                                  'base_sha: "1b800be4a7c3f0e9d8b7a6c5d4e3f2a1b0c9d8e7"\nopened: "2025-01-01"'])
def test_a_quoted_sha_or_uuid_does_not_wake_the_detectors(text: str) -> None:
    """Lowercase hex, dashes and backslashes are 18 characters: 4.17 bits at most, under the
    entropy plugin's 4.5, so a session record's quoted shas and ids pass the pre-test untouched."""
    assert not credentials._may_hold().search(text)


# the pieces `_MAY_HOLD`'s alternatives begin with, as a word of lowercase letters, `-` and `_` can
# spell them: drawn among letters, each must either be matched or stop `_plain` from passing the word
_PIECES = ["aws", "xox", "sk-ant-", "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "rk_live_",
           "sk_live_", "pypi-", "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-",
           "glagent-", "gloas-", "key", "pass", "pw", "secret", "token", "credential", "contras", "-us"]


@settings(max_examples=200 * SCALE)
@given(parts=st.lists(st.one_of(st.text("abcdefghijklmnopqrstuvwxyz-_", max_size=8), st.sampled_from(_PIECES)),
                      max_size=6))
def test_a_plain_word_is_one_the_pre_test_never_matches(parts: list[str]) -> None:
    """`_plain` passes a word (a close reason, a source, a branch) without compiling the pre-test:
    only where the pre-test could not match it."""
    text = "".join(parts)
    if credentials._plain(text):
        assert not credentials._may_hold().search(text), text


def test_the_words_a_hook_screens_are_plain_and_the_literals_are_not() -> None:
    for word in ("other", "startup", "resume", "clear", "compact", "fork", "late-end", "logout", "main",
                 "prompt_input_exit", "bypass_permissions_disabled"):
        assert credentials._plain(word) and credentials.credential_in(word) is None, word
    for word in [*_PIECES[:22], "Other", "trunk2", "fix/x", "a b", "-_"]:
        assert not credentials._plain(word), word
