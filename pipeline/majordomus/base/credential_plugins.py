"""The screen's detectors: detect-secrets' whole plugin set, and ours for what it has no plugin for.

Every plugin detect-secrets registers is used (its own mapping of kinds to classes, so a plugin a
later release adds is used too), with two left out and why (`LEFT_OUT`), and the two heuristic
ones kept to what they do well: the keyword plugin as detect-secrets runs it on a line of prose
(a value in quotes after `password=`, `api_key:` …), the base64 entropy plugin on quoted strings
over its own 4.5-bit limit, each hit passed through detect-secrets' own false-positive filters.

Ours are `RegexBasedDetector`s, the way detect-secrets takes a custom plugin (`detect-secrets scan
--plugin pipeline/majordomus/base/credential_plugins.py` finds them too). Shapes are gitleaks':
Anthropic keys and OAuth tokens (`sk-ant-api03-`, `sk-ant-admin01-`, `sk-ant-oat01-`,
`sk-ant-ort01-`; Anthropic publishes only the `sk-ant-` prefix), GitHub's fine-grained tokens
(`github_pat_`), Google API keys (`AIza`); and an unquoted assignment to a secret-named variable
(`AWS_SECRET_ACCESS_KEY=…`), whose value must look random (detect-secrets' entropy measure over 3
bits, no reference or template), so `token_limit=4096` or `password: see the vault` pass.

This module imports detect-secrets at its top: only `credentials._detectors` loads it, after the
cheap pre-test, so a hook pays for it only when a text it writes looks like a credential.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Generator, Mapping

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

_BODY = r"[A-Za-z0-9_\-]{93}AA"

# kind -> why it is not used: neither is a credential's shape
LEFT_OUT = {
    "Hex High Entropy String": "a commit sha is one (decisions quote them), and a hex secret is "
                               "indistinguishable from a sha",
    "Public IP (ipv4)": "an address is not a credential",
}


class AnthropicApiKeyDetector(RegexBasedDetector):
    """An Anthropic API key: `sk-ant-api03-…`."""

    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"sk-ant-api[0-9]{2}-" + _BODY),)


class AnthropicAdminKeyDetector(RegexBasedDetector):
    """An Anthropic Admin API key: `sk-ant-admin01-…`."""

    secret_type = "Anthropic Admin API Key"
    denylist = (re.compile(r"sk-ant-admin[0-9]{2}-" + _BODY),)


class AnthropicOAuthTokenDetector(RegexBasedDetector):
    """An Anthropic OAuth access or refresh token (Claude Code's login): `sk-ant-oat01-…`."""

    secret_type = "Anthropic OAuth Token"
    denylist = (re.compile(r"sk-ant-o[ar]t[0-9]{2}-[A-Za-z0-9_\-]{40,}"),)


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    """A GitHub fine-grained personal access token: `github_pat_` and 82 word characters."""

    secret_type = "GitHub Fine-Grained Token"
    denylist = (re.compile(r"github_pat_[A-Za-z0-9_]{82}"),)


class GoogleApiKeyDetector(RegexBasedDetector):
    """A Google (GCP, Firebase, Maps …) API key: `AIza` and 35 characters."""

    secret_type = "Google API Key"
    denylist = (re.compile(r"AIza[0-9A-Za-z_\-]{35}"),)


_NAMED = r"[A-Za-z0-9_.\-]*(?i:secret|passw(?:or)?d|pwd|token|api_?key|access_?key|auth_?key|private_?key|credentials?)"
_ENTROPY = Base64HighEntropyString()


class AssignedSecretDetector(RegexBasedDetector):
    """`NAME=value` or `NAME: value` where NAME names a secret and value looks random."""

    secret_type = "Secret Assignment"
    denylist = (re.compile(_NAMED + r"[A-Za-z0-9_.\-]*\s*[:=]\s*['\"]?([^\s'\"`,;]{8,})"),)

    def analyze_string(self, string: str) -> Generator[str, None, None]:
        for value in super().analyze_string(string):
            if (re.search(r"[$<>{}()\[\]%]", value) or re.fullmatch(r"[A-Za-z_][\w.]*\.[\w.]+|[A-Z_]+", value)
                    or heuristic.is_sequential_string(value)
                    or _ENTROPY.calculate_shannon_entropy(value) <= 3.0):
                continue
            yield value


OURS = (AnthropicApiKeyDetector, AnthropicAdminKeyDetector, AnthropicOAuthTokenDetector,
        GitHubFineGrainedTokenDetector, GoogleApiKeyDetector, AssignedSecretDetector)


def _likely_false(value: str, text: str) -> bool:
    """detect-secrets' own filters for its heuristic plugins' hits."""
    return (heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_sequential_string(value) or heuristic.is_potential_uuid(value)
            or heuristic.is_indirect_reference(text))


def _entropy(plugin: Base64HighEntropyString) -> Callable[[str], bool]:
    def found(text: str) -> bool:
        return any(plugin.calculate_shannon_entropy(value) > plugin.entropy_limit
                   and not _likely_false(value, text) for value in plugin.analyze_string(text))
    return found


def _filtered(plugin: BasePlugin) -> Callable[[str], bool]:
    def found(text: str) -> bool:
        return any(not _likely_false(value, text) for value in plugin.analyze_string(text))
    return found


def _shaped(plugin: BasePlugin) -> Callable[[str], bool]:
    def found(text: str) -> bool:
        return any(True for _ in plugin.analyze_string(text))
    return found


def detectors() -> list[tuple[str, Callable[[str], bool]]]:
    """(kind, whether `text` holds one) for every plugin used: detect-secrets' shaped ones in its
    own order, ours, then the two heuristic ones (a shaped kind names a hit better)."""
    shaped, heuristics = [], []
    mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    for kind, plugin_class in mapping.items():
        if kind in LEFT_OUT:
            continue
        plugin = plugin_class()
        if isinstance(plugin, Base64HighEntropyString):
            heuristics.append((kind, _entropy(plugin)))
        elif not isinstance(plugin, RegexBasedDetector):  # the keyword plugin
            heuristics.append((kind, _filtered(plugin)))
        else:
            shaped.append((kind, _shaped(plugin)))
    ours = [(str(c.secret_type), _shaped(c())) for c in OURS]
    return shaped + ours + heuristics
