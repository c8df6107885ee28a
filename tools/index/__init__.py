"""Local search index: SQLite FTS5 BM25, optionally fused with Chroma vectors."""
