"""Compiled grammars kept on disk for the next process.

Each `deepresearch ask` is a new process, and two pieces of xgrammar's work are the same every time:
the tokenizer's info (~0.2 s to build from the vocabulary) and the planner's compiled schema (~0.5 s:
its query pattern compiles to a large automaton). Read back they take ~25 and ~10 ms. Files are keyed by
xgrammar's version, the tokenizer file and the schema; only schemas whose compile took at least
`min_compile_s` are written, since an extractor's schema lists one page's sentences, is new on every
call and compiles in milliseconds. Every failure to read or write is a miss: the work is done as
without a store.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import xgrammar as xgr

from ..disk_store import keep_newest, replace_atomically

GRAMMAR_STORE_DIR_NAME = "grammar-cache"
GRAMMAR_STORE_LIMIT = 16  # compiled grammars kept (~0.6 MB each); the least recently written go first
MIN_COMPILE_S = 0.05

log = logging.getLogger(__name__)


class GrammarStore:
    def __init__(self, directory: Path, tokenizer_file: Path, vocab_size: int, min_compile_s: float = MIN_COMPILE_S):
        self.directory = Path(directory)
        self.min_compile_s = min_compile_s
        stat = Path(tokenizer_file).stat()
        self._identity = (f"xgrammar {version('xgrammar')}:{Path(tokenizer_file).resolve()}:{stat.st_size}:"
                          f"{stat.st_mtime_ns}:{vocab_size}")
        self.loaded = 0  # grammars read back (tests and benchmarks look)

    def _path(self, kind: str, key: str) -> Path:
        digest = hashlib.sha256(f"{self._identity}\0{kind}\0{key}".encode()).hexdigest()[:32]
        return self.directory / f"{kind}-{digest}.json"

    def tokenizer_info(self, build: Callable[[], xgr.TokenizerInfo]) -> xgr.TokenizerInfo:
        path = self._path("tokenizer", "")
        text = self._read(path)
        if text is not None:
            try:
                return xgr.TokenizerInfo.deserialize_json(text)
            except Exception as exc:  # xgrammar raises RuntimeError/ValueError on a bad or foreign file
                log.warning("ignoring unreadable grammar cache file %s: %s", path, exc)
        info = build()
        self._write(path, info.serialize_json())
        return info

    def load(self, schema_key: str, info: xgr.TokenizerInfo) -> xgr.CompiledGrammar | None:
        path = self._path("schema", schema_key)
        text = self._read(path)
        if text is None:
            return None
        try:
            compiled = xgr.CompiledGrammar.deserialize_json(text, info)
        except Exception as exc:
            log.warning("ignoring unreadable grammar cache file %s: %s", path, exc)
            return None
        self.loaded += 1
        return compiled

    def save(self, schema_key: str, compiled: xgr.CompiledGrammar, compile_s: float) -> None:
        if compile_s >= self.min_compile_s:
            self._write(self._path("schema", schema_key), compiled.serialize_json())

    @staticmethod
    def _read(path: Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("ignoring unreadable grammar cache file %s: %s", path, exc)
            return None

    def _write(self, path: Path, text: str) -> None:
        try:
            replace_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
            keep_newest(self.directory, "schema-*.json", GRAMMAR_STORE_LIMIT)
        except OSError as exc:
            log.warning("cannot write the grammar cache in %s: %s", self.directory, exc)
