"""Credentials in free text: the kind of the first one found, never the secret itself.

A decision, a question, an answer, a finish reason, a verification command or promotion
evidence ends up in a tracked, pushed record, so a text carrying a private key block, a cloud or
forge token or a password in a URL is refused where it is written. The detection is
detect-secrets' own plugins (well kept, one per kind of credential), not a hand list; only the
plugins that match a credential's shape are used, not the entropy or keyword guesses, which a
sentence of prose sets off. For a kind detect-secrets has no plugin for (Anthropic's API and
Admin API keys), ours are written the way it takes a custom plugin (`credential_plugins.py`).

Importing detect-secrets costs about 150 ms (it brings `requests`), more than a writer should pay
for a sentence. `_MAY_HOLD` is a superset of what those plugins match, read off their patterns:
a literal a plugin needs (`PRIVATE KEY`, `PuTTY`, `://`, `_authToken`, `eyJ`, Slack's `xox`, AWS's
`aws` before a secret key, whose `/` and `+` break a run, Azure's `AccountKey=`) or a
run of 15 word characters or dashes (Unicode's, as the plugins' digit class is), which every other
token-shaped credential has (the shortest, an AWS access key id, is 20). A text without any of them holds no credential those plugins would find,
and is passed without the import. No hook calls this module.
"""
from __future__ import annotations

import re
from typing import Any

_MAY_HOLD = re.compile(r"PRIVATE KEY|PuTTY|://|_authToken|eyJ|(?i:xox)|(?i:aws)|AccountKey=|[\w\-]{15,}")

# module, class: the shaped credentials (no entropy, keyword, IP or Artifactory guesses);
# detect-secrets' own, then ours for what it has no plugin for (credential_plugins.py)
_OWN = "majordomus.base.credential_plugins"
PLUGINS = (
    ("detect_secrets.plugins.private_key", "PrivateKeyDetector"),
    ("detect_secrets.plugins.aws", "AWSKeyDetector"),
    ("detect_secrets.plugins.azure_storage_key", "AzureStorageKeyDetector"),
    ("detect_secrets.plugins.github_token", "GitHubTokenDetector"),
    ("detect_secrets.plugins.gitlab_token", "GitLabTokenDetector"),
    ("detect_secrets.plugins.basic_auth", "BasicAuthDetector"),
    ("detect_secrets.plugins.slack", "SlackDetector"),
    ("detect_secrets.plugins.stripe", "StripeDetector"),
    ("detect_secrets.plugins.openai", "OpenAIDetector"),
    ("detect_secrets.plugins.pypi_token", "PypiTokenDetector"),
    ("detect_secrets.plugins.npm", "NpmDetector"),
    ("detect_secrets.plugins.jwt", "JwtTokenDetector"),
    ("detect_secrets.plugins.sendgrid", "SendGridDetector"),
    ("detect_secrets.plugins.twilio", "TwilioKeyDetector"),
    ("detect_secrets.plugins.discord", "DiscordBotTokenDetector"),
    ("detect_secrets.plugins.telegram_token", "TelegramBotTokenDetector"),
    ("detect_secrets.plugins.mailchimp", "MailchimpDetector"),
    ("detect_secrets.plugins.square_oauth", "SquareOAuthDetector"),
    (_OWN, "AnthropicApiKeyDetector"),
    (_OWN, "AnthropicAdminKeyDetector"),
)

_DETECTORS: list[Any] = []


def _detectors() -> list[Any]:
    if not _DETECTORS:
        import importlib

        for module, name in PLUGINS:
            plugin = getattr(importlib.import_module(module), name)
            _DETECTORS.append(plugin())
    return _DETECTORS


def credential_in(text: str | None) -> str | None:
    """The kind of the first credential in `text` ("AWS Access Key", "Private Key", ...), or None."""
    if not text or not _MAY_HOLD.search(text):
        return None
    for detector in _detectors():
        for _ in detector.analyze_string(text):
            return str(detector.secret_type)
    return None


def refusal(what: str, kind: str) -> str:
    """The one line a writer refuses with: the kind of secret, never the secret."""
    return (f"{what} refused: it carries a credential ({kind}), and records are tracked and pushed; "
            "nothing was written: remove it and say where the secret is kept instead")
