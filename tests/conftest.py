"""Suite-wide: tests answer with the base model unless they opt in to the starter adapter.

A fresh data directory installs the packaged starter adapter (train/adapters/starter.py); most tests make a fresh data
directory and check what the plain model does, so the suite switches the install off here, for itself and the
commands it starts, and tests/train/test_starter.py switches it back on.
"""

import os

os.environ.setdefault("DEEPRESEARCH_MODEL__STARTER_ADAPTER", "false")
