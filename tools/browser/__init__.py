"""The `open` tool: fetch a URL (httpx fast path, Chromium when needed, PDF to text) behind SSRF guards."""
