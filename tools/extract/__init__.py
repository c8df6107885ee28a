"""Turning fetched bytes (HTML, PDF, plain text) into clean text, shared by the browser, indexer and read_file."""
