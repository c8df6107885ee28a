"""Mask secrets in a settings snapshot before it is stored or shown.

Settings declare keys as `SecretStr`, which already dumps as "**********"; this is the second wall, for
snapshots built by hand (evals, training rollouts, third-party callers) and for trace stores written
before keys were secret: any value under a key-like name is masked on the way in and on the way out.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "**********"
_SECRET_NAME = re.compile(r"(?:^|_)(?:api_?key|secret|password|access_token|auth_token|bearer)$", re.IGNORECASE)


def redact_secrets(value: Any) -> Any:
    """A copy of `value` with every non-empty string under a secret-looking key replaced by MASK."""
    if isinstance(value, dict):
        return {
            key: MASK if _is_secret(key, item) else redact_secrets(item) for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_secrets(item) for item in value]
    return value


def _is_secret(key: object, value: Any) -> bool:
    return isinstance(key, str) and _SECRET_NAME.search(key) is not None and isinstance(value, str) and value != ""
