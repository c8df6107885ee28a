"""Mask secrets in a settings snapshot before it is stored or shown.

Settings declare keys as `SecretStr`, which already dumps as "**********"; this is the second wall, for
snapshots built by hand (evals, training rollouts, third-party callers) and for trace stores written
before keys were secret: any value under a key-like name is masked on the way in and on the way out.
A key can also ride inside an address (`model.base_url = http://user:sk-…@host/v1`, `…?key=…`): in every
string, the credentials of each URL (its user info, and query values under key-like names) are masked too.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MASK = "**********"
_SECRET_NAME = re.compile(r"(?:^|_)(?:api_?key|secret|password|access_token|auth_token|bearer)$", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
# Query parameters that carry keys: ?key= (Google), ?api-key=, ?token=, ?access_token=, ?sig= (signed URLs), …
_SECRET_PARAM = re.compile(
    r"(?:^|[_-])(?:key|api_?key|apikey|token|secret|password|passwd|pwd|auth|sig|signature|credentials?)$",
    re.IGNORECASE)


def redact_secrets(value: Any) -> Any:
    """A copy of `value` with every non-empty string under a secret-looking key replaced by MASK, and the
    credentials of every URL in the other strings masked."""
    if isinstance(value, dict):
        return {
            key: MASK if _is_secret(key, item) else redact_secrets(item) for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_secrets(item) for item in value]
    if isinstance(value, str):
        return redact_urls(value)
    return value


def redact_urls(text: str) -> str:
    """`text` with the credentials of each URL in it masked: `http://user:sk-1@h/v1?key=k&n=2` becomes
    `http://**********@h/v1?key=**********&n=2`. For messages and settings that show an address."""
    if "://" not in text:
        return text
    return _URL.sub(lambda match: _redact_url(match.group()), text)


def _redact_url(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL urllib can read (e.g. a bad IPv6 literal): mask any user info by hand
        return re.sub(r"(://)[^/@]*@", rf"\1{MASK}@", url)
    netloc = f"{MASK}@{parts.netloc.rsplit('@', 1)[1]}" if "@" in parts.netloc else parts.netloc
    query = "&".join(_redact_param(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _redact_param(pair: str) -> str:
    name, equals, value = pair.partition("=")
    return f"{name}={MASK}" if equals and value and _SECRET_PARAM.search(name) else pair


def _is_secret(key: object, value: Any) -> bool:
    return isinstance(key, str) and _SECRET_NAME.search(key) is not None and isinstance(value, str) and value != ""
