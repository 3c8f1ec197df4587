"""Our own detect-secrets plugins, for credentials detect-secrets has no plugin for.

Each is a `RegexBasedDetector`, the way detect-secrets takes a custom plugin (`detect-secrets
scan --plugin pipeline/majordomus/base/credential_plugins.py` finds them too). This module imports
detect-secrets at its top: only `credentials._detectors` loads it, after the cheap pre-test, so
no hook ever imports it.

Anthropic publishes no format for its keys beyond the `sk-ant-` prefix; the shape below is the
one gitleaks' rules (`anthropic-api-key`, `anthropic-admin-api-key`) match: the kind and its
version (`api03`, `admin01`), 93 characters of `[A-Za-z0-9_-]` and a closing `AA`. Any two-digit
version is taken, so the next one is refused too.
"""
from __future__ import annotations

import re

from detect_secrets.plugins.base import RegexBasedDetector

_BODY = r"[A-Za-z0-9_\-]{93}AA"


class AnthropicApiKeyDetector(RegexBasedDetector):
    """An Anthropic API key: `sk-ant-api03-…`."""

    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"sk-ant-api[0-9]{2}-" + _BODY),)


class AnthropicAdminKeyDetector(RegexBasedDetector):
    """An Anthropic Admin API key: `sk-ant-admin01-…`."""

    secret_type = "Anthropic Admin API Key"
    denylist = (re.compile(r"sk-ant-admin[0-9]{2}-" + _BODY),)
