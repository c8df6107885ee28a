"""The `python` tool: model-written code in bubblewrap with resource limits."""
