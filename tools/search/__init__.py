"""The `search` tool: a fallback chain of web and local backends with rate limits and a disk cache."""
