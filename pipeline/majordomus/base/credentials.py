"""Credentials in free text: the kind of the first one found, never the secret itself.

A decision, a question, an answer, a finish reason, a verification command, promotion evidence,
a branch name or a hook's close reason ends up in a tracked, pushed record, so a text carrying a
private key block, a cloud or forge token, a password in a URL or a secret assigned to a variable
is refused where it is written (or, where nothing may be refused, a hook's payload, withheld:
`withheld`). The detection is detect-secrets' whole plugin set and ours for what it lacks
(`credential_plugins.py`, which says which two are left out and why).

Importing detect-secrets costs about 200 ms (it brings `requests`), more than a writer should pay
for a sentence and far more than a hook may. `_MAY_HOLD` is a superset of what those plugins
match, read off their patterns: the literal each token-shaped plugin needs (`PRIVATE KEY`,
`PuTTY`, `://`, `_authToken`, `eyJ`, Slack's `xox`, Azure's `AccountKey=`, Artifactory's `AKC` and
`AP`, AWS's key id prefixes, GitHub's and GitLab's prefixes, Stripe's `k_live_`, SendGrid's `SG.`,
Square's `sq0csp-`, OpenAI's `T3BlbkFJ`, `pypi-`, Mailchimp's `-us` and a digit, a Telegram bot
token's 8 digits and colon, Twilio's `AC`/`SK` and 32 characters, a Discord token's first part
and dot, ours: `sk-ant-`, `github_pat_`, `AIza`), AWS's `aws` before a secret key, a keyword the
keyword-bound plugins need (`key`, `pass`, `pw`, `secret`, `token`, `credential`, `contras`…)
where they need it (before an assignment, a comparison, a call or a quote, or a space and 24
letters and digits: IBM's and Cloudant's), or a quote before 20 characters of the entropy plugin's
set (base64's, the URL-safe `-` and `_`, and the backslash its set holds too) of which one is not a
lowercase hex digit, a dash or a backslash: the entropy plugin reads quoted strings only, 4.5 bits
take 23 distinct characters, and those 18 give 4.17 at most, so a quoted commit sha or UUID (in
every session record) never wakes detect-secrets. The property tests in
tests/base/test_credentials.py draw every pattern of every plugin and check it. A branch name
(`fix/api-key-rotation-2`), a close reason (`prompt_input_exit`), a session id (a UUID), a record
id, a commit sha, a path or a sentence of prose holds none of them, so a hook, or `knowledge check`
over thousands of records, pays nothing for them.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

# compiled at its first use (`_may_hold`), not at import: a reader that screens nothing pays nothing
_MAY_HOLD = (
    r"PRIVATE KEY|PuTTY|://|_authToken|eyJ|(?i:xox)|AccountKey=|AKC|AP[\dA-F]|sk-ant-|github_pat_|AIza"
    r"|gh[pousr]_|gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941|[rs]k_live_|SG\.|\d{8}:"
    r"|A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA|(?:AC|SK)[a-z0-9]{32}|-us\d|[MNO][\w\-]{23,25}\.|sq0csp-|T3BlbkFJ|pypi-"
    r"|(?i:aws)|(?i:key|pass|pw|secret|token|credential|contras)(?:[\w.\-]*[\]'\"]{0,2}\s*[:=!(]"
    r"|\S{0,50}\s*['\"`]|[\w.\-]*['\"\]]{0,2} +[\w\-]{24})|[!=]=\s*\w*(?i:key|pass|pw|secret|token|contras)"
    r"|[\"'`](?=[\w+/=\\\-]{20})[0-9a-f\\\-]*[g-zA-Z_+/=]")

_DETECTORS: list[tuple[str, Callable[[str], bool]]] = []
_COMPILED: list[re.Pattern[str]] = []


def _may_hold() -> re.Pattern[str]:
    if not _COMPILED:
        _COMPILED.append(re.compile(_MAY_HOLD))
    return _COMPILED[0]


def _detectors() -> list[tuple[str, Callable[[str], bool]]]:
    if not _DETECTORS:  # only after the pre-test: the plugins import detect-secrets
        import importlib

        _DETECTORS.extend(importlib.import_module("majordomus.base.credential_plugins").detectors())
    return _DETECTORS


# The literals of `_MAY_HOLD` a word of lowercase letters, `-` and `_` alone can hold (`_plain`)
_WORDS_MAY_HOLD = ("aws", "xox", "sk-ant-", "github_pat_", "k_live_", "pypi-")


def _plain(text: str) -> bool:
    """Whether `text` is a word `_MAY_HOLD` cannot match, told without compiling it (~1 ms, which a
    hook would pay to screen a close reason, a source or a branch name): lowercase ASCII letters,
    `-` and `_` alone, holding none of the literals such a word can. Every other alternative needs
    a capital, a digit, a space, a quote or one of `.:=!(`; the keywords' need one of those after
    them. `gh[pousr]_` and `gl…-` are ruled out wholesale: `gh` with a `_`, `gl` with a `-`."""
    if not (text.isascii() and text.replace("-", "a").replace("_", "a").isalpha() and text.islower()):
        return False
    if ("gh" in text and "_" in text) or ("gl" in text and "-" in text):
        return False
    return not any(word in text for word in _WORDS_MAY_HOLD)


def credential_in(text: str | None) -> str | None:
    """The kind of the first credential in `text` ("AWS Access Key", "Private Key", ...), or None."""
    if not text or _plain(text) or not _may_hold().search(text):
        return None
    for kind, found in _detectors():
        if found(text):
            return kind
    return None


def identity() -> bytes:
    """What the screen is, for a cache of its answers (`knowledge.leaks.Screen`): this module's and
    the plugins' bytes (the pre-test, the patterns, the filters) and detect-secrets' version file,
    found without importing it. Any change to them is another screen, which no answer kept by
    this one may stand in for."""
    import importlib.util

    here = Path(__file__)
    found = [here, here.with_name("credential_plugins.py")]
    spec = importlib.util.find_spec("detect_secrets")
    if spec is not None and spec.origin:
        found.append(Path(spec.origin).with_name("__version__.py"))
    parts = []
    for path in found:
        try:
            parts.append(path.read_bytes())
        except OSError:
            parts.append(b"")
    return b"\0".join(parts)


def joined(*texts: str | None) -> str:
    """The text a record makes of several pieces (a question and its answer), to be screened
    whole: the pieces side by side, and their first lines side by side as a title joins them, so
    a credential split across them is found as the record would carry it."""
    pieces = [t for t in texts if t]
    firsts = [next((ln.strip() for ln in t.splitlines() if ln.strip()), "") for t in pieces]
    return " ".join(pieces) + "\n" + " ".join(firsts)


def withheld(text: str | None) -> str | None:
    """`text` as a tracked file may carry it: unchanged, or, when it holds a credential, a note
    that it was withheld and of what kind (for what no one may be refused: a hook's payload, a
    branch name)."""
    kind = credential_in(text)
    return text if kind is None else f"(withheld: it carries a credential, {kind})"


def refusal(what: str, kind: str) -> str:
    """The one line a writer refuses with: the kind of secret, never the secret."""
    return (f"{what} refused: it carries a credential ({kind}), and records are tracked and pushed; "
            "nothing was written: remove it and say where the secret is kept instead")
