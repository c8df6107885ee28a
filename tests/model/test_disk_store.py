"""Files the engine keeps for the next process (disk_store): only the newest few are kept, and pruning
tolerates a concurrent writer that pruned first."""

from __future__ import annotations

import os
from pathlib import Path

from deepresearch.agent.model.embedded.disk_store import keep_newest, replace_atomically


def write_files(directory: Path, count: int) -> list[Path]:
    files = []
    for i in range(count):
        path = directory / f"schema-{i}.json"
        replace_atomically(path, lambda tmp, i=i: Path(tmp).write_text(str(i)))
        os.utime(path, ns=(i * 10**9, i * 10**9))  # file i is the i-th written
        files.append(path)
    return files


def test_only_the_newest_files_of_the_pattern_are_kept(tmp_path):
    files = write_files(tmp_path, 5)
    (tmp_path / "tokenizer-x.json").write_text("not pruned")
    keep_newest(tmp_path, "schema-*.json", 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schema-3.json", "schema-4.json", "tokenizer-x.json"]
    assert [p.exists() for p in files] == [False, False, False, True, True]
    assert not list(tmp_path.glob("*.tmp"))


def test_a_file_removed_between_listing_and_dating_is_skipped(tmp_path, monkeypatch):
    # Another run's keep_newest deleted this file after our listing saw it: dating it raised
    # FileNotFoundError, which the grammar store reported as "cannot write the grammar cache".
    write_files(tmp_path, 4)
    listed = Path.glob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: [*listed(self, pattern), self / "schema-gone.json"])
    keep_newest(tmp_path, "schema-*.json", 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schema-2.json", "schema-3.json"]
