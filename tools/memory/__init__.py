"""Long-term memory: `remember` / `recall` over a persistent Chroma collection (offline MiniLM)."""
